// Elementwise fragment arithmetic: each thread computes its own slots, reading the elements
// of those slots from any memory operands first.
#include <fmt/format.h>

#include "ir/lower/LowerImpl.h"

namespace tyl::lower {

using tir::ExprRef;
using tir::Type;

namespace {

// The type fragment arithmetic computes two operands in: f32 with a float, else i64 with an
// i64, else i32 (as sema gives arithmetic results).
Type arithmeticType(tile::DType a, tile::DType b) {
  const Type x = tile::toTir(a), y = tile::toTir(b);
  if (tir::isFloat(x) || tir::isFloat(y)) return Type::F32;
  if (x == Type::I64 || y == Type::I64) return Type::I64;
  return Type::I32;
}

}  // namespace

ExprRef KernelLowering::fragValue(const tile::FragRef& f, int64_t slot, Type want) {
  ExprRef v;
  switch (f->kind) {
    case tile::FragExpr::Kind::Tensor: {
      if (f->coord) {
        v = coordValues_.at(f.get()).at(static_cast<size_t>(slot));
        break;
      }
      const tile::Tensor& t = tk_.tensors[f->tensor];
      // A broadcast leaf reads its row from the slot rowSlots found (-1: a slot with no element).
      const int64_t from = f->broadcast ? broadcastSlots_.at(f.get()).at(static_cast<size_t>(slot)) : slot;
      v = tir::elemRef(k_, t.array, std::max<int64_t>(0, from));
      break;
    }
    case tile::FragExpr::Kind::Memory: v = tir::elemRef(k_, operandRegs_.at(f.get()), slot); break;
    case tile::FragExpr::Kind::Scalar: v = f->scalar; break;
    case tile::FragExpr::Kind::Binary: {
      // A comparison compares in the operands' arithmetic type.
      Type t = f->dtype == tile::DType::Bool ? arithmeticType(f->a->dtype, f->b->dtype) : tile::toTir(f->dtype);
      v = tir::binary(f->bin, fragValue(f->a, slot, t), fragValue(f->b, slot, t));
      break;
    }
    case tile::FragExpr::Kind::Select: {
      Type t = tile::toTir(f->dtype);
      v = tir::select(fragValue(f->cond, slot, Type::Pred), fragValue(f->a, slot, t), fragValue(f->b, slot, t));
      break;
    }
    case tile::FragExpr::Kind::Unary: {
      Type t = tile::toTir(f->dtype);
      v = tir::unary(f->un, fragValue(f->a, slot, t));
      break;
    }
    case tile::FragExpr::Kind::Cast: {
      Type t = tile::toTir(f->dtype);
      // Narrowing goes through f32 so rounding happens once.
      ExprRef inner = fragValue(f->a, slot, tir::isFloat(t) ? Type::F32 : t);
      v = tir::cast(t, inner);
      break;
    }
  }
  // 16-bit floats are computed in f32.
  if (tir::isFloat(want) && tir::isFloat(v->type) && want != v->type && want != Type::F32 && v->type != Type::F32)
    v = tir::cast(Type::F32, v);
  return tir::cast(want, v);
}

void KernelLowering::fragAssign(SourceRange loc, uint32_t dst, const tile::FragRef& value) {
  const FragmentMap* fm = fragment(dst, loc);
  if (!fm) return;
  const tile::Tensor& t = tk_.tensors[dst];
  Type type = tile::toTir(t.dtype);
  std::vector<MemoryOperand> operands = memoryOperands(loc, value, *fm, t);
  tir::Block body;
  out_.push_back(&body);
  const size_t group = operandGroup(operands, 1);
  for (size_t i = 0; i < fm->slots.size(); i += group) {
    readMemoryOperands(loc, operands, *fm, i, group);
    for (size_t j = i; j < i + group; ++j) {
      const int64_t m = fm->slots[j].m;
      emit(loc, tir::Assign{tir::Reg::elem(t.array, m), fragValue(value, m, type)});
    }
  }
  out_.pop_back();
  // Registers are private, so any thread may compute them; memory is read only by owners.
  emitGuarded(loc, operands.empty() ? nullptr : fm->owns, std::move(body));
}

std::vector<KernelLowering::MemoryOperand> KernelLowering::memoryOperands(SourceRange loc,
                                                                          const tile::FragRef& value,
                                                                          const FragmentMap& fm,
                                                                          const tile::Tensor& shaped) {
  const int64_t slots = shaped.slots;
  std::vector<MemoryOperand> ops;
  std::function<void(const tile::FragRef&)> visit = [&](const tile::FragRef& f) {
    if (!f) return;
    if (f->kind == tile::FragExpr::Kind::Tensor && f->coord && !coordValues_.count(f.get())) {
      // Each slot's coordinate: the thread's base plus the slot's offset.
      std::vector<ExprRef>& at = coordValues_[f.get()];
      at.assign(static_cast<size_t>(slots), tir::intConst(0));
      for (const FragmentSlot& s : fm.slots)
        at[static_cast<size_t>(s.m)] = tir::add(fm.base[*f->coord], tir::intConst(s.offset[*f->coord]));
    }
    if (f->kind == tile::FragExpr::Kind::Tensor && f->broadcast && !broadcastSlots_.count(f.get())) {
      std::optional<std::vector<int64_t>> at = rowSlots(loc, fm, shaped, f->tensor);
      // Reported; the slots read stay those of the broadcast fragment's first row.
      broadcastSlots_[f.get()] = at ? *at : std::vector<int64_t>(static_cast<size_t>(slots), 0);
    }
    if (f->kind == tile::FragExpr::Kind::Memory) {
      const tile::Tensor& t = tk_.tensors[f->memory.tensor];
      WidthReasons why;
      int w = chooseVectorWidth(f->memory, fm, why);
      diags_.report(kCopyVector, loc, fmt::format("read of '{}': {}", t.name, vectorRemark(w, t, why)));
      checkFragmentBanks(loc, "ld.shared", f->memory, fm, w, false);
      uint32_t regs = tir::addArray(k_, fmt::format("tmp{}", temps_++), tile::toTir(t.dtype), slots);
      operandRegs_[f.get()] = regs;
      ops.push_back(MemoryOperand{f.get(), regs, w, why.vectorDim});
    }
    visit(f->cond);
    visit(f->a);
    visit(f->b);
  };
  visit(value);
  return ops;
}

size_t KernelLowering::operandGroup(const std::vector<MemoryOperand>& ops, size_t width) {
  // Widths are powers of two that divide the slot count, so the largest is a multiple of all.
  for (const MemoryOperand& op : ops) width = std::max(width, static_cast<size_t>(op.width));
  return width;
}

void KernelLowering::readMemoryOperands(SourceRange loc, const std::vector<MemoryOperand>& ops,
                                        const FragmentMap& fm, size_t first, size_t count) {
  for (const MemoryOperand& op : ops)
    for (size_t i = first; i < first + count; i += op.width)
      accessSlots(loc, op.leaf->memory, op.regs, fm, i, op.width, op.dim, false, true);
}

void KernelLowering::emitGuarded(SourceRange loc, const tir::ExprRef& guard, tir::Block body) {
  if (!guard) {
    for (tir::Stmt& s : body) out_.back()->push_back(std::move(s));
    return;
  }
  emit(loc, tir::If{guard, std::move(body), {}});
}

}  // namespace tyl::lower
