// Elementwise fragment arithmetic: each thread computes its own slots.
#include "ir/lower/LowerImpl.h"

namespace tyl::lower {

using tir::ExprRef;
using tir::Type;

ExprRef KernelLowering::fragValue(const tile::FragRef& f, int64_t slot, Type want) {
  ExprRef v;
  switch (f->kind) {
    case tile::FragExpr::Kind::Tensor: {
      const tile::Tensor& t = tk_.tensors[f->tensor];
      v = tir::elemRef(k_, t.array, slot);
      break;
    }
    case tile::FragExpr::Kind::Scalar: v = f->scalar; break;
    case tile::FragExpr::Kind::Binary: {
      Type t = tile::toTir(f->dtype);
      v = tir::binary(f->bin, fragValue(f->a, slot, t), fragValue(f->b, slot, t));
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
  for (const FragmentSlot& s : fm->slots)
    emit(loc, tir::Assign{tir::Reg::elem(t.array, s.m), fragValue(value, s.m, type)});
}

}  // namespace tyl::lower
