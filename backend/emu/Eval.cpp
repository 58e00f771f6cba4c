#include "backend/emu/Eval.h"

#include "base/InternalError.h"

namespace tyl::emu {
namespace {

Lanes splat(uint64_t v) {
  Lanes r;
  r.fill(v);
  return r;
}

uint64_t constantBits(const tir::Expr& e) {
  if (e.kind == tir::ExprKind::FloatConst) return fromDouble(e.type, e.real);
  if (tir::isFloat(e.type)) return fromDouble(e.type, static_cast<double>(e.value));
  return canonical(e.type, static_cast<uint64_t>(e.value));
}

}  // namespace

Lanes Evaluator::special(tir::Special s) const {
  using tir::Special;
  switch (s) {
    case Special::NctaidX: return splat(static_cast<uint64_t>(ctx_.grid[0]));
    case Special::NctaidY: return splat(static_cast<uint64_t>(ctx_.grid[1]));
    case Special::NctaidZ: return splat(static_cast<uint64_t>(ctx_.grid[2]));
    case Special::SmCount: return splat(static_cast<uint64_t>(ctx_.options.smCount));
    default: break;
  }
  if (!ids_ || !blockIdx_)
    TYL_UNREACHABLE("{}", "emulator: a launch-time expression uses a thread's registers");
  switch (s) {
    case Special::TidX: return ids_->tid[0];
    case Special::TidY: return ids_->tid[1];
    case Special::TidZ: return ids_->tid[2];
    case Special::CtaidX: return splat(static_cast<uint64_t>((*blockIdx_)[0]));
    case Special::CtaidY: return splat(static_cast<uint64_t>((*blockIdx_)[1]));
    case Special::CtaidZ: return splat(static_cast<uint64_t>((*blockIdx_)[2]));
    case Special::LaneId: return ids_->laneId;
    case Special::WarpId: return ids_->warpId;
    case Special::SharedBase: return splat(static_cast<uint64_t>(kSharedWindowBase));
    case Special::ClusterRank: return splat(static_cast<uint64_t>(clusterRank_));
    default: break;
  }
  TYL_UNREACHABLE("{}", "emulator: unknown special register");
}

Lanes Evaluator::eval(const tir::ExprRef& ref, Mask mask, Mask* divByZero, Taint* taint) const {
  if (!ref) TYL_UNREACHABLE("{}", "emulator: missing expression");
  const tir::Expr& e = *ref;
  switch (e.kind) {
    case tir::ExprKind::IntConst:
    case tir::ExprKind::FloatConst: return splat(constantBits(e));
    case tir::ExprKind::ParamRef: {
      if (e.id >= ctx_.params.size())
        TYL_UNREACHABLE("{}", "emulator: parameter id out of range");
      if (ctx_.kernel.params[e.id].isPointer)
        TYL_UNREACHABLE("{}", "emulator: a pointer parameter used as a value: '" +
                               ctx_.kernel.params[e.id].name + "'");
      return splat(ctx_.params[e.id]);
    }
    case tir::ExprKind::SpecialReg:
      if (e.special == tir::Special::ElectOne) {
        // elect.sync picks one lane, which PTX leaves unspecified: the highest active one here,
        // so that a kernel relying on lane 0 shows it.
        Lanes r = splat(0);
        for (int l = kWarpSize - 1; l >= 0; --l)
          if (mask >> l & 1) {
            r[static_cast<size_t>(l)] = 1;
            break;
          }
        return r;
      }
      return special(e.special);
    case tir::ExprKind::VarRef:
    case tir::ExprKind::Elem: {
      if (!regs_) TYL_UNREACHABLE("{}", "emulator: a launch-time expression uses a register");
      tir::Reg reg = e.kind == tir::ExprKind::VarRef ? tir::Reg::var(e.id)
                                                     : tir::Reg::elem(e.id, e.index);
      if (taint) {
        Mask undefined = mask & ~regs_->defined(reg);
        if (undefined && !taint->first) taint->first = reg;
        if (undefined && !taint->origin) taint->origin = regs_->origin(reg);
        taint->undefined |= undefined;
      }
      return regs_->read(reg);
    }
    case tir::ExprKind::Binary: {
      Lanes a = eval(e.args[0], mask, divByZero, taint);
      Lanes b = eval(e.args[1], mask, divByZero, taint);
      return binaryOp(e.bin, e.args[0]->type, e.args[1]->type, a, b, mask, divByZero);
    }
    case tir::ExprKind::Unary: return unaryOp(e.un, e.type, eval(e.args[0], mask, divByZero, taint));
    case tir::ExprKind::Select: {
      Lanes c = eval(e.args[0], mask, divByZero, taint);
      // Both sides are evaluated for the lanes that pick them, so a division on the side a
      // lane does not take cannot report for it, nor an unwritten register taint it.
      Mask pickA = 0;
      for (int l = 0; l < kWarpSize; ++l)
        if (c[l]) pickA |= 1u << l;
      Lanes a = eval(e.args[1], mask & pickA, divByZero, taint);
      Lanes b = eval(e.args[2], mask & ~pickA, divByZero, taint);
      for (int l = 0; l < kWarpSize; ++l)
        if (!c[l]) a[l] = b[l];
      return a;
    }
    case tir::ExprKind::Cast: return convert(e.type, e.args[0]->type, eval(e.args[0], mask, divByZero, taint));
  }
  TYL_UNREACHABLE("{}", "emulator: unknown expression kind");
}

std::optional<int64_t> Evaluator::scalar(const tir::ExprRef& e) const {
  Mask divByZero = 0;
  Lanes v = eval(e, 1, &divByZero);
  if (divByZero) return std::nullopt;
  return static_cast<int64_t>(v[0]);
}

}  // namespace tyl::emu
