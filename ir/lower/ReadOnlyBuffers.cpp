// Global buffers the lowered kernel never stores to, with st.global or a TMA store, are read-only:
// the CUDA backend may read them through the read-only data cache, and only written ones take part
// in the launcher's overlap checks.
#include <functional>

#include "ir/lower/LowerImpl.h"

namespace tyl::lower {

void KernelLowering::markReadOnlyBuffers() {
  std::function<void(const tir::Block&)> markWrites = [&](const tir::Block& b) {
    for (const tir::Stmt& s : b) {
      std::visit(
          [&](const auto& n) {
            using T = std::decay_t<decltype(n)>;
            if constexpr (std::is_same_v<T, tir::Store>) k_.buffers[n.dst.buffer].readOnly = false;
            if constexpr (std::is_same_v<T, tir::TmaStore>)
              k_.buffers[k_.params.at(static_cast<size_t>(k_.tensorMaps.at(n.map).param)).buffer].readOnly = false;
            if constexpr (std::is_same_v<T, tir::If>) {
              markWrites(n.then);
              markWrites(n.otherwise);
            }
            if constexpr (std::is_same_v<T, tir::For>) markWrites(n.body);
          },
          s.node);
    }
  };
  for (tir::Buffer& b : k_.buffers) b.readOnly = b.space == tir::Space::Global;
  markWrites(k_.body);
}

}  // namespace tyl::lower
