#include "backend/emu/Warp.h"

namespace tyl::emu {

Warp::Warp(int index_, const tir::Kernel& kernel, const RegisterLayout& layout)
    : index(index_), live(0), regs(kernel, layout) {
  int64_t bx = kernel.block[0], by = kernel.block[1], threads = kernel.threadsPerBlock();
  for (int l = 0; l < kWarpSize; ++l) {
    int64_t t = thread(l);
    if (t < threads) live |= 1u << l;
    ids.tid[0][l] = static_cast<uint64_t>(t % bx);
    ids.tid[1][l] = static_cast<uint64_t>((t / bx) % by);
    ids.tid[2][l] = static_cast<uint64_t>(t / (bx * by));
    ids.laneId[l] = static_cast<uint64_t>(l);
    ids.warpId[l] = static_cast<uint64_t>(index);
  }
  frames.push_back(Frame{&kernel.body, 0, live});
}

}  // namespace tyl::emu
