#include "ir/thread/Passes.h"

#include "ir/thread/HoistInvariants.h"
#include "ir/thread/LoopRemainders.h"
#include "ir/thread/Verify.h"

namespace tyl::tir {

void optimize(Module& m) {
  for (Kernel& k : m.kernels) {
    countLoopRemainders(k);
    verify(k, "after counting loop remainders");
    hoistInvariants(k);
    verify(k, "after hoisting invariants");
  }
}

}  // namespace tyl::tir
