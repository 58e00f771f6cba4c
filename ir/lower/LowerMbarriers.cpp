// mbarriers: init_barriers becomes, in the block's first thread, one mbarrier.init per barrier,
// then the fence that shows the inits to the asynchronous proxy and the cluster, and a barrier of
// the block (of the cluster, in a kernel with clusters: the other blocks may arrive on these
// barriers, or multicast to them, once it has passed); arrive and wait_barrier become the
// thread's own mbarrier.arrive (on another block's barrier with `cta`) and parity wait.
#include "ir/lower/LowerImpl.h"

namespace tyl::lower {

void KernelLowering::mbarrierOp(SourceRange loc, const tile::MbarrierOp& op) {
  const tile::Tensor& t = tk_.tensors[op.bar.tensor];
  switch (op.kind) {
    case tile::MbarrierOp::Kind::Init: {
      tir::Block inits;
      for (int64_t i = 0; i < t.staticShape[0]; ++i)
        inits.push_back(tir::Stmt{loc, tir::MbarrierInit{tir::MemRef{t.buffer, tir::intConst(i, tir::Type::I32)},
                                                        op.value}});
      const tir::ExprRef first = tir::binary(
          tir::BinOp::LAnd,
          tir::binary(tir::BinOp::Eq, tir::special(tir::Special::WarpId), tir::intConst(0, tir::Type::I32)),
          tir::binary(tir::BinOp::Eq, tir::special(tir::Special::LaneId), tir::intConst(0, tir::Type::I32)));
      emit(loc, tir::If{first, std::move(inits), {}});
      emit(loc, tir::FenceMbarrierInit{});
      emit(loc, tir::Barrier{k_.clusterSize() > 1});
      return;
    }
    case tile::MbarrierOp::Kind::Arrive:
      emit(loc, tir::MbarrierArrive{memRef(t, op.bar.origin), op.value, op.cta});
      return;
    case tile::MbarrierOp::Kind::Wait:
      emit(loc, tir::MbarrierWait{memRef(t, op.bar.origin), op.value});
      return;
  }
}

}  // namespace tyl::lower
