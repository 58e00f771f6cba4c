#include "ir/thread/Builder.h"

#include <algorithm>
#include <climits>
#include <optional>

#include "base/InternalError.h"

namespace tyl::tir {

int typeBytes(Type t) {
  switch (t) {
    case Type::Pred: return 1;
    case Type::F16:
    case Type::BF16: return 2;
    case Type::I64: return 8;
    default: return 4;
  }
}

bool isFloat(Type t) { return t == Type::F32 || t == Type::F16 || t == Type::BF16; }
bool isInt(Type t) { return t == Type::I32 || t == Type::I64 || t == Type::U32; }

const char* typeName(Type t) {
  switch (t) {
    case Type::Pred: return "pred";
    case Type::I32: return "i32";
    case Type::I64: return "i64";
    case Type::U32: return "u32";
    case Type::F32: return "f32";
    case Type::F16: return "f16";
    case Type::BF16: return "bf16";
  }
  return "?";
}

namespace {

ExprRef make(Expr e) { return std::make_shared<const Expr>(std::move(e)); }

// Wraps to the width of `type`, as the hardware would.
int64_t wrap(int64_t v, Type type) {
  if (type == Type::I32) return static_cast<int32_t>(static_cast<uint32_t>(v));
  if (type == Type::U32) return static_cast<uint32_t>(v);
  return v;
}

bool isComparison(BinOp op) { return op >= BinOp::Lt && op <= BinOp::Ne; }

}  // namespace

ExprRef intConst(int64_t value, Type type) {
  Expr e{ExprKind::IntConst, type};
  e.value = wrap(value, type);
  return make(e);
}

ExprRef floatConst(double value, Type type) {
  Expr e{ExprKind::FloatConst, type};
  e.real = value;
  return make(e);
}

ExprRef boolConst(bool value) {
  Expr e{ExprKind::IntConst, Type::Pred};
  e.value = value;
  return make(e);
}

ExprRef varRef(const Kernel& k, uint32_t var) {
  Expr e{ExprKind::VarRef, k.vars.at(var).type};
  e.id = var;
  return make(e);
}

ExprRef paramRef(const Kernel& k, int param) {
  Expr e{ExprKind::ParamRef, k.params.at(param).type};
  e.id = static_cast<uint32_t>(param);
  return make(e);
}

ExprRef special(Special s) {
  Expr e{ExprKind::SpecialReg, s == Special::ElectOne ? Type::Pred : Type::I32};
  e.special = s;
  return make(e);
}

ExprRef elemRef(const Kernel& k, uint32_t array, int64_t index) {
  Expr e{ExprKind::Elem, k.arrays.at(array).elem};
  e.id = array;
  e.index = index;
  return make(e);
}

ExprRef regRef(const Kernel& k, Reg reg) { return reg.isVar ? varRef(k, reg.id) : elemRef(k, reg.id, reg.index); }

bool isIntConst(const ExprRef& e, int64_t* value) {
  if (!e || e->kind != ExprKind::IntConst || e->type == Type::Pred) return false;
  if (value) *value = e->value;
  return true;
}

bool sameExpr(const ExprRef& a, const ExprRef& b) {
  if (a == b) return true;
  if (!a || !b || a->kind != b->kind || a->type != b->type) return false;
  if (a->value != b->value || a->id != b->id || a->index != b->index || a->special != b->special || a->real != b->real || a->bin != b->bin || a->un != b->un) return false;
  for (int i = 0; i < 3; ++i)
    if (!sameExpr(a->args[i], b->args[i])) return false;
  return true;
}

bool isTrue(const ExprRef& e) { return !e || (e->kind == ExprKind::IntConst && e->type == Type::Pred && e->value); }
bool isFalse(const ExprRef& e) { return e && e->kind == ExprKind::IntConst && e->type == Type::Pred && !e->value; }

namespace {

// Bounds [lo, hi] that an integer expression's value always lies in, where its form shows
// them: constants, masks with a non-negative constant, the lane id, and widenings of those.
std::optional<std::pair<int64_t, int64_t>> valueRange(const ExprRef& e) {
  int64_t c = 0;
  if (isIntConst(e, &c)) return std::pair{c, c};
  switch (e->kind) {
    case ExprKind::SpecialReg:
      if (e->special == Special::LaneId) return std::pair<int64_t, int64_t>{0, 31};
      return std::nullopt;
    case ExprKind::Cast:
      if (isInt(e->type) && isInt(e->args[0]->type) && typeBytes(e->type) >= typeBytes(e->args[0]->type) &&
          e->args[0]->type != Type::U32 && e->type != Type::U32)
        return valueRange(e->args[0]);
      return std::nullopt;
    case ExprKind::Binary:
      if (e->bin == BinOp::And && e->type != Type::U32)
        for (int i = 0; i < 2; ++i)
          if (isIntConst(e->args[i], &c) && c >= 0) return std::pair<int64_t, int64_t>{0, c};
      return std::nullopt;
    default: return std::nullopt;
  }
}

// `a op b` for a comparison that the operands' ranges decide, else nullopt.
std::optional<bool> decided(BinOp op, const ExprRef& a, const ExprRef& b) {
  auto ra = valueRange(a), rb = valueRange(b);
  if (!ra || !rb) return std::nullopt;
  auto [alo, ahi] = *ra;
  auto [blo, bhi] = *rb;
  switch (op) {
    case BinOp::Lt: return ahi < blo ? std::optional(true) : alo >= bhi ? std::optional(false) : std::nullopt;
    case BinOp::Le: return ahi <= blo ? std::optional(true) : alo > bhi ? std::optional(false) : std::nullopt;
    case BinOp::Gt: return alo > bhi ? std::optional(true) : ahi <= blo ? std::optional(false) : std::nullopt;
    case BinOp::Ge: return alo >= bhi ? std::optional(true) : ahi < blo ? std::optional(false) : std::nullopt;
    default: return std::nullopt;
  }
}

// `sum` less one of its terms equal to `term`, with the other terms in their order, when
// `sum` is a chain of additions (at most `depth` deep) that has such a term; else null.
ExprRef withoutTerm(const ExprRef& sum, const ExprRef& term, int depth) {
  if (depth == 0 || sum->kind != ExprKind::Binary || sum->bin != BinOp::Add) return nullptr;
  if (sameExpr(sum->args[1], term)) return sum->args[0];
  if (sameExpr(sum->args[0], term)) return sum->args[1];
  if (ExprRef left = withoutTerm(sum->args[0], term, depth - 1)) return binary(BinOp::Add, left, sum->args[1]);
  if (ExprRef right = withoutTerm(sum->args[1], term, depth - 1)) return binary(BinOp::Add, sum->args[0], right);
  return nullptr;
}

}  // namespace

ExprRef binary(BinOp op, ExprRef a, ExprRef b) {
  if (!a || !b) TYL_UNREACHABLE("{}", "thread IR: binary operand missing");
  if (op != BinOp::Shl && op != BinOp::Shr && a->type != b->type)
    TYL_UNREACHABLE("{}", std::string("thread IR: operand types differ: ") + typeName(a->type) + " and " +
                           typeName(b->type));
  Type type = isComparison(op) ? Type::Pred : a->type;
  int64_t x = 0, y = 0;
  bool ca = isIntConst(a, &x), cb = isIntConst(b, &y);
  if (op == BinOp::LAnd) {
    if (isTrue(a)) return b;
    if (isTrue(b)) return a;
    if (isFalse(a) || isFalse(b)) return boolConst(false);
  }
  if (op == BinOp::LOr) {
    if (isTrue(a) || isTrue(b)) return boolConst(true);
    if (isFalse(a)) return b;
    if (isFalse(b)) return a;
  }
  if ((op == BinOp::LAnd || op == BinOp::LOr) && sameExpr(a, b)) return a;
  if (isInt(a->type))
    if (std::optional<bool> known = decided(op, a, b)) return boolConst(*known);
  // select(c, x, y) op k with constant arms: select(c, x op k, y op k), so that
  // `(c ? 8 : 0) > 0` folds to c.
  int64_t k = 0, x0 = 0, y0 = 0;
  if (a->kind == ExprKind::Select && isIntConst(b, &k) && isIntConst(a->args[1], &x0) && isIntConst(a->args[2], &y0))
    return select(a->args[0], binary(op, a->args[1], b), binary(op, a->args[2], b));
  if (ca && cb && isInt(a->type)) {
    switch (op) {
      // Unsigned arithmetic wraps like the hardware instead of overflowing.
      case BinOp::Add: return intConst(static_cast<int64_t>(static_cast<uint64_t>(x) + static_cast<uint64_t>(y)), type);
      case BinOp::Sub: return intConst(static_cast<int64_t>(static_cast<uint64_t>(x) - static_cast<uint64_t>(y)), type);
      case BinOp::Mul: return intConst(static_cast<int64_t>(static_cast<uint64_t>(x) * static_cast<uint64_t>(y)), type);
      case BinOp::Div:
        if (y != 0 && !(y == -1 && x == INT64_MIN)) return intConst(x / y, type);
        break;
      case BinOp::Rem:
        if (y != 0 && y != -1) return intConst(x % y, type);
        break;
      case BinOp::Shl:
        if (y >= 0 && y < 64) return intConst(static_cast<int64_t>(static_cast<uint64_t>(x) << y), type);
        break;
      case BinOp::Shr:
        if (y >= 0 && y < 64) return intConst(x >> y, type);
        break;
      case BinOp::And: return intConst(x & y, type);
      case BinOp::Or: return intConst(x | y, type);
      case BinOp::Xor: return intConst(x ^ y, type);
      case BinOp::Min: return intConst(std::min(x, y), type);
      case BinOp::Max: return intConst(std::max(x, y), type);
      case BinOp::Lt: return boolConst(x < y);
      case BinOp::Le: return boolConst(x <= y);
      case BinOp::Gt: return boolConst(x > y);
      case BinOp::Ge: return boolConst(x >= y);
      case BinOp::Eq: return boolConst(x == y);
      case BinOp::Ne: return boolConst(x != y);
      default: break;
    }
  }
  // (x + c) + d == x + (c + d); (x + c) >> s == (x >> s) + (c >> s) and (x + c) & m == x & m
  // when c is a multiple of 2^s (of m + 1). Thread offsets such as tid + 128 then share one
  // decomposition of the thread id, and their constant parts stay visible to address analysis.
  int64_t c0 = 0;
  if (cb && isInt(type) && a->kind == ExprKind::Binary && a->bin == BinOp::Add && isIntConst(a->args[1], &c0)) {
    if (op == BinOp::Add)
      return binary(BinOp::Add, a->args[0],
                    intConst(static_cast<int64_t>(static_cast<uint64_t>(c0) + static_cast<uint64_t>(y)), type));
    if (op == BinOp::Shr && type != Type::U32 && y >= 0 && y < 32 && c0 % (int64_t{1} << y) == 0)
      return binary(BinOp::Add, binary(BinOp::Shr, a->args[0], b), intConst(c0 >> y, type));
    if (op == BinOp::And && y >= 0 && y < INT64_MAX && ((y + 1) & y) == 0 && c0 % (y + 1) == 0)
      return binary(BinOp::And, a->args[0], b);
  }
  if (isInt(type)) {
    // (x + y + z) - y == x + z, wrapping or not: a lane's coordinate less the lane's part of it.
    if (op == BinOp::Sub)
      if (ExprRef rest = withoutTerm(a, b, 4)) return rest;
    if (op == BinOp::Add && cb && y == 0) return a;
    if (op == BinOp::Add && ca && x == 0) return b;
    if (op == BinOp::Sub && cb && y == 0) return a;
    if (op == BinOp::Mul && cb && y == 1) return a;
    if (op == BinOp::Mul && ca && x == 1) return b;
    if (op == BinOp::Mul && ((cb && y == 0) || (ca && x == 0))) return intConst(0, type);
    if (op == BinOp::Div && cb && y == 1) return a;
    if (op == BinOp::Rem && cb && y == 1) return intConst(0, type);
    if ((op == BinOp::Xor || op == BinOp::Or || op == BinOp::Shl || op == BinOp::Shr) && cb && y == 0) return a;
    if ((op == BinOp::Xor || op == BinOp::Or) && ca && x == 0) return b;
    if (op == BinOp::And && ((cb && y == 0) || (ca && x == 0))) return intConst(0, type);
  }
  Expr e{ExprKind::Binary, type};
  e.bin = op;
  e.args = {std::move(a), std::move(b), nullptr};
  return make(e);
}

const char* unaryFunctionName(UnOp op) {
  switch (op) {
    case UnOp::Neg:
    case UnOp::Not: return nullptr;
    case UnOp::Relu: return "relu";
    case UnOp::Abs: return "abs";
    case UnOp::Sqrt: return "sqrt";
    case UnOp::Rsqrt: return "rsqrt";
    case UnOp::Exp2: return "exp2";
    case UnOp::Exp: return "exp";
    case UnOp::Log2: return "log2";
    case UnOp::Log: return "log";
    case UnOp::FastSqrt: return "fast_sqrt";
    case UnOp::FastRsqrt: return "fast_rsqrt";
    case UnOp::FastExp2: return "fast_exp2";
    case UnOp::FastExp: return "fast_exp";
    case UnOp::FastLog2: return "fast_log2";
    case UnOp::FastLog: return "fast_log";
  }
  return nullptr;
}

ExprRef unary(UnOp op, ExprRef a) {
  if (op == UnOp::Not && a->kind == ExprKind::IntConst && a->type == Type::Pred) return boolConst(!a->value);
  int64_t x = 0;
  if (op == UnOp::Neg && isIntConst(a, &x)) return intConst(-x, a->type);
  Expr e{ExprKind::Unary, a->type};
  e.un = op;
  e.args = {std::move(a), nullptr, nullptr};
  return make(e);
}

ExprRef select(ExprRef cond, ExprRef a, ExprRef b) {
  if (cond->kind == ExprKind::IntConst && cond->type == Type::Pred) return cond->value ? a : b;
  if (a->type == Type::Pred && a->kind == ExprKind::IntConst && b->kind == ExprKind::IntConst) {
    if (a->value && !b->value) return cond;
    if (!a->value && b->value) return unary(UnOp::Not, cond);
  }
  Expr e{ExprKind::Select, a->type};
  e.args = {std::move(cond), std::move(a), std::move(b)};
  return make(e);
}

ExprRef cast(Type type, ExprRef a) {
  if (a->type == type) return a;
  // Narrowing back what was widened is the original value.
  if (isInt(type) && a->kind == ExprKind::Cast && a->args[0]->type == type && isInt(a->type) &&
      typeBytes(a->type) >= typeBytes(type))
    return a->args[0];
  // Narrowing a widened value to at most its original width needs only the original bits.
  if (isInt(type) && a->kind == ExprKind::Cast && isInt(a->type) && isInt(a->args[0]->type) &&
      typeBytes(a->args[0]->type) < typeBytes(a->type) && typeBytes(type) <= typeBytes(a->args[0]->type))
    return cast(type, a->args[0]);
  int64_t x = 0;
  if (isInt(type) && isIntConst(a, &x)) return intConst(x, type);
  // An integer becomes the f32 nearest to it, in one rounding (through a double, one of 2^53 or
  // more could round twice).
  if (type == Type::F32 && isIntConst(a, &x)) return floatConst(static_cast<double>(static_cast<float>(x)), type);
  if (type == Type::F32 && a->kind == ExprKind::FloatConst) return floatConst(a->real, type);
  Expr e{ExprKind::Cast, type};
  e.args = {std::move(a), nullptr, nullptr};
  return make(e);
}

bool isWidening(const Expr& e) {
  return e.kind == ExprKind::Cast && isInt(e.type) && isInt(e.args[0]->type) && e.args[0]->type != Type::U32 &&
         typeBytes(e.args[0]->type) <= typeBytes(e.type);
}

bool mentionsSpecial(const ExprRef& e, Special s) {
  if (!e) return false;
  if (e->kind == ExprKind::SpecialReg) return e->special == s;
  return std::any_of(e->args.begin(), e->args.end(), [&](const ExprRef& a) { return mentionsSpecial(a, s); });
}

std::vector<int> paramsRead(const ExprRef& e) {
  std::vector<int> params;
  std::function<void(const ExprRef&)> walk = [&](const ExprRef& x) {
    if (!x) return;
    const int id = static_cast<int>(x->id);
    if (x->kind == ExprKind::ParamRef && std::find(params.begin(), params.end(), id) == params.end())
      params.push_back(id);
    for (const ExprRef& a : x->args) walk(a);
  };
  walk(e);
  return params;
}

bool speculatable(const Expr& e) {
  int64_t c = 0;
  // elect.sync is a warp-wide instruction: it stays where the warp runs it whole.
  if (e.kind == ExprKind::SpecialReg && e.special == Special::ElectOne) return false;
  if (e.kind == ExprKind::Binary) {
    switch (e.bin) {
      case BinOp::Div:
      case BinOp::Rem: return !isInt(e.type) || (isIntConst(e.args[1], &c) && c != 0 && c != -1);
      case BinOp::Shl:
      case BinOp::Shr: return isIntConst(e.args[1], &c) && c >= 0 && c < (e.type == Type::I64 ? 64 : 32);
      default: return true;
    }
  }
  // Float to integer conversions of out-of-range values are undefined in C++.
  if (e.kind == ExprKind::Cast) return !(isInt(e.type) && isFloat(e.args[0]->type));
  return true;
}

ExprRef substitute(const ExprRef& e, const std::function<ExprRef(const Expr& atom)>& value) {
  auto arg = [&](int i) { return substitute(e->args[i], value); };
  switch (e->kind) {
    case ExprKind::VarRef:
    case ExprKind::ParamRef:
    case ExprKind::SpecialReg:
    case ExprKind::Elem:
      if (ExprRef v = value(*e)) return v;
      return e;
    case ExprKind::Binary: return binary(e->bin, arg(0), arg(1));
    case ExprKind::Unary: return unary(e->un, arg(0));
    case ExprKind::Select: return select(arg(0), arg(1), arg(2));
    case ExprKind::Cast: return cast(e->type, arg(0));
    default: return e;
  }
}

uint32_t addVar(Kernel& k, std::string name, Type type) {
  k.vars.push_back(Var{std::move(name), type, false, std::nullopt, {}});
  return static_cast<uint32_t>(k.vars.size() - 1);
}

uint32_t addArray(Kernel& k, std::string name, Type elem, int64_t count) {
  k.arrays.push_back(Array{std::move(name), elem, count});
  return static_cast<uint32_t>(k.arrays.size() - 1);
}

}  // namespace tyl::tir
