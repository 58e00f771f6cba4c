// wgmma in the generated code: one device function per shape, type and operand majors the
// module uses, holding the inline PTX (wgmma.mma_async takes the N / 2 accumulator registers as
// separate operands, which only a function written out for each N can list).
#include <fmt/format.h>

#include <set>
#include <string>

#include "backend/cuda/EmitImpl.h"
#include "ir/thread/Walk.h"

namespace tyl::cuda {

std::string wgmmaFunctionName(const tir::Wgmma& op) {
  return fmt::format("tylo_wgmma_m64n{}k16_{}_{}{}", op.n, op.ab == tir::Type::F16 ? "f16" : "bf16",
                     !op.a.empty() ? "r" : op.transA ? "m" : "k", op.transB ? "m" : "k");
}

namespace {

// Calls fn(statement) for every wgmma of `b`, nested ones included.
template <class Fn>
void forEachWgmma(const tir::Block& b, Fn&& fn) {
  for (const tir::Stmt& s : b) {
    if (const auto* op = std::get_if<tir::Wgmma>(&s.node)) fn(s, *op);
    if (const auto* loop = std::get_if<tir::For>(&s.node)) forEachWgmma(loop->body, fn);
    if (const auto* branch = std::get_if<tir::If>(&s.node)) {
      forEachWgmma(branch->then, fn);
      forEachWgmma(branch->otherwise, fn);
    }
  }
}

std::string wgmmaFunction(const tir::Wgmma& op) {
  const int regs = op.n / 2;
  const char* type = op.ab == tir::Type::F16 ? "f16" : "bf16";
  std::string params, list, operands;
  for (int i = 0; i < regs; ++i) {
    params += fmt::format("{}float& d{}", i % 8 == 0 ? ",\n    " : ", ", i);
    list += fmt::format("{}%{}", i == 0 ? "" : ", ", i);
    operands += fmt::format("{}\"+f\"(d{})", i == 0 ? "" : i % 8 == 0 ? ",\n        " : ", ", i);
  }
  std::string pointers;
  for (int i = 0; i < regs; ++i) pointers += fmt::format("{}&d{}", i == 0 ? "" : ", ", i);
  if (!op.a.empty()) {
    // A from registers: four words of this warp's 16 rows (wgmma takes no transpose of A then).
    return fmt::format(
        "// wgmma m64n{n}k16: D (64 x {n}, f32) = A * B + (scale_d ? D : 0), A from registers (a0..a3: this\n"
        "// warp's 16 rows as mma.sync m16n8k16 holds its A), B {tb} from shared memory through its\n"
        "// descriptor; d0..d{last} are this thread's registers of D.\n"
        "__device__ __forceinline__ void {name}(uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, uint64_t desc_b,\n"
        "    int32_t scale_d{params}) {{\n"
        "#ifdef TYLO_HOST_THREADS\n"
        "  tylo::wgmma_on_host_ra({n}, tylo::WgmmaType::{type}, {transB}, {{a0, a1, a2, a3}}, desc_b, scale_d, "
        "{{{pointers}}});\n"
        "#else\n"
        "  asm volatile(\n"
        "      \"{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{scale}, 0;\\n\"\n"
        "      \"wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{type}.{type} {{{list}}}, {{%{a0}, %{a1}, %{a2}, %{a3}}}, \"\n"
        "      \"%{b}, p, 1, 1, {transB};\\n}}\\n\"\n"
        "      : {operands}\n"
        "      : \"r\"(a0), \"r\"(a1), \"r\"(a2), \"r\"(a3), \"l\"(desc_b), \"r\"(scale_d));\n"
        "#endif\n"
        "}}\n\n",
        fmt::arg("n", op.n), fmt::arg("tb", op.transB ? "MN-major" : "K-major"), fmt::arg("last", regs - 1),
        fmt::arg("name", wgmmaFunctionName(op)), fmt::arg("params", params), fmt::arg("type", type),
        fmt::arg("transB", op.transB ? 1 : 0), fmt::arg("pointers", pointers), fmt::arg("list", list),
        fmt::arg("a0", regs), fmt::arg("a1", regs + 1), fmt::arg("a2", regs + 2), fmt::arg("a3", regs + 3),
        fmt::arg("b", regs + 4), fmt::arg("scale", regs + 5), fmt::arg("operands", operands));
  }
  return fmt::format(
      "// wgmma m64n{n}k16: D (64 x {n}, f32) = A * B + (scale_d ? D : 0), A {ta} and B {tb} from shared\n"
      "// memory through their descriptors; d0..d{last} are this thread's registers of D.\n"
      "__device__ __forceinline__ void {name}(uint64_t desc_a, uint64_t desc_b, int32_t scale_d{params}) {{\n"
      "#ifdef TYLO_HOST_THREADS\n"
      "  tylo::wgmma_on_host({n}, tylo::WgmmaType::{type}, {transA}, {transB}, desc_a, desc_b, scale_d, {{{pointers}}});\n"
      "#else\n"
      "  asm volatile(\n"
      "      \"{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{scale}, 0;\\n\"\n"
      "      \"wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{type}.{type} {{{list}}}, %{a}, %{b}, p, 1, 1, {transA}, \"\n"
      "      \"{transB};\\n}}\\n\"\n"
      "      : {operands}\n"
      "      : \"l\"(desc_a), \"l\"(desc_b), \"r\"(scale_d));\n"
      "#endif\n"
      "}}\n\n",
      fmt::arg("n", op.n), fmt::arg("ta", op.transA ? "MN-major" : "K-major"),
      fmt::arg("tb", op.transB ? "MN-major" : "K-major"), fmt::arg("last", regs - 1),
      fmt::arg("name", wgmmaFunctionName(op)), fmt::arg("params", params), fmt::arg("type", type),
      fmt::arg("transA", op.transA ? 1 : 0), fmt::arg("transB", op.transB ? 1 : 0), fmt::arg("pointers", pointers),
      fmt::arg("scale", regs + 2), fmt::arg("list", list), fmt::arg("a", regs), fmt::arg("b", regs + 1),
      fmt::arg("operands", operands));
}

}  // namespace

std::string wgmmaFunctions(const tir::Module& module) {
  std::set<std::string> seen;
  std::string out;
  for (const tir::Kernel& k : module.kernels)
    forEachWgmma(k.body, [&](const tir::Stmt&, const tir::Wgmma& op) {
      if (seen.insert(wgmmaFunctionName(op)).second) out += wgmmaFunction(op);
    });
  return out;
}

}  // namespace tyl::cuda
