// Prints the host launcher of a kernel: it checks every run-time condition the layouts
// need, sets the shared-memory limit, launches, and returns the CUDA error.
#include <fmt/format.h>

#include "backend/cuda/EmitImpl.h"
#include "ir/thread/Builder.h"

namespace tyl::cuda {

namespace {

std::string paramList(const tir::Kernel& k, const ExprPrinter& names) {
  std::string s;
  for (size_t i = 0; i < k.params.size(); ++i) {
    const tir::Param& p = k.params[i];
    if (!s.empty()) s += ", ";
    if (p.isPointer) {
      bool ro = k.buffers.at(p.buffer).readOnly;
      s += fmt::format("{}{}* {}", ro ? "const " : "", pointerElemType(p.type), names.paramName(i));
    } else {
      s += fmt::format("{} {}", cppType(p.type), names.paramName(i));
    }
  }
  return s;
}

// The arguments of tylo::overlap for one pointer parameter: the pointer, the element size and
// {extent, stride} per dimension.
std::string footprint(const tir::Kernel& k, const ExprPrinter& host, int param) {
  const tir::Param& p = k.params.at(static_cast<size_t>(param));
  auto i64 = [&](const tir::ExprRef& e) {
    return e->type == tir::Type::I64 ? host.print(e) : fmt::format("int64_t({})", host.print(e));
  };
  std::string dims;
  for (size_t d = 0; d < p.shape.size(); ++d)
    dims += fmt::format("{}{{{}, {}}}", d ? ", " : "", i64(p.shape[d]), i64(p.strides[d]));
  return fmt::format("{}, {}, {{{}}}", host.paramName(static_cast<size_t>(param)), tir::typeBytes(p.type), dims);
}

std::string quoted(const std::string& s) { return "\"" + stringLiteralBody(s) + "\""; }

// The statement that refuses a launch because check `c` failed: its message, then the values
// the check read, as the emulator words them (" (n = 7, k = 3)"; a pointer's distance past the
// alignment it lacks), so that the caller sees which argument to change.
std::string refusal(const tir::Kernel& k, const ExprPrinter& host, const tir::LaunchCheck& c) {
  const std::string message = quoted(k.name + ": " + c.message);
  if (c.kind == tir::LaunchCheck::Kind::PointerAlignment) {
    const std::string& name = k.params.at(static_cast<size_t>(c.param)).name;
    return fmt::format("return tylo::launch_error_values({}, {}, static_cast<unsigned long long>("
                       "reinterpret_cast<uintptr_t>({}) % {}));",
                       message, quoted(fmt::format("; {} is %llu bytes past a multiple of {}", name, c.alignBytes)),
                       host.paramName(static_cast<size_t>(c.param)), c.alignBytes);
  }
  std::string format, args;
  if (c.kind == tir::LaunchCheck::Kind::Condition) {
    for (int id : tir::paramsRead(c.cond)) {
      const tir::Param& p = k.params.at(static_cast<size_t>(id));
      if (p.isPointer || tir::isFloat(p.type)) continue;
      const std::string& value = host.paramName(static_cast<size_t>(id));
      format += fmt::format("{}{} = {}", format.empty() ? " (" : ", ", p.name, p.type == tir::Type::Pred ? "%s" : "%lld");
      args += p.type == tir::Type::Pred ? fmt::format(", {} ? \"true\" : \"false\"", value)
                                        : fmt::format(", static_cast<long long>({})", value);
    }
  }
  if (format.empty()) return fmt::format("return tylo::launch_error({});", message);
  return fmt::format("return tylo::launch_error_values({}, {}{});", message, quoted(format + ")"), args);
}

}  // namespace

std::string launcherDeclaration(const tir::Kernel& k) {
  std::string params = paramList(k, ExprPrinter(k));
  return fmt::format("cudaError_t {}({}{}cudaStream_t stream = 0);\n", launcherName(k), params,
                     params.empty() ? "" : ", ");
}

std::string emitLauncher(const tir::Kernel& k, const EmitOptions&) {
  ExprPrinter host(k);
  std::string params = paramList(k, host);
  std::string out = fmt::format("cudaError_t {}({}{}cudaStream_t stream) {{\n", launcherName(k), params,
                                params.empty() ? "" : ", ");
  auto fail = [&](const std::string& msg) {
    return fmt::format("return tylo::launch_error({});", quoted(k.name + ": " + msg));
  };
  out += "  tylo::clear_launch_error();\n";
  // Conditions on the sizes first: they decide whether there is anything to launch.
  for (const tir::LaunchCheck& c : k.checks)
    if (c.beforeGrid) out += fmt::format("  if (!{}) {}\n", host.print(c.cond), refusal(k, host, c));
  const char* axes[] = {"x", "y", "z"};
  for (int i = 0; i < 3; ++i) out += fmt::format("  const int64_t tylo_grid_{} = {};\n", axes[i], host.print(k.grid[i]));
  out += fmt::format("  if (tylo_grid_x < 0 || tylo_grid_y < 0 || tylo_grid_z < 0) {}\n", fail("the grid size is negative"));
  out += fmt::format("  if (tylo_grid_x > int64_t{{2147483647}} || tylo_grid_y > 65535 || tylo_grid_z > 65535) {}\n",
                     fail("the grid is larger than CUDA allows"));
  out += "  if (tylo_grid_x == 0 || tylo_grid_y == 0 || tylo_grid_z == 0) return cudaSuccess;  // nothing to do\n";
  for (const tir::LaunchCheck& c : k.checks) {
    if (c.kind == tir::LaunchCheck::Kind::PointerAlignment) {
      out += fmt::format("  if (!tylo::is_aligned({}, {})) {}\n", host.paramName(c.param), c.alignBytes,
                         refusal(k, host, c));
    } else if (c.kind == tir::LaunchCheck::Kind::Disjoint) {
      out += fmt::format("  if (tylo::overlap({}, {})) {}\n", footprint(k, host, c.param), footprint(k, host, c.other),
                         refusal(k, host, c));
    } else if (!c.beforeGrid) {
      out += fmt::format("  if (!{}) {}\n", host.print(c.cond), refusal(k, host, c));
    }
  }
  if (k.sharedBytes > 48 * 1024) {
    out += fmt::format(
        "  {{\n    // More than 48 KB of dynamic shared memory must be requested explicitly.\n"
        "    const cudaError_t err = cudaFuncSetAttribute({}, cudaFuncAttributeMaxDynamicSharedMemorySize, {});\n"
        "    if (err != cudaSuccess) return tylo::launch_result(err, {});\n  }}\n",
        kernelSymbol(k), k.sharedBytes,
        quoted(fmt::format("{}: cudaFuncSetAttribute could not raise the dynamic shared-memory limit to {} bytes",
                           k.name, k.sharedBytes)));
  }
  // cudaGetLastError() below would also return an error left by an earlier call (another
  // launcher's failed cudaFuncSetAttribute, say): it is not this launch's.
  out += "  (void)cudaGetLastError();\n";
  // The tensor maps of TMA copies, from the tensors' pointers and sizes (the launch checks above
  // hold what the driver requires of them: 16-byte aligned pointers and strides).
  for (size_t m = 0; m < k.tensorMaps.size(); ++m) {
    const tir::TensorMap& map = k.tensorMaps[m];
    const tir::Param& p = k.params.at(static_cast<size_t>(map.param));
    std::string dims, strides, box;
    for (const tir::ExprRef& d : map.dims) dims += fmt::format("{}uint64_t({})", dims.empty() ? "" : ", ", host.print(d));
    for (const tir::ExprRef& s : map.strides)
      strides += fmt::format("{}uint64_t({})", strides.empty() ? "" : ", ", host.print(s));
    for (int64_t b : map.box) box += fmt::format("{}{}", box.empty() ? "" : ", ", b);
    out += fmt::format(
        "  CUtensorMap {map};\n"
        "  {{\n"
        "    const uint64_t dims[] = {{{dims}}};\n"
        "    const uint64_t strides[] = {{{strides}}};\n"
        "    const uint32_t box[] = {{{box}}};\n"
        "    if (!tylo::encode_tensor_map(&{map}, {ptr}, {bytes}, {rank}, dims, strides, box, {swizzle})) {fail}\n"
        "  }}\n",
        fmt::arg("map", tensorMapName(m)), fmt::arg("dims", dims), fmt::arg("strides", strides.empty() ? "0" : strides),
        fmt::arg("box", box), fmt::arg("ptr", host.paramName(static_cast<size_t>(map.param))),
        fmt::arg("bytes", tir::typeBytes(p.type)), fmt::arg("rank", map.dims.size()), fmt::arg("swizzle", map.swizzle),
        fmt::arg("fail", fail("cuTensorMapEncodeTiled refused the TMA tensor map of " + p.name)));
  }
  std::string args;
  for (size_t i = 0; i < k.params.size(); ++i) args += (args.empty() ? "" : ", ") + host.paramName(i);
  for (size_t m = 0; m < k.tensorMaps.size(); ++m) args += (args.empty() ? "" : ", ") + tensorMapName(m);
  out += fmt::format("  {}<<<dim3(static_cast<unsigned>(tylo_grid_x), static_cast<unsigned>(tylo_grid_y), "
                     "static_cast<unsigned>(tylo_grid_z)), dim3({}, {}, {}), {}, stream>>>({});\n",
                     kernelSymbol(k), k.block[0], k.block[1], k.block[2], k.sharedBytes, args);
  out += fmt::format("  return tylo::launch_result(cudaGetLastError(), {});\n}}\n",
                     quoted(k.name + ": the kernel launch failed (the returned cudaError_t says why)"));
  return out;
}

}  // namespace tyl::cuda
