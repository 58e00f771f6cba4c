#include "ir/thread/Builder.h"
#include "ir/tile/TileIR.h"

namespace tyl::tile {

tir::Type toTir(DType t) {
  switch (t) {
    case DType::F32: return tir::Type::F32;
    case DType::F16: return tir::Type::F16;
    case DType::BF16: return tir::Type::BF16;
    case DType::I32: return tir::Type::I32;
    case DType::I64: return tir::Type::I64;
    case DType::Bool: return tir::Type::Pred;
  }
  return tir::Type::F32;
}

const char* dtypeName(DType t) {
  switch (t) {
    case DType::F32: return "f32";
    case DType::F16: return "f16";
    case DType::BF16: return "bf16";
    case DType::I32: return "i32";
    case DType::I64: return "i64";
    case DType::Bool: return "bool";
  }
  return "?";
}

int dtypeBytes(DType t) {
  switch (t) {
    case DType::F16:
    case DType::BF16: return 2;
    case DType::I64: return 8;
    case DType::Bool: return 1;
    default: return 4;
  }
}

std::optional<DType> dtypeFromName(std::string_view name) {
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::I32, DType::I64, DType::Bool})
    if (name == dtypeName(t)) return t;
  return std::nullopt;
}

const char* spaceName(MemSpace s) {
  switch (s) {
    case MemSpace::Global: return "global";
    case MemSpace::Shared: return "shared";
    case MemSpace::Local: return "local";
  }
  return "?";
}

bool Tensor::isStatic() const {
  for (int64_t d : staticShape)
    if (d < 0) return false;
  return true;
}

int64_t Tensor::staticSize() const {
  int64_t n = 1;
  for (int64_t d : staticShape) {
    if (d < 0) return -1;
    n *= d;
  }
  return n;
}

int64_t View::size() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

bool coversElements(const View& v, const Tensor& t) {
  size_t kept = 0;
  for (size_t d = 0; d < t.shape.size(); ++d) {
    int64_t o = 0;
    if (!tir::isIntConst(v.origin[d], &o) || o != 0) return false;
    if (kept < v.dims.size() && v.dims[kept] == static_cast<int>(d)) {
      if (v.shape[kept] != t.staticShape[d]) return false;
      ++kept;
    } else if (t.staticShape[d] != 1) {
      return false;
    }
  }
  return kept == v.dims.size();
}

bool coversTensor(const View& v, const Tensor& t) {
  return v.dims.size() == t.shape.size() && coversElements(v, t);
}

const FragExpr* firstLeaf(const FragRef& f, FragExpr::Kind kind) {
  if (!f) return nullptr;
  if (f->kind == kind) return f.get();
  if (const FragExpr* l = firstLeaf(f->cond, kind)) return l;
  if (const FragExpr* l = firstLeaf(f->a, kind)) return l;
  return firstLeaf(f->b, kind);
}

const FragExpr* layoutLeaf(const FragRef& f) {
  if (!f) return nullptr;
  if (f->kind == FragExpr::Kind::Tensor && !f->broadcast) return f.get();
  if (const FragExpr* l = layoutLeaf(f->cond)) return l;
  if (const FragExpr* l = layoutLeaf(f->a)) return l;
  return layoutLeaf(f->b);
}

bool readsPart(const FragRef& f) {
  if (!f) return false;
  if (f->kind == FragExpr::Kind::Tensor && f->part) return true;
  return readsPart(f->cond) || readsPart(f->a) || readsPart(f->b);
}

}  // namespace tyl::tile
