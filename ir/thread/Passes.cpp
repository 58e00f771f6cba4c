#include "ir/thread/Passes.h"

#include "ir/thread/HoistInvariants.h"
#include "ir/thread/LoopRemainders.h"

namespace tyl::tir {

void optimize(Module& m) {
  for (Kernel& k : m.kernels) {
    countLoopRemainders(k);
    hoistInvariants(k);
  }
}

}  // namespace tyl::tir
