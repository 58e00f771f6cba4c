// The bytes an arrive.expect_tx announces against the bytes its TMA copies deliver. A phase
// completes only when the two are equal, so a difference hangs the GPU. Where one block of
// statements holds both the arrive (with a constant count) and all the TMA copies completing on
// the same barrier, tyloc compares them: TMA delivers the whole box, zeros included, so a copy
// delivers its tile's bytes. Other arrangements (the count computed at run time, the arrive and
// the copies in different blocks) are left to the emulator, which reports the phase that never
// completes (emu-deadlock). A multicast copy with a constant mask counts once per block of its
// mask: every block of a cluster runs the same statements, so each issues its part and receives
// those of the others (an arrive on another block's barrier leaves the barrier to the emulator).
#include <fmt/format.h>

#include <bit>
#include <functional>
#include <tuple>

#include "ir/lower/LowerImpl.h"
#include "ir/thread/Builder.h"

namespace tyl::lower {

TYL_DIAG(kTmaExpectTx, Error, "tma-expect-tx",
         "an arrive.expect_tx whose byte count is not what the TMA copies completing on its barrier deliver");

namespace {

bool sameView(const tile::View& a, const tile::View& b) {
  if (a.tensor != b.tensor || a.origin.size() != b.origin.size()) return false;
  for (size_t i = 0; i < a.origin.size(); ++i)
    if (!tir::sameExpr(a.origin[i], b.origin[i])) return false;
  return true;
}

}  // namespace

std::string KernelLowering::barrierName(const tile::View& bar) const {
  int64_t index = 0;
  const std::string& name = tk_.tensors[bar.tensor].name;
  if (bar.origin.size() == 1 && tir::isIntConst(bar.origin[0], &index)) return fmt::format("{}[{}]", name, index);
  return fmt::format("an element of '{}'", name);
}

void KernelLowering::checkExpectTx(const tile::Block& block) {
  // Per barrier of this block: the arrives (their counts, when every one is constant) and the
  // TMA copies completing on it.
  struct Barrier {
    const tile::View* bar;
    SourceRange firstArrive;
    int64_t expected = 0;
    bool known = true;
    std::vector<std::tuple<SourceRange, int64_t, int>> copies;  // bytes landing here; the multicast's blocks
  };
  std::vector<Barrier> barriers;
  auto entry = [&](const tile::View& v) -> Barrier& {
    for (Barrier& b : barriers)
      if (sameView(*b.bar, v)) return b;
    return barriers.emplace_back(Barrier{&v, {}, 0, true, {}});
  };
  // A barrier that copies in nested blocks complete on too is left to the emulator.
  std::function<void(const tile::Block&)> nested = [&](const tile::Block& b) {
    for (const tile::Stmt& s : b) {
      if (const auto* copy = std::get_if<tile::Copy>(&s.node); copy && copy->barrier) entry(*copy->barrier).known = false;
      if (const auto* f = std::get_if<tile::For>(&s.node)) nested(f->body);
      if (const auto* i = std::get_if<tile::If>(&s.node)) {
        nested(i->then);
        nested(i->otherwise);
      }
    }
  };
  for (const tile::Stmt& s : block) {
    if (const auto* f = std::get_if<tile::For>(&s.node)) {
      checkExpectTx(f->body);
      nested(f->body);
    }
    if (const auto* i = std::get_if<tile::If>(&s.node)) {
      checkExpectTx(i->then);
      checkExpectTx(i->otherwise);
      nested(i->then);
      nested(i->otherwise);
    }
    if (const auto* arrive = std::get_if<tile::MbarrierOp>(&s.node);
        arrive && arrive->kind == tile::MbarrierOp::Kind::Arrive) {
      Barrier& b = entry(arrive->bar);
      if (!b.firstArrive.valid()) b.firstArrive = s.loc;
      int64_t bytes = 0;
      if ((arrive->value && !tir::isIntConst(arrive->value, &bytes)) || arrive->cta) b.known = false;
      b.expected += bytes;
    }
    if (const auto* copy = std::get_if<tile::Copy>(&s.node); copy && copy->barrier) {
      int64_t bytes = tile::dtypeBytes(tk_.tensors[copy->dst.tensor].dtype);
      for (int64_t e : copy->dst.shape) bytes *= e;
      int64_t ctas = 0;
      if (copy->multicast && !tir::isIntConst(copy->multicast, &ctas)) entry(*copy->barrier).known = false;
      const int blocks = copy->multicast ? std::popcount(static_cast<uint64_t>(ctas)) : 0;
      entry(*copy->barrier).copies.emplace_back(s.loc, copy->multicast ? bytes * blocks : bytes, blocks);
    }
  }
  for (const Barrier& b : barriers) {
    if (!b.known || !b.firstArrive.valid() || b.copies.empty()) continue;
    int64_t delivered = 0;
    for (const auto& c : b.copies) delivered += std::get<1>(c);
    if (delivered == b.expected) continue;
    DiagBuilder d = diags_.report(
        kTmaExpectTx, b.firstArrive,
        fmt::format("the arrives on {} in this block expect {} transaction bytes, but the {} TMA cop{} completing on "
                    "it deliver{} {}: the phase would never complete",
                    barrierName(*b.bar), b.expected, b.copies.size(), b.copies.size() == 1 ? "y" : "ies",
                    b.copies.size() == 1 ? "s" : "", delivered));
    for (const auto& [loc, bytes, blocks] : b.copies)
      d.note(loc, blocks ? fmt::format("this TMA multicast delivers {} bytes to each block: its tile, {} bytes, from each "
                                       "of the {} blocks of its mask",
                                       bytes, bytes / blocks, blocks)
                         : fmt::format("this TMA copy delivers {} bytes (its whole tile, zeros past the tensor's edges "
                                       "included)",
                                       bytes));
  }
}

}  // namespace tyl::lower
