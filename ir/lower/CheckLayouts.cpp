// Layout checks on every tensor before lowering: each element must have its own place.
// A fragment layout that puts two elements in the same register slot of the same thread,
// or a memory layout that stores two elements at one offset, is an error with a witness.
#include <fmt/format.h>

#include "ir/layout/Analysis.h"
#include "ir/lower/LowerImpl.h"

namespace tyl::lower {

TYL_DIAG(kNonInjective, Error, "non-injective", "a layout that places two elements at the same place");

bool KernelLowering::checkLayouts() {
  bool ok = true;
  injective_.assign(tk_.tensors.size(), 0);
  for (size_t i = 0; i < tk_.tensors.size(); ++i) {
    const tile::Tensor& t = tk_.tensors[i];
    if (!t.layout) continue;
    // Slot views alias their fragment and are checked through it.
    if (t.space == tile::MemSpace::Local && t.name.size() > 5 && t.name.ends_with("_view")) continue;
    uint32_t axes = t.space == tile::MemSpace::Local ? ~0u : layout::axisBit(layout::Axis::m);
    std::optional<layout::Collision> c;
    try {
      c = layout::findCollision(*t.layout, t.staticShape, axes);
    } catch (const layout::Error&) {
      continue;  // too large to enumerate: nothing can be said
    }
    if (!c) {
      injective_[i] = 1;
      continue;
    }
    std::string where = layout::toString(c->where);
    diags_.report(kNonInjective, t.layoutLoc.valid() ? t.layoutLoc : t.loc,
                  fmt::format("non-injective {}: {} and {} both map to {}",
                              t.space == tile::MemSpace::Local ? "fragment layout" : "storage",
                              layout::shapeToString(c->first), layout::shapeToString(c->second), where))
        .note(t.loc, fmt::format("'{}' is {} here", t.name,
                                 t.space == tile::MemSpace::Global ? "declared" : "allocated"));
    ok = false;
  }
  return ok;
}

}  // namespace tyl::lower
