// Semantic analysis of expressions in kernel bodies.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/CommonDiags.h"
#include "frontend/SemaImpl.h"
#include "ir/layout/Transforms.h"

namespace tyl {

TYL_DIAG(kRegisterIndex, Error, "register-index",
         "a register fragment indexed by a value that is not a compile-time constant");
TYL_DIAG(kBadIndex, Error, "bad-index", "an index with the wrong number of coordinates or out of range");
TYL_DIAG(kFragmentLayout, Error, "fragment-layout-mismatch",
         "elementwise arithmetic on fragments whose layouts or shapes differ");

namespace sema {

using tir::ExprRef;
using tir::Type;

std::optional<Value> KernelSema::constExpr(const ast::Expr& e) {
  ConstEvaluator eval = constEvaluator();
  std::optional<ConstValue> v = eval.eval(e);
  if (!v) return std::nullopt;
  return Value::constant(std::move(*v));
}

std::optional<int64_t> KernelSema::constInt(const ast::Expr& e, const char* what) {
  std::optional<Value> v = expr(e);
  if (!v) return std::nullopt;
  return constInt(Entry{std::move(*v), e.range}, what);
}

std::optional<int64_t> KernelSema::constInt(const Entry& e, const char* what) {
  if (e.value.kind == Value::Kind::Const)
    if (const auto* i = std::get_if<int64_t>(&e.value.cv.v)) return *i;
  diags_.report(kNotConstant, e.range,
                fmt::format("{} must be a compile-time integer, found {}", what, describe(e.value)));
  return std::nullopt;
}

std::optional<std::vector<KernelSema::Entry>> KernelSema::entries(const ast::Expr& e) {
  std::vector<Entry> out;
  if (const auto* t = e.as<ast::Tuple>()) {
    for (const ast::ExprPtr& x : t->elems) {
      std::optional<Value> v = expr(*x);
      if (!v) return std::nullopt;
      out.push_back({std::move(*v), x->range});
    }
    return out;
  }
  std::optional<Value> v = expr(e);
  if (!v) return std::nullopt;
  if (v->kind == Value::Kind::Const)
    if (const auto* t = std::get_if<TupleValue>(&v->cv.v)) {
      for (const ConstValue& x : t->elems) out.push_back({Value::constant(x), e.range});
      return out;
    }
  out.push_back({std::move(*v), e.range});
  return out;
}

std::optional<ExprRef> KernelSema::toScalar(const Value& v, SourceRange where, std::optional<Type> want) {
  if (v.kind == Value::Kind::Const) {
    if (const auto* i = std::get_if<int64_t>(&v.cv.v)) {
      Type t = want.value_or(Type::I32);
      if (t == Type::Pred) return tir::boolConst(*i != 0);
      // The f32 nearest the integer, rounded once (through a double, one past 2^53 could
      // round twice).
      if (tir::isFloat(t)) return tir::floatConst(static_cast<double>(static_cast<float>(*i)), Type::F32);
      if (t == Type::I32 && (*i < INT32_MIN || *i > INT32_MAX)) t = Type::I64;
      return tir::intConst(*i, t);
    }
    if (const auto* d = std::get_if<double>(&v.cv.v)) {
      if (want && (tir::isInt(*want) || *want == Type::Pred)) {
        diags_.report(kTypeMismatch, where,
                      fmt::format("expected {}, found a floating-point number",
                                  *want == Type::Pred ? "a condition" : "an integer"));
        return std::nullopt;
      }
      return tir::floatConst(*d, Type::F32);
    }
  }
  if (v.kind == Value::Kind::Scalar) {
    if (!want || *want == v.scalar->type) return v.scalar;
    if (*want == Type::Pred) {
      if (tir::isInt(v.scalar->type)) return tir::binary(tir::BinOp::Ne, v.scalar, tir::intConst(0, v.scalar->type));
      diags_.report(kTypeMismatch, where, fmt::format("expected a condition, found {}", tir::typeName(v.scalar->type)));
      return std::nullopt;
    }
    if (tir::isInt(*want) && tir::isFloat(v.scalar->type)) {
      diags_.report(kTypeMismatch, where,
                    fmt::format("expected an integer, found {}; convert with i32(...) or i64(...)",
                                tir::typeName(v.scalar->type)));
      return std::nullopt;
    }
    return tir::cast(*want, v.scalar);
  }
  diags_.report(kTypeMismatch, where, fmt::format("expected a scalar, found {}", describe(v)));
  return std::nullopt;
}

std::optional<ExprRef> KernelSema::scalar(const ast::Expr& e, std::optional<Type> want) {
  std::optional<Value> v = expr(e);
  if (!v) return std::nullopt;
  return toScalar(*v, e.range, want);
}

static Type promote(Type a, Type b) {
  if (tir::isFloat(a) || tir::isFloat(b)) return Type::F32;
  if (a == Type::I64 || b == Type::I64) return Type::I64;
  if (a == Type::Pred && b == Type::Pred) return Type::Pred;
  return Type::I32;
}

// The element type fragment arithmetic on operands of these types computes in: that of
// scalar arithmetic (a bool counts as an i32).
static tile::DType fragmentArithmeticType(Type a, Type b) {
  switch (promote(a, b)) {
    case Type::F32: return tile::DType::F32;
    case Type::I64: return tile::DType::I64;
    default: return tile::DType::I32;
  }
}

// Whether `a op b` on 32-bit operands gives its exact value in 32 bits (as in 64): a minimum,
// a maximum, a bitwise operation, a comparison, or a division, remainder or right shift by a
// constant that cannot overflow. So an index or origin computes `k % 4` in 32 bits, and only
// a sum, difference, product or left shift in it needs 64.
static bool exactIn32Bits(tir::BinOp op, const ExprRef& b) {
  using tir::BinOp;
  int64_t c = 0;
  switch (op) {
    case BinOp::Add:
    case BinOp::Sub:
    case BinOp::Mul:
    case BinOp::Shl: return false;
    case BinOp::Div:
    case BinOp::Rem: return tir::isIntConst(b, &c) && c != -1;
    case BinOp::Shr: return tir::isIntConst(b, &c) && c >= 0 && c < 32;
    default: return true;
  }
}

std::optional<ExprRef> KernelSema::arith(tir::BinOp op, ExprRef a, ExprRef b, SourceRange where) {
  using tir::BinOp;
  if (op == BinOp::LAnd || op == BinOp::LOr) {
    std::optional<ExprRef> pa = toScalar(Value::runtime(a), where, Type::Pred);
    std::optional<ExprRef> pb = toScalar(Value::runtime(b), where, Type::Pred);
    if (!pa || !pb) return std::nullopt;
    return tir::binary(op, *pa, *pb);
  }
  Type t = promote(a->type, b->type);
  if (t == Type::Pred) t = Type::I32;
  if (inIndex_ > 0 && t == Type::I32 && !exactIn32Bits(op, b)) t = Type::I64;
  bool isBits = op == BinOp::And || op == BinOp::Or || op == BinOp::Xor || op == BinOp::Shl || op == BinOp::Shr ||
                op == BinOp::Rem;
  if (isBits && tir::isFloat(t)) {
    diags_.report(kTypeMismatch, where, "bitwise operators and '%' need integer operands");
    return std::nullopt;
  }
  int64_t divisor = 1;
  if ((op == BinOp::Div || op == BinOp::Rem) && tir::isInt(t) && tir::isIntConst(b, &divisor) && divisor == 0) {
    diags_.report(kDivisionByZero, where,
                  fmt::format("integer {} by zero", op == BinOp::Div ? "division" : "modulo"));
    return std::nullopt;
  }
  return tir::binary(op, tir::cast(t, a), tir::cast(t, b));
}

static std::optional<tir::BinOp> tirOp(ast::BinOp op) {
  using A = ast::BinOp;
  using T = tir::BinOp;
  switch (op) {
    case A::Add: return T::Add;
    case A::Sub: return T::Sub;
    case A::Mul: return T::Mul;
    case A::Div: return T::Div;
    case A::Mod: return T::Rem;
    case A::Shl: return T::Shl;
    case A::Shr: return T::Shr;
    case A::Lt: return T::Lt;
    case A::Le: return T::Le;
    case A::Gt: return T::Gt;
    case A::Ge: return T::Ge;
    case A::Eq: return T::Eq;
    case A::Ne: return T::Ne;
    case A::BitAnd: return T::And;
    case A::BitXor: return T::Xor;
    case A::BitOr: return T::Or;
    case A::And: return T::LAnd;
    case A::Or: return T::LOr;
  }
  return std::nullopt;
}

bool KernelSema::isWholeTensor(const tile::View& v) const { return tile::coversTensor(v, k_.tensors[v.tensor]); }

void KernelSema::noteUnitDims(DiagBuilder& d, const tile::View& v, SourceRange where) const {
  const tile::Tensor& t = k_.tensors[v.tensor];
  if (isWholeTensor(v) || !tile::coversElements(v, t)) return;
  d.note(where, fmt::format("this names every element of '{}' but leaves out its dimensions of extent 1; '{}' itself, "
                            "of shape ({}), is the whole fragment",
                            t.name, t.name, fmt::join(t.staticShape, ", ")));
}

Value fragBinary(tir::BinOp op, tile::FragRef a, tile::FragRef b) {
  tile::FragExpr f;
  f.kind = tile::FragExpr::Kind::Binary;
  f.bin = op;
  f.dtype = fragmentArithmeticType(tile::toTir(a->dtype), tile::toTir(b->dtype));
  f.a = std::move(a);
  f.b = std::move(b);
  Value v;
  v.kind = Value::Kind::Frag;
  v.frag = std::make_shared<const tile::FragExpr>(std::move(f));
  return v;
}

bool KernelSema::noFloatIntoInt(const tile::Tensor& dst, tile::DType src, SourceRange where, const char* what) {
  if (!tir::isInt(tile::toTir(dst.dtype)) || !tir::isFloat(tile::toTir(src))) return true;
  diags_.report(kTypeMismatch, where,
                fmt::format("'{}' holds {} but the {} is {} (convert it: {}(...))", dst.name, tile::dtypeName(dst.dtype),
                            what, tile::dtypeName(src), tile::dtypeName(dst.dtype)));
  return false;
}

std::optional<tile::FragRef> KernelSema::toFrag(const Value& v, SourceRange where, bool part) {
  auto make = [](tile::FragExpr f) { return std::make_shared<const tile::FragExpr>(std::move(f)); };
  if (v.kind == Value::Kind::Frag) return v.frag;
  if (v.kind == Value::Kind::View) {
    const tile::Tensor& t = k_.tensors[v.view.tensor];
    if (t.space != tile::MemSpace::Local) {
      // A memory operand, read in the layout of the fragments it is combined with.
      tile::FragExpr f;
      f.kind = tile::FragExpr::Kind::Memory;
      f.dtype = t.dtype;
      f.memory = v.view;
      return make(std::move(f));
    }
    const bool whole = isWholeTensor(v.view);
    if (!whole && part) {
      // A part of the fragment: its elements stay in their slots, so the origin must be known.
      for (const ExprRef& o : v.view.origin)
        if (!tir::isIntConst(o)) {
          diags_.report(kTypeMismatch, where,
                        fmt::format("a part of register fragment '{}' needs a compile-time origin, and this one is "
                                    "computed at run time: which register slots a part reads is decided when the "
                                    "kernel is compiled (an `unroll` loop's variable is a constant)",
                                    t.name));
          return std::nullopt;
        }
      tile::FragExpr f;
      f.kind = tile::FragExpr::Kind::Tensor;
      f.dtype = t.dtype;
      f.tensor = v.view.tensor;
      f.part = v.view;
      return make(std::move(f));
    }
    if (!whole) {
      DiagBuilder d = diags_.report(kTypeMismatch, where,
                                    fmt::format("a part of register fragment '{}' is read only by arithmetic and "
                                                "stores to memory; copied or assigned into registers, its elements "
                                                "would move between slots",
                                                t.name));
      noteUnitDims(d, v.view, where);
      return std::nullopt;
    }
    tile::FragExpr f;
    f.kind = tile::FragExpr::Kind::Tensor;
    f.dtype = t.dtype;
    f.tensor = v.view.tensor;
    return make(std::move(f));
  }
  std::optional<ExprRef> s = toScalar(v, where, std::nullopt);
  if (!s) return std::nullopt;
  tile::FragExpr f;
  f.kind = tile::FragExpr::Kind::Scalar;
  f.scalar = tir::isFloat((*s)->type) ? tir::cast(Type::F32, *s) : *s;
  f.dtype = fragmentArithmeticType((*s)->type, (*s)->type);
  return make(std::move(f));
}

std::string KernelSema::shapeText(const tile::View& v) const {
  const tile::Tensor& t = k_.tensors[v.tensor];
  std::vector<std::string> dims;
  for (size_t i = 0; i < v.shape.size(); ++i) {
    if (v.shape[i] >= 0) {
      dims.push_back(std::to_string(v.shape[i]));
      continue;
    }
    ExprRef e = t.shape[static_cast<size_t>(v.dims[i])];
    while (e->kind == tir::ExprKind::Cast) e = e->args[0];
    dims.push_back(e->kind == tir::ExprKind::ParamRef ? k_.skeleton.params[e->id].name : "?");
  }
  if (dims.size() == 1) return fmt::format("({},)", dims[0]);
  return fmt::format("({})", fmt::join(dims, ", "));
}

std::string KernelSema::runtimeShapeHint(const tile::View& v) const {
  for (int64_t e : v.shape)
    if (e < 0) return "; a tensor's run-time extents are not a tile shape: take a window of it";
  return "";
}

namespace {

// Whether two fragment layouts place every element alike: equal once canonical (written
// S[(8, 1) : (1@warpid, 1)] or derived as S[8 : 1@warpid], it is one layout).
bool sameMapping(const std::optional<layout::Layout>& a, const std::optional<layout::Layout>& b) {
  if (!a || !b) return a.has_value() == b.has_value();
  return *a == *b || layout::canonicalize(*a) == layout::canonicalize(*b);
}

}  // namespace

// Elementwise operations combine slot i of one fragment with slot i of the other, which is
// only right when both hold the same elements there: same shape, same layout. A memory
// operand is read in the layout of the fragments beside it, so it only needs their shape.
bool KernelSema::sameFragmentLayout(SourceRange where, const tile::FragRef& a, const tile::FragRef& b) {
  auto shapedBy = [](const tile::FragRef& f) {
    const tile::FragExpr* l = tile::layoutLeaf(f);
    return l ? l : tile::firstLeaf(f, tile::FragExpr::Kind::Memory);
  };
  const tile::FragExpr* la = shapedBy(a);
  const tile::FragExpr* lb = shapedBy(b);
  if (!la || !lb) return true;
  auto tensorOf = [&](const tile::FragExpr* l) -> const tile::Tensor& {
    return k_.tensors[l->kind == tile::FragExpr::Kind::Tensor ? l->tensor : l->memory.tensor];
  };
  auto viewOf = [&](const tile::FragExpr* l) {
    return l->kind != tile::FragExpr::Kind::Tensor ? l->memory : l->part ? *l->part : wholeView(l->tensor, where);
  };
  const tile::Tensor& ta = tensorOf(la);
  const tile::Tensor& tb = tensorOf(lb);
  if (la->kind != tile::FragExpr::Kind::Tensor || lb->kind != tile::FragExpr::Kind::Tensor) {
    const tile::View va = viewOf(la), vb = viewOf(lb);
    if (va.shape == vb.shape && runtimeShapeHint(va).empty()) return true;
    diags_.report(kFragmentLayout, where,
                  fmt::format("{} has shape {} and {} has shape {}; elementwise operands need one shape{}",
                              tensorRef(ta), shapeText(va), tensorRef(tb), shapeText(vb),
                              runtimeShapeHint(va).empty() ? runtimeShapeHint(vb) : runtimeShapeHint(va)));
    return false;
  }
  if (la->part || lb->part) {
    // Parts line up slot for slot only as the same window of fragments of one layout.
    auto same = [](const tile::View& x, const tile::View& y) {
      if (x.shape != y.shape || x.dims != y.dims || x.origin.size() != y.origin.size()) return false;
      for (size_t d = 0; d < x.origin.size(); ++d) {
        int64_t a = 0, b = 0;
        if (!tir::isIntConst(x.origin[d], &a) || !tir::isIntConst(y.origin[d], &b) || a != b) return false;
      }
      return true;
    };
    if (la->part && lb->part && same(*la->part, *lb->part) && ta.staticShape == tb.staticShape &&
        sameMapping(ta.layout, tb.layout))
      return true;
    diags_.report(kFragmentLayout, where,
                  fmt::format("{} and {} are not the same part of fragments of one layout, so their elements are "
                              "not held by the same threads and slots: a part of a fragment is combined with "
                              "scalars, memory and the same part of fragments of its layout",
                              la->part ? "a part of " + tensorRef(ta) : tensorRef(ta),
                              lb->part ? "a part of " + tensorRef(tb) : tensorRef(tb)));
    return false;
  }
  if (la->tensor == lb->tensor) return true;
  if (ta.staticShape == tb.staticShape && sameMapping(ta.layout, tb.layout)) return true;
  diags_.report(kFragmentLayout, where,
                fmt::format("{} and {} have different shapes or layouts, so their elements are not held by "
                            "the same threads and slots",
                            tensorRef(ta), tensorRef(tb)))
      .note(ta.loc, fmt::format("{} is allocated here", tensorRef(ta)))
      .note(tb.loc, fmt::format("{} is allocated here", tensorRef(tb)));
  return false;
}

namespace {

// `f` with its register fragments marked to broadcast; nullopt at a leaf that cannot (a memory
// operand or a part of a fragment, read in the layout of the whole expression).
std::optional<tile::FragRef> broadcastLeaves(const tile::FragRef& f, std::string* why) {
  if (!f) return f;
  if (f->kind == tile::FragExpr::Kind::Memory || (f->kind == tile::FragExpr::Kind::Tensor && (f->part || f->coord))) {
    *why = f->kind == tile::FragExpr::Kind::Memory ? "a memory operand" : f->part ? "a part of a fragment" : "coordinates";
    return std::nullopt;
  }
  tile::FragExpr copy = *f;
  if (copy.kind == tile::FragExpr::Kind::Tensor) copy.broadcast = true;
  std::optional<tile::FragRef> a = broadcastLeaves(f->a, why), b = a ? broadcastLeaves(f->b, why) : std::nullopt;
  std::optional<tile::FragRef> c = b ? broadcastLeaves(f->cond, why) : std::nullopt;
  if (!a || !b || !c) return std::nullopt;
  copy.a = *a;
  copy.b = *b;
  copy.cond = *c;
  return std::make_shared<const tile::FragExpr>(std::move(copy));
}

}  // namespace

bool KernelSema::alignFragments(SourceRange where, tile::FragRef& a, tile::FragRef& b) {
  const tile::FragExpr* la = tile::layoutLeaf(a);
  const tile::FragExpr* lb = tile::layoutLeaf(b);
  if (!la || !lb || la->part || lb->part) return sameFragmentLayout(where, a, b);
  const std::vector<int64_t>& sa = k_.tensors[la->tensor].staticShape;
  const std::vector<int64_t>& sb = k_.tensors[lb->tensor].staticShape;
  if (sa == sb || sa.size() != sb.size()) return sameFragmentLayout(where, a, b);
  bool aWider = true, bWider = true;  // the side with the larger extent wherever they differ
  for (size_t d = 0; d < sa.size(); ++d)
    if (sa[d] != sb[d]) {
      aWider = aWider && sb[d] == 1;
      bWider = bWider && sa[d] == 1;
    }
  if (!aWider && !bWider) {
    bool ones = true;  // each differing extent is 1 on one side: broadcasting both ways
    for (size_t d = 0; d < sa.size(); ++d) ones = ones && (sa[d] == sb[d] || sa[d] == 1 || sb[d] == 1);
    if (!ones) return sameFragmentLayout(where, a, b);
    diags_.report(kFragmentLayout, where,
                  fmt::format("{} has shape ({}) and {} has shape ({}): a broadcast reads the operand with extents "
                              "of 1 in the layout of one of the full shape, so one side must have it (add a fragment "
                              "of shape ({}) first)",
                              tensorRef(k_.tensors[la->tensor]), fmt::join(sa, ", "), tensorRef(k_.tensors[lb->tensor]),
                              fmt::join(sb, ", "), fmt::join([&] {
                                std::vector<int64_t> full(sa.size());
                                for (size_t d = 0; d < sa.size(); ++d) full[d] = std::max(sa[d], sb[d]);
                                return full;
                              }(), ", ")));
    return false;
  }
  tile::FragRef& narrow = aWider ? b : a;
  std::string why;
  std::optional<tile::FragRef> marked = broadcastLeaves(narrow, &why);
  if (!marked) {
    diags_.report(kFragmentLayout, where,
                  fmt::format("{} has shape ({}) and is broadcast to ({}), but it reads {}, which is read in the "
                              "layout of the whole expression: broadcast register fragments only",
                              tensorRef(k_.tensors[(aWider ? lb : la)->tensor]),
                              fmt::join(aWider ? sb : sa, ", "), fmt::join(aWider ? sa : sb, ", "), why));
    return false;
  }
  narrow = *marked;
  return true;
}

bool KernelSema::wholeInRegisters(const tile::FragRef& f, const tile::Tensor& dst, SourceRange where) {
  if (f->dtype == tile::DType::Bool) {
    diags_.report(kTypeMismatch, where,
                  "a comparison of fragments is only the condition of where(...): where(x < 0.0, 0.0, x)");
    return false;
  }
  if (dst.space != tile::MemSpace::Local || !tile::readsPart(f)) return true;
  diags_.report(kTypeMismatch, where,
                fmt::format("a part of a register fragment is stored to memory (a store keeps each element in its "
                            "slot); into the registers of '{}' it would move between slots: copy the part through "
                            "shared memory, or compute on whole fragments",
                            dst.name));
  return false;
}

std::optional<Value> KernelSema::binary(const ast::Expr& e, const ast::Binary& b) {
  if ((b.op == ast::BinOp::And || b.op == ast::BinOp::Or) && !out_.empty()) return logical(e, b);
  std::optional<Value> lhs = expr(*b.lhs);
  if (!lhs) return std::nullopt;
  std::optional<Value> rhs = expr(*b.rhs);
  if (!rhs) return std::nullopt;
  return binaryOf(e, b, *lhs, *rhs);
}

// `a && b` and `a || b` evaluate b only where a does not decide the result, as in C++: the
// memory b reads (A[i] in `i < n && A[i] > 0.0`) is read under an `if` on a. Without reads,
// evaluating b is harmless, and both sides are computed. A compile-time `a` that decides
// leaves b out, as a compile-time `if` leaves out the branch not taken.
std::optional<Value> KernelSema::logical(const ast::Expr& e, const ast::Binary& b) {
  const bool isAnd = b.op == ast::BinOp::And;
  std::optional<Value> lhs = expr(*b.lhs);
  if (!lhs) return std::nullopt;
  if (lhs->kind == Value::Kind::Const) {
    const auto* c = std::get_if<int64_t>(&lhs->cv.v);
    if (c && (*c != 0) != isAnd) return Value::constant(ConstValue{int64_t{isAnd ? 0 : 1}});
    std::optional<Value> rhs = expr(*b.rhs);
    if (!rhs) return std::nullopt;
    return binaryOf(e, b, *lhs, *rhs);
  }
  // The right side runs under a condition: what it reads is not checked as surely read.
  tile::Block reads;
  out_.push_back(&reads);
  ++conditions_;
  std::optional<Value> rhs = expr(*b.rhs);
  --conditions_;
  out_.pop_back();
  if (!rhs) return std::nullopt;
  if (reads.empty() || lhs->kind != Value::Kind::Scalar || rhs->kind != Value::Kind::Scalar) {
    // Nothing to guard, or an error to report.
    for (tile::Stmt& st : reads) out_.back()->push_back(std::move(st));
    return binaryOf(e, b, *lhs, *rhs);
  }
  std::optional<ExprRef> p = toScalar(*lhs, b.lhs->range, Type::Pred);
  std::optional<ExprRef> q = toScalar(*rhs, b.rhs->range, Type::Pred);
  if (!p || !q) return std::nullopt;
  // Each value read is 0 where it is not read, so `a && b` is defined in every thread; the
  // result keeps its form, which the checks of barriers under conditions look into.
  std::function<void(const tile::Block&)> zeroLoaded = [&](const tile::Block& block) {
    for (const tile::Stmt& st : block) {
      if (const auto* load = std::get_if<tile::ElemLoad>(&st.node)) {
        const Type t = k_.skeleton.vars.at(load->dst.id).type;
        ExprRef zero = tir::isFloat(t) ? tir::cast(t, tir::floatConst(0.0, Type::F32)) : tir::intConst(0, t);
        emit(e.range, tile::ScalarSet{load->dst, zero});
      } else if (const auto* inner = std::get_if<tile::If>(&st.node)) {
        zeroLoaded(inner->then);
        zeroLoaded(inner->otherwise);
      }
    }
  };
  zeroLoaded(reads);
  emit(e.range, tile::If{isAnd ? *p : tir::unary(tir::UnOp::Not, *p), std::move(reads), {}});
  return Value::runtime(tir::binary(isAnd ? tir::BinOp::LAnd : tir::BinOp::LOr, *p, *q));
}

std::optional<Value> KernelSema::binaryOf(const ast::Expr& e, const ast::Binary& b, const Value& lhs,
                                          const Value& rhs) {
  if (lhs.kind == Value::Kind::Const && rhs.kind == Value::Kind::Const) return constExpr(e);
  std::optional<tir::BinOp> op = tirOp(b.op);
  bool fragment = lhs.kind == Value::Kind::Frag || rhs.kind == Value::Kind::Frag ||
                  lhs.kind == Value::Kind::View || rhs.kind == Value::Kind::View;
  if (fragment) {
    std::optional<tile::FragRef> fa = toFrag(lhs, b.lhs->range, true);
    if (!fa) return std::nullopt;
    std::optional<tile::FragRef> fb = toFrag(rhs, b.rhs->range, true);
    if (!fb) return std::nullopt;
    const bool compare = op && *op >= tir::BinOp::Lt && *op <= tir::BinOp::Ne;
    if (!op || (!compare && *op != tir::BinOp::Add && *op != tir::BinOp::Sub && *op != tir::BinOp::Mul &&
                *op != tir::BinOp::Div)) {
      diags_.report(kTypeMismatch, e.range,
                    fmt::format("fragments support + - * /, max/min and comparisons (the condition of where), not "
                                "'{}'",
                                ast::binOpSpelling(b.op)));
      return std::nullopt;
    }
    if ((*fa)->dtype == tile::DType::Bool || (*fb)->dtype == tile::DType::Bool) {
      diags_.report(kTypeMismatch, e.range, "a comparison of fragments is only the condition of where(...)");
      return std::nullopt;
    }
    if (!alignFragments(e.range, *fa, *fb)) return std::nullopt;
    Value v = fragBinary(*op, *fa, *fb);
    if (compare) {
      tile::FragExpr cmp = *v.frag;
      cmp.dtype = tile::DType::Bool;
      v.frag = std::make_shared<const tile::FragExpr>(std::move(cmp));
    }
    return v;
  }
  if (lhs.kind == Value::Kind::Const || rhs.kind == Value::Kind::Const ||
      (lhs.kind == Value::Kind::Scalar && rhs.kind == Value::Kind::Scalar)) {
    // Constants take the type of the run-time operand.
    std::optional<Type> hint;
    if (lhs.kind == Value::Kind::Scalar) hint = lhs.scalar->type;
    if (rhs.kind == Value::Kind::Scalar && !hint) hint = rhs.scalar->type;
    if (hint == Type::Pred) hint = std::nullopt;
    if (hint && tir::isInt(*hint)) {
      for (const Value* v : {&lhs, &rhs})
        if (v->kind == Value::Kind::Const && std::holds_alternative<double>(v->cv.v)) hint = Type::F32;
    }
    std::optional<ExprRef> a = toScalar(lhs, b.lhs->range, lhs.kind == Value::Kind::Const ? hint : std::nullopt);
    std::optional<ExprRef> c = toScalar(rhs, b.rhs->range, rhs.kind == Value::Kind::Const ? hint : std::nullopt);
    if (!a || !c) return std::nullopt;
    std::optional<ExprRef> r = arith(*op, *a, *c, e.range);
    if (!r) return std::nullopt;
    return Value::runtime(*r);
  }
  diags_.report(kTypeMismatch, e.range,
                fmt::format("cannot apply '{}' to {} and {}", ast::binOpSpelling(b.op), describe(lhs), describe(rhs)));
  return std::nullopt;
}

std::optional<Value> KernelSema::unary(const ast::Expr& e, const ast::Unary& u) {
  std::optional<Value> v = expr(*u.operand);
  if (!v) return std::nullopt;
  if (v->kind == Value::Kind::Const) return constExpr(e);
  if (v->kind == Value::Kind::Scalar) {
    if (u.op == ast::UnOp::Not) {
      std::optional<ExprRef> p = toScalar(*v, e.range, Type::Pred);
      if (!p) return std::nullopt;
      return Value::runtime(tir::unary(tir::UnOp::Not, *p));
    }
    // Negation promotes as arithmetic does: a bool counts as an i32 0 or 1 (so -true is -1), and
    // 16-bit floats are negated in f32.
    Type t = promote(v->scalar->type, v->scalar->type);
    if (t == Type::Pred) t = Type::I32;
    if (inIndex_ > 0 && t == Type::I32) t = Type::I64;
    return Value::runtime(tir::unary(tir::UnOp::Neg, tir::cast(t, v->scalar)));
  }
  if (u.op == ast::UnOp::Neg) {
    std::optional<tile::FragRef> f = toFrag(*v, e.range, true);
    if (!f) return std::nullopt;
    tile::FragExpr n;
    n.kind = tile::FragExpr::Kind::Unary;
    n.un = tir::UnOp::Neg;
    n.dtype = tile::isFloat((*f)->dtype) ? tile::DType::F32 : (*f)->dtype;
    n.a = *f;
    Value r;
    r.kind = Value::Kind::Frag;
    r.frag = std::make_shared<const tile::FragExpr>(std::move(n));
    return r;
  }
  diags_.report(kTypeMismatch, e.range, fmt::format("cannot apply '!' to {}", describe(*v)));
  return std::nullopt;
}

std::optional<Value> KernelSema::name(const ast::Expr& e, const std::string& n) {
  if (Binding* b = lookup(n)) {
    if (b->poisoned) return std::nullopt;
    return b->value;
  }
  if (env_.poisoned.count(n)) return std::nullopt;
  if (auto it = typeArgs_.find(n); it != typeArgs_.end()) {
    Value v;
    v.kind = Value::Kind::DType;
    v.dtype = it->second;
    return v;
  }
  if (auto it = env_.consts.find(n); it != env_.consts.end()) return Value::constant(it->second);
  if (std::optional<tile::DType> t = tile::dtypeFromName(n)) {
    Value v;
    v.kind = Value::Kind::DType;
    v.dtype = *t;
    return v;
  }
  for (const char* ns : {"block_id", "thread_id", "block_dim", "grid_dim"}) {
    if (n == ns) {
      Value v;
      v.kind = Value::Kind::Namespace;
      v.ns = n;
      return v;
    }
  }
  if (n == "True" || n == "False" || n == "true" || n == "false") return constExpr(e);
  DiagBuilder d = diags_.report(kUnknownName, e.range, fmt::format("unknown name '{}'", n));
  if (auto it = pipelineLets_.find(n); it != pipelineLets_.end())
    d.note(it->second, fmt::format("'{}' is declared in the pipeline's body, which the copies issued ahead of it "
                                   "do not see: write its expression inline",
                                   n));
  return std::nullopt;
}

std::optional<Value> KernelSema::member(const ast::Expr& e, const ast::Member& m) {
  std::optional<Value> base = expr(*m.base);
  if (!base) return std::nullopt;
  if (base->kind == Value::Kind::Namespace) {
    int axis = m.name == "x" ? 0 : m.name == "y" ? 1 : m.name == "z" ? 2 : -1;
    if (axis < 0) {
      diags_.report(kUnknownName, m.nameRange, fmt::format("'{}' has fields x, y and z, not '{}'", base->ns, m.name));
      return std::nullopt;
    }
    using S = tir::Special;
    if (base->ns == "block_id") return Value::runtime(tir::special(std::array{S::CtaidX, S::CtaidY, S::CtaidZ}[axis]));
    if (base->ns == "thread_id") return Value::runtime(tir::special(std::array{S::TidX, S::TidY, S::TidZ}[axis]));
    if (base->ns == "grid_dim")
      return Value::runtime(tir::special(std::array{S::NctaidX, S::NctaidY, S::NctaidZ}[axis]));
    if (!blockKnown_) {
      diags_.report(kNotConstant, e.range,
                    "block_dim is the launch's block, which is not known here: a parameter and the block "
                    "itself cannot use it");
      return std::nullopt;
    }
    return Value::constant(ConstValue{k_.skeleton.block[axis]});
  }
  if (base->kind == Value::Kind::View && m.name == "T") return reordered(e.range, base->view, {1, 0}, ".T");
  diags_.report(kUnknownName, m.nameRange, fmt::format("{} has no field '{}'", describe(*base), m.name));
  return std::nullopt;
}

std::optional<std::vector<ExprRef>> KernelSema::indices(const std::vector<ast::ExprPtr>& list) {
  std::vector<ExprRef> out;
  IndexScope wide(inIndex_);
  for (const ast::ExprPtr& x : list) {
    std::optional<ExprRef> s = scalar(*x);
    if (!s) return std::nullopt;
    if (!tir::isInt((*s)->type)) {
      diags_.report(kTypeMismatch, x->range, "an index must be an integer");
      return std::nullopt;
    }
    out.push_back(tir::cast(Type::I64, *s));
  }
  return out;
}

std::optional<TensorType> KernelSema::tensorType(const ast::Expr& e) {
  std::optional<Value> v = expr(e);
  if (!v) return std::nullopt;
  if (v->kind != Value::Kind::TensorType) {
    diags_.report(kTypeMismatch, e.range, fmt::format("expected a tensor type such as f32[32, 4], found {}", describe(*v)));
    return std::nullopt;
  }
  int64_t elems = 1;
  for (int64_t d : v->ttype.staticShape)
    if (d > 0 && __builtin_mul_overflow(elems, d, &elems)) {
      diags_.report(kIntegerOverflow, e.range,
                    fmt::format("the tensor {} has more elements than a 64-bit integer can count",
                                layout::shapeToString(v->ttype.staticShape)));
      return std::nullopt;
    }
  return v->ttype;
}

// The register holding element `idx` of a view into a register tensor: the index must
// be known at compile time and the tensor must not be spread over threads.
std::optional<tir::Reg> KernelSema::registerElement(SourceRange where, const tile::View& view,
                                                     const std::vector<ExprRef>& idx,
                                                     const std::vector<ast::ExprPtr>& idxExprs) {
  const tile::Tensor& t = k_.tensors[view.tensor];
  std::vector<int64_t> coord(t.shape.size());
  for (size_t d = 0; d < t.shape.size(); ++d) {
    int64_t o = 0;
    if (!tir::isIntConst(view.origin[d], &o)) o = -1;
    coord[d] = o;
  }
  for (size_t i = 0; i < idx.size(); ++i) {
    int64_t c = 0;
    if (!tir::isIntConst(idx[i], &c) || coord[view.dims[i]] < 0) {
      diags_.report(kRegisterIndex, idxExprs[i]->range,
                    "registers are indexed by compile-time constants; iterate with 'unroll' instead of 'range'");
      return std::nullopt;
    }
    coord[view.dims[i]] += c;
  }
  if (t.layout->tile.baseAxesMask() & layout::threadAxesMask()) {
    diags_.report(kRegisterIndex, where,
                  fmt::format("'{}' is spread over threads; address this thread's slots through a view, e.g. "
                              "'.view({})' of it",
                              t.name, t.slots));
    return std::nullopt;
  }
  int64_t slot = layout::apply(*t.layout, coord, t.staticShape)[layout::Axis::m];
  return tir::Reg::elem(t.array, slot);
}

// The largest value a run-time integer can take, when its form bounds it: x % c is below c,
// min(x, c) is at most c, and sums and casts of bounded values are bounded.
static std::optional<int64_t> upperBound(const ExprRef& e) {
  int64_t c = 0;
  if (tir::isIntConst(e, &c)) return c;
  if (e->kind == tir::ExprKind::Cast && tir::isInt(e->type) && tir::isInt(e->args[0]->type))
    return upperBound(e->args[0]);
  if (e->kind != tir::ExprKind::Binary) return std::nullopt;
  std::optional<int64_t> a = upperBound(e->args[0]), b = upperBound(e->args[1]);
  int64_t sum = 0;
  switch (e->bin) {
    case tir::BinOp::Rem:
      if (tir::isIntConst(e->args[1], &c) && c > 0) return c - 1;
      return std::nullopt;
    case tir::BinOp::Min:
      if (a && b) return std::min(*a, *b);
      return a ? a : b;
    case tir::BinOp::Add:
      if (a && b && !__builtin_add_overflow(*a, *b, &sum)) return sum;
      return std::nullopt;
    default: return std::nullopt;
  }
}

// Static indices must be inside the view, and so must the largest value of a run-time index
// into shared or register memory whose bound is known (`As[stage]` of a pipeline with more
// stages than buffers), and so must its values at the values it surely takes.
bool KernelSema::indicesInside(const tile::View& view, const std::vector<ExprRef>& idx,
                               const std::vector<ast::ExprPtr>& exprs) {
  const tile::Tensor& t = k_.tensors[view.tensor];
  for (size_t i = 0; i < idx.size(); ++i) {
    int64_t c = 0;
    if (tir::isIntConst(idx[i], &c) && view.shape[i] >= 0 && (c < 0 || c >= view.shape[i])) {
      diags_.report(kBadIndex, exprs[i]->range,
                    fmt::format("index {} is outside dimension {} of extent {}", c, i, view.shape[i]));
      return false;
    }
    std::optional<int64_t> most = upperBound(idx[i]);
    if (t.space != tile::MemSpace::Global && most && view.shape[i] >= 0 && *most >= view.shape[i]) {
      diags_.report(kBadIndex, exprs[i]->range,
                    fmt::format("this index may reach {}, outside dimension {} of extent {}", *most, i, view.shape[i]));
      return false;
    }
  }
  if (t.space == tile::MemSpace::Global) return true;
  std::vector<int64_t> most;
  for (size_t i = 0; i < idx.size(); ++i) {
    if (view.shape[i] < 0) return true;
    most.push_back(view.shape[i] - 1);
  }
  if (std::optional<Escape> esc = escapeAtSureValues(idx, most)) {
    DiagBuilder diag = diags_.report(kBadIndex, exprs[esc->dim]->range,
                                     fmt::format("this index is {} {}, outside dimension {} of extent {}",
                                                 esc->value, esc->when, esc->dim, view.shape[esc->dim]));
    if (esc->loop) diag.note(esc->loop->loc, fmt::format("'{}' takes that value in this loop", esc->loop->name));
    return false;
  }
  launchChecksAtSureValues(
      idx, most,
      [&](size_t d) { return fmt::format("index {} into '{}' leaves [0, {})", d, t.name, view.shape[d]); },
      SourceRange::cover(exprs.front()->range, exprs.back()->range));
  return true;
}

std::optional<Value> KernelSema::index(const ast::Expr& e, const ast::Index& ix) {
  std::optional<Value> base = expr(*ix.base);
  if (!base) return std::nullopt;
  if (base->kind == Value::Kind::DType) {
    // `f32[32, 4]`: a tensor type. Allocation shapes are static.
    Value v;
    v.kind = Value::Kind::TensorType;
    v.ttype.dtype = base->dtype;
    std::vector<Entry> dims;
    for (const ast::ExprPtr& d : ix.indices) {
      std::optional<std::vector<Entry>> list = entries(*d);
      if (!list) return std::nullopt;
      for (Entry& x : *list) dims.push_back(std::move(x));
    }
    if (dims.empty()) {  // `f32[()]`
      diags_.report(kBadIndex, e.range, "a tensor type needs at least one dimension");
      return std::nullopt;
    }
    for (const Entry& d : dims) {
      std::optional<int64_t> n = constInt(d, "an allocation dimension");
      if (!n) return std::nullopt;
      if (*n <= 0) {
        diags_.report(kBadIndex, d.range, fmt::format("a dimension must be positive, found {}", *n));
        return std::nullopt;
      }
      v.ttype.staticShape.push_back(*n);
      v.ttype.shape.push_back(tir::intConst(*n, Type::I64));
    }
    return v;
  }
  if (base->kind != Value::Kind::View) {
    diags_.report(kTypeMismatch, ix.base->range, fmt::format("{} cannot be indexed", describe(*base)));
    return std::nullopt;
  }
  const tile::View& view = base->view;
  const tile::Tensor& t = k_.tensors[view.tensor];
  if (ix.indices.size() > view.rank()) {
    diags_.report(kBadIndex, e.range,
                  fmt::format("'{}' has {} dimensions but is indexed with {}", t.name, view.rank(), ix.indices.size()));
    return std::nullopt;
  }
  std::optional<std::vector<ExprRef>> idx = indices(ix.indices);
  if (!idx) return std::nullopt;
  if (!indicesInside(view, *idx, ix.indices)) return std::nullopt;
  if (idx->size() < view.rank()) {
    // Partial indexing drops leading dimensions: `As[stage]`.
    tile::View sub = view;
    sub.loc = e.range;
    for (size_t i = 0; i < idx->size(); ++i) {
      int d = view.dims[i];
      sub.origin[d] = tir::add(sub.origin[d], (*idx)[i]);
    }
    sub.dims.erase(sub.dims.begin(), sub.dims.begin() + static_cast<long>(idx->size()));
    sub.shape.erase(sub.shape.begin(), sub.shape.begin() + static_cast<long>(idx->size()));
    return Value::ofView(std::move(sub));
  }
  if (t.mbarriers) {
    // `bars[i]`: one barrier, for arrive and wait_barrier (a barrier holds no value to load).
    tile::View one = view;
    one.loc = e.range;
    for (size_t i = 0; i < idx->size(); ++i) one.origin[view.dims[i]] = tir::add(one.origin[view.dims[i]], (*idx)[i]);
    one.dims.clear();
    one.shape.clear();
    return Value::ofView(std::move(one));
  }
  if (t.space == tile::MemSpace::Local) {
    std::optional<tir::Reg> reg = registerElement(e.range, view, *idx, ix.indices);
    if (!reg) return std::nullopt;
    return Value::runtime(tir::regRef(k_.skeleton, *reg));
  }
  // Global or shared memory: load into a fresh register.
  uint32_t var = newVar(t.name + "_elem", tile::toTir(t.dtype));
  tile::ElemLoad load{tir::Reg::var(var), view, *idx};
  load.view.loc = e.range;
  emit(e.range, std::move(load));
  return Value::runtime(tir::varRef(k_.skeleton, var));
}

std::optional<Value> KernelSema::expr(const ast::Expr& e) {
  return std::visit(
      [&](const auto& n) -> std::optional<Value> {
        using T = std::decay_t<decltype(n)>;
        if constexpr (std::is_same_v<T, ast::IntLit> || std::is_same_v<T, ast::FloatLit> ||
                      std::is_same_v<T, ast::OnAxis> || std::is_same_v<T, ast::IterSpec>) {
          return constExpr(e);
        } else if constexpr (std::is_same_v<T, ast::Name>) {
          return name(e, n.name);
        } else if constexpr (std::is_same_v<T, ast::Tuple>) {
          for (const ast::ExprPtr& el : n.elems) {
            std::optional<Value> v = expr(*el);
            if (!v) return std::nullopt;
            if (v->kind != Value::Kind::Const) {
              diags_.report(kNotConstant, el->range,
                            "tuples hold compile-time values; run-time tuples are only written as arguments, as in "
                            "A.window((row, col), (16, 16))");
              return std::nullopt;
            }
          }
          return constExpr(e);
        } else if constexpr (std::is_same_v<T, ast::Binary>) {
          return binary(e, n);
        } else if constexpr (std::is_same_v<T, ast::Unary>) {
          return unary(e, n);
        } else if constexpr (std::is_same_v<T, ast::Member>) {
          return member(e, n);
        } else if constexpr (std::is_same_v<T, ast::Call>) {
          return call(e, n);
        } else {
          return index(e, n);
        }
      },
      e.node);
}

}  // namespace sema
}  // namespace tyl
