#include "backend/cuda/CudaPrinter.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>
#include <cstring>

#include "ir/thread/Builder.h"

namespace tyl::cuda {

using tir::Type;

const char* cppType(Type t) {
  switch (t) {
    case Type::Pred: return "bool";
    case Type::I32: return "int32_t";
    case Type::I64: return "int64_t";
    case Type::U32: return "uint32_t";
    case Type::F32: return "float";
    case Type::F16: return "__half";
    case Type::BF16: return "__nv_bfloat16";
  }
  return "void";
}

const char* pointerElemType(Type t) { return cppType(t); }

std::string intLiteral(int64_t v, Type t) {
  if (t == Type::Pred) return v ? "true" : "false";
  if (t == Type::I64) {
    if (v == INT64_MIN) return "INT64_MIN";
    return "int64_t{" + std::to_string(v) + "}";
  }
  if (t == Type::U32) return fmt::format("{}u", static_cast<uint32_t>(v));
  if (v == INT32_MIN) return "(-2147483647 - 1)";
  return fmt::format("{}", v);
}

std::string floatLiteral(double v) {
  if (std::isnan(v)) return "__int_as_float(0x7fffffff)";
  // A finite double past the largest f32 rounds to an infinity too.
  const float f = static_cast<float>(v);
  if (std::isinf(f)) return f > 0 ? "__int_as_float(0x7f800000)" : "__int_as_float(0xff800000)";
  std::string s = fmt::format("{:.9g}", f);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s + "f";
}

namespace {

// Whether `name` is a CUDA vector type: char1 .. double4, uchar2, ulonglong4, ...
bool vectorTypeName(std::string_view name) {
  if (name.size() < 2 || name.back() < '1' || name.back() > '4') return false;
  std::string_view base = name.substr(0, name.size() - 1);
  if (base.size() > 1 && base[0] == 'u' && base != "ushort") base.remove_prefix(1);
  for (std::string_view t : {"char", "short", "ushort", "int", "long", "longlong", "float", "double"})
    if (base == t) return true;
  return false;
}

// Whether `name`, spelled as it is, could be a macro of the C, C++ or CUDA headers the
// generated code includes: NAN, EOF, INT32_MAX, CUDART_VERSION (upper case, at least three
// characters), M_PIf, L_tmpnam, NV_HAS_FEATURE_SM_90a (their prefixes).
bool macroLike(std::string_view name) {
  const bool upper = name.size() >= 3 && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isupper(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_';
  });
  return upper || name.starts_with("M_") || name.starts_with("L_") || name.starts_with("P_") ||
         name.starts_with("NV_");
}

}  // namespace

// C++ and CUDA names a .tyl identifier may spell; they get a trailing underscore, as do
// names in the generated code's own `tylo_` namespace of identifiers. Besides the keywords:
// what the generated code calls or names unqualified, what the included headers declare at
// global scope (where the launchers are), their macros, and every name of the CUDA runtime
// (`cuda...`, `CUDA...`).
std::string safeName(const std::string& name) {
  static const std::set<std::string, std::less<>> reserved = {
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch",
      "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval", "constexpr",
      "constinit", "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype", "default", "delete",
      "do", "double", "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for",
      "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
      "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register", "reinterpret_cast",
      "requires", "return", "short", "signed", "sizeof", "static", "static_assert", "static_cast", "struct",
      "switch", "template", "this", "thread_local", "throw", "true", "try", "typedef", "typeid", "typename",
      "union", "unsigned", "using", "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq",
      // CUDA built-ins, types and functions the generated code uses.
      "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "dim3", "stream", "make_uint2", "make_uint4",
      "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t", "uintptr_t",
      "intptr_t", "size_t", "ptrdiff_t", "uint", "ushort", "ulong", "half", "half2", "nv_bfloat16", "nv_bfloat162",
      "min", "max", "fminf", "fmaxf", "tylo", "std", "main",
      // Macros of the C library and the compiler spelled in lower case.
      "assert", "assert_perror", "errno", "stdin", "stdout", "stderr", "offsetof", "math_errhandling", "alloca",
      "strdupa", "strndupa", "unix", "linux", "isascii", "toascii", "issubnormal", "_tolower", "_toupper",
      "be16toh", "be32toh", "be64toh", "le16toh", "le32toh", "le64toh", "htobe16", "htobe32", "htobe64", "htole16",
      "htole32", "htole64"};
  // ctype's isalpha_l, toascii_l, ...
  const bool localeMacro = name.size() > 2 && name.ends_with("_l") && (name.starts_with("is") || name.starts_with("to"));
  if (reserved.count(name) || localeMacro || vectorTypeName(name) || macroLike(name) || name.rfind("cuda", 0) == 0 ||
      name.rfind("CUDA", 0) == 0 || name.rfind("tylo_", 0) == 0 || name.rfind("__", 0) == 0 ||
      (name.size() > 1 && name[0] == '_' && std::isupper(static_cast<unsigned char>(name[1]))))
    return name + "_";
  return name;
}

namespace {

// Gives each name a spelling not taken yet: safeName(name), or that with _2, _3, ...
class UniqueNames {
 public:
  std::string operator()(const std::string& name) {
    std::string base = safeName(name), n = base;
    for (int i = 2; taken_.count(n); ++i) n = fmt::format("{}_{}", base, i);
    taken_.insert(n);
    return n;
  }
  void take(const std::string& spelled) { taken_.insert(spelled); }

 private:
  std::set<std::string, std::less<>> taken_;
};

}  // namespace

ExprPrinter::ExprPrinter(const tir::Kernel& k) : k_(k) {
  UniqueNames unique;
  for (const tir::Param& p : k.params) params_.push_back(unique(p.name));
}

const tir::KernelRanges& ExprPrinter::ranges() const {
  if (!ranges_) ranges_.emplace(k_);
  return *ranges_;
}

const ExprPrinter::Locals& ExprPrinter::locals() const {
  if (locals_) return *locals_;
  UniqueNames unique;
  for (const std::string& p : params_) unique.take(p);
  Locals l;
  for (const tir::Buffer& b : k_.buffers) l.buffers.push_back(b.space == tir::Space::Shared ? unique(b.name) : "");
  for (const tir::Array& a : k_.arrays) l.arrays.push_back(unique(a.name));
  for (const tir::Var& v : k_.vars) l.vars.push_back(unique(v.name));
  return *(locals_ = std::move(l));
}

std::string ExprPrinter::reg(const tir::Reg& r) const {
  if (r.isVar) return varName(r.id);
  const tir::Array& a = k_.arrays.at(r.id);
  if (tir::typeBytes(a.elem) == 2)
    return fmt::format("tylo::get_{}({}, {})", a.elem == Type::F16 ? "f16" : "bf16", arrayName(r.id), r.index);
  return fmt::format("{}[{}]", arrayName(r.id), r.index);
}

std::string ExprPrinter::castTo(Type to, const tir::ExprRef& a) const {
  Type from = a->type;
  std::string inner = print(a);
  if (from == to) return inner;
  auto isHalf = [](Type t) { return t == Type::F16 || t == Type::BF16; };
  if (isHalf(from) && isHalf(to)) return castTo(to, tir::cast(Type::F32, a));
  if (from == Type::F16) inner = fmt::format("__half2float({})", inner);
  if (from == Type::BF16) inner = fmt::format("__bfloat162float({})", inner);
  if (isHalf(from)) from = Type::F32;
  if (to == Type::F16) return fmt::format("__float2half_rn({})", from == Type::F32 ? inner : fmt::format("static_cast<float>({})", inner));
  // An integer rounds to bfloat16 once (through f32, one above 2^24 would round twice).
  if (to == Type::BF16 && from == Type::I32) return fmt::format("__int2bfloat16_rn({})", inner);
  if (to == Type::BF16 && from == Type::U32) return fmt::format("__uint2bfloat16_rn({})", inner);
  if (to == Type::BF16 && from == Type::I64) return fmt::format("__ll2bfloat16_rn({})", inner);
  if (to == Type::BF16)
    return fmt::format("__float2bfloat16_rn({})", from == Type::F32 ? inner : fmt::format("static_cast<float>({})", inner));
  if (from == to) return inner;
  // Float to integer truncates and saturates (NaN gives 0), as PTX's cvt.rzi does; C++ would
  // leave a value out of range undefined.
  if (from == Type::F32 && tir::isInt(to)) return fmt::format("tylo::float_to_{}({})", tir::typeName(to), inner);
  return fmt::format("static_cast<{}>({})", cppType(to), inner);
}

std::string ExprPrinter::binary(const tir::Expr& e) const {
  using tir::BinOp;
  std::string a = print(e.args[0]);
  std::string b = print(e.args[1]);
  const char* op = nullptr;
  switch (e.bin) {
    case BinOp::Add: op = "+"; break;
    case BinOp::Sub: op = "-"; break;
    case BinOp::Mul:
      // Each product rounded on its own, as the IR defines (no FMA contraction).
      if (e.type == Type::F32) return fmt::format("tylo::fmul({}, {})", a, b);
      op = "*";
      break;
    case BinOp::Div: op = "/"; break;
    case BinOp::Rem: op = "%"; break;
    case BinOp::Shl: op = "<<"; break;
    case BinOp::Shr: op = ">>"; break;
    case BinOp::And: op = "&"; break;
    case BinOp::Or: op = "|"; break;
    case BinOp::Xor: op = "^"; break;
    case BinOp::Lt: op = "<"; break;
    case BinOp::Le: op = "<="; break;
    case BinOp::Gt: op = ">"; break;
    case BinOp::Ge: op = ">="; break;
    case BinOp::Eq: op = "=="; break;
    case BinOp::Ne: op = "!="; break;
    // Operands are side-effect free: evaluate both, so predicates compile without branches.
    case BinOp::LAnd: op = "&"; break;
    case BinOp::LOr: op = "|"; break;
    case BinOp::Min: return fmt::format("tylo::min({}, {})", a, b);
    case BinOp::Max: return fmt::format("tylo::max({}, {})", a, b);
  }
  // Where C++ could overflow, shift too far or divide by 0 (or -1) into undefined behaviour,
  // a helper computes what the IR defines. The operands print as int32_t, int64_t or
  // uint32_t expressions (literals too), which pick the helper's overload.
  if (!ranges().plainInCpp(e)) {
    switch (e.bin) {
      case BinOp::Add: return fmt::format("tylo::wrap_add({}, {})", a, b);
      case BinOp::Sub: return fmt::format("tylo::wrap_sub({}, {})", a, b);
      case BinOp::Mul: return fmt::format("tylo::wrap_mul({}, {})", a, b);
      case BinOp::Div: return fmt::format("tylo::div({}, {})", a, b);
      case BinOp::Rem: return fmt::format("tylo::rem({}, {})", a, b);
      case BinOp::Shl: return fmt::format("tylo::shl({}, {})", a, b);
      case BinOp::Shr: return fmt::format("tylo::shr({}, {})", a, b);
      default: break;
    }
  }
  return fmt::format("({} {} {})", a, op, b);
}

std::string ExprPrinter::print(const tir::ExprRef& e) const {
  switch (e->kind) {
    case tir::ExprKind::IntConst: return intLiteral(e->value, e->type);
    case tir::ExprKind::FloatConst: return floatLiteral(e->real);
    case tir::ExprKind::VarRef: return varName(e->id);
    case tir::ExprKind::ParamRef: return paramName(e->id);
    case tir::ExprKind::SpecialReg: {
      bool oneDim = k_.block[1] == 1 && k_.block[2] == 1;
      std::string linear = oneDim ? "static_cast<int32_t>(threadIdx.x)"
                                  : "static_cast<int32_t>(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * "
                                    "threadIdx.z))";
      switch (e->special) {
        case tir::Special::TidX: return "static_cast<int32_t>(threadIdx.x)";
        case tir::Special::TidY: return "static_cast<int32_t>(threadIdx.y)";
        case tir::Special::TidZ: return "static_cast<int32_t>(threadIdx.z)";
        case tir::Special::CtaidX: return "static_cast<int32_t>(blockIdx.x)";
        case tir::Special::CtaidY: return "static_cast<int32_t>(blockIdx.y)";
        case tir::Special::CtaidZ: return "static_cast<int32_t>(blockIdx.z)";
        case tir::Special::NctaidX: return "static_cast<int32_t>(gridDim.x)";
        case tir::Special::NctaidY: return "static_cast<int32_t>(gridDim.y)";
        case tir::Special::NctaidZ: return "static_cast<int32_t>(gridDim.z)";
        case tir::Special::LaneId: return fmt::format("({} & 31)", linear);
        case tir::Special::WarpId: return fmt::format("({} >> 5)", linear);
        case tir::Special::SharedBase: return "static_cast<int32_t>(tylo::smem_addr(tylo_smem))";
        case tir::Special::ElectOne: return "tylo::elect_one()";
        case tir::Special::ClusterRank: return "tylo::cluster_rank()";
        case tir::Special::SmCount: return "static_cast<int32_t>(tylo::sm_count())";  // in the launcher
      }
      return "0";
    }
    case tir::ExprKind::Elem: return reg(tir::Reg::elem(e->id, e->index));
    case tir::ExprKind::Binary: return binary(*e);
    case tir::ExprKind::Unary:
      switch (e->un) {
        case tir::UnOp::Neg:
          if (!ranges().plainInCpp(*e)) return fmt::format("tylo::wrap_neg({})", print(e->args[0]));
          {
            // -(-5.5f), not --5.5f, which C++ reads as a decrement.
            const std::string operand = print(e->args[0]);
            return operand.starts_with('-') ? fmt::format("(-({}))", operand) : fmt::format("(-{})", operand);
          }
        case tir::UnOp::Not: return fmt::format("(!{})", print(e->args[0]));
        case tir::UnOp::Relu: return fmt::format("tylo::max({}, 0.0f)", print(e->args[0]));
        default: return fmt::format("tylo::{}({})", tir::unaryFunctionName(e->un), print(e->args[0]));
      }
    case tir::ExprKind::Select:
      return fmt::format("({} ? {} : {})", print(e->args[0]), print(e->args[1]), print(e->args[2]));
    case tir::ExprKind::Cast: return castTo(e->type, e->args[0]);
  }
  return "0";
}

}  // namespace tyl::cuda
