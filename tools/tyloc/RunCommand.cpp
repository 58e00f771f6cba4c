#include "tools/tyloc/RunCommand.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cfenv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <iostream>
#include <map>
#include <optional>

#include "backend/emu/Digest.h"
#include "backend/emu/Emulator.h"
#include "backend/emu/Npy.h"
#include "backend/emu/Values.h"
#include "ir/thread/ValueRange.h"
#include "tools/tyloc/Pipeline.h"

namespace tyl::driver {

namespace {

// The emulator runs about a million warp instructions a second: the default stops an
// endless loop within a minute or two; --max-steps raises it for long runs.
constexpr int64_t kDefaultMaxSteps = int64_t{1} << 26;

struct RunOptions {
  std::string input;
  std::string kernel;
  std::vector<std::string> sets;
  std::vector<std::string> inputs;
  std::string dumpDir;
  std::string seed = "1";
  std::string maxSteps = std::to_string(kDefaultMaxSteps);
  std::string smCount = "132";
  std::string arch = "sm_80";
  bool diagnosticsJson = false;
};

// Command-line misuse discovered after parsing: one line, exit 2.
struct Misuse {
  std::string message;
};

// The f16 or bf16 value nearest the decimal `text`, rounded once, as its bits; nullopt when
// `text` is not a number. strtof rounding down and up gives the floats around the decimal.
// Equal, the decimal is that float, which rounds once. Otherwise no tie of the 16-bit format
// lies strictly between them, as ties are floats: the two round alike, or one of them is the
// tie, and the decimal lies on the other one's side of it.
std::optional<uint64_t> nearest16(tir::Type type, const std::string& text) {
  auto parse = [&](int mode) -> std::optional<float> {
    const int saved = std::fegetround();
    std::fesetround(mode);
    char* end = nullptr;
    const float v = std::strtof(text.c_str(), &end);
    std::fesetround(saved);
    if (text.empty() || end != text.c_str() + text.size()) return std::nullopt;
    return v;
  };
  const std::optional<float> down = parse(FE_DOWNWARD), up = parse(FE_UPWARD);
  if (!down || !up) return std::nullopt;
  const uint64_t below = emu::fromFloat(type, *down), above = emu::fromFloat(type, *up);
  if (std::isnan(*down) || below == above) return below;
  // The tie between the two 16-bit values; past the largest finite one, the overflow threshold.
  const double lo = emu::toDouble(type, below), hi = emu::toDouble(type, above);
  double tie = (lo + hi) / 2;
  if (std::isinf(hi)) tie = lo + (lo - emu::toDouble(type, below - 1)) / 2;
  if (std::isinf(lo)) tie = hi + (hi - emu::toDouble(type, above - 1)) / 2;
  return static_cast<double>(*up) == tie ? below : above;
}

// Parses one scalar value for a parameter of `type`.
emu::Arg scalarArg(const tir::Param& p, const std::string& text) {
  if (p.type == tir::Type::Pred) {
    // As the language spells them.
    if (text == "true" || text == "True" || text == "1") return emu::Arg::integer(1);
    if (text == "false" || text == "False" || text == "0") return emu::Arg::integer(0);
    throw Misuse{fmt::format("--set {}={}: expected true or false (or True, False, 1, 0)", p.name, text)};
  }
  if (p.type == tir::Type::F32) {
    // strtof rounds the decimal to f32 once, as a float literal in C++ is; through a double
    // it would be rounded twice, which can differ by one step.
    errno = 0;
    char* end = nullptr;
    const float v = std::strtof(text.c_str(), &end);
    if (!text.empty() && end == text.c_str() + text.size()) {
      if (errno == ERANGE && std::isinf(v))
        throw Misuse{fmt::format("--set {}={}: out of range for f32", p.name, text)};
      return emu::Arg::real(v);
    }
    throw Misuse{fmt::format("--set {}={}: expected a floating-point value", p.name, text)};
  }
  if (p.type == tir::Type::F16 || p.type == tir::Type::BF16) {
    const std::optional<uint64_t> bits = nearest16(p.type, text);
    if (!bits) throw Misuse{fmt::format("--set {}={}: expected a floating-point value", p.name, text)};
    const double v = emu::toDouble(p.type, *bits);
    // Infinite only when the text says so ("inf"): a finite decimal past the largest value
    // (even past the largest double, which strtod reports as ERANGE) is refused.
    errno = 0;
    const double d = std::strtod(text.c_str(), nullptr);
    if (std::isinf(v) && (!std::isinf(d) || errno == ERANGE))
      throw Misuse{fmt::format("--set {}={}: out of range for {}", p.name, text, tir::typeName(p.type))};
    return emu::Arg::real(v);
  }
  try {
    size_t used = 0;
    long long v = std::stoll(text, &used, 0);
    if (used == text.size()) {
      // A value the parameter's type cannot hold would silently wrap.
      const tir::Range range = tir::typeRange(p.type);
      if (v < range.lo || v > range.hi) throw Misuse{fmt::format("--set {}={}: out of range for {}", p.name, text, tir::typeName(p.type))};
      return emu::Arg::integer(v);
    }
  } catch (const std::invalid_argument&) {
  } catch (const std::out_of_range&) {
    throw Misuse{fmt::format("--set {}={}: out of range for {}", p.name, text, tir::typeName(p.type))};
  }
  throw Misuse{fmt::format("--set {}={}: expected an integer value", p.name, text)};
}

std::string shapeText(const std::vector<int64_t>& shape) {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) s += fmt::format("{}{}", i ? ", " : "", shape[i]);
  return s;
}

// Moves a tensor's elements between a strided buffer and a dense C-order array.
void forEachElement(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides,
                    const std::function<void(int64_t dense, int64_t offset)>& f) {
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  for (int64_t i = 0; i < count; ++i) {
    int64_t rest = i, offset = 0;
    for (size_t d = shape.size(); d-- > 0;) {
      offset += (rest % shape[d]) * strides[d];
      rest /= shape[d];
    }
    f(i, offset);
  }
}

// NAME=VALUE arguments of a repeatable flag, each name at most once.
std::map<std::string, std::string> namedValues(const char* flag, const std::vector<std::string>& given,
                                               const char* form) {
  std::map<std::string, std::string> values;
  for (const std::string& s : given) {
    size_t eq = s.find('=');
    if (eq == std::string::npos || eq == 0) throw Misuse{fmt::format("{} {}: expected {}", flag, s, form)};
    if (!values.emplace(s.substr(0, eq), s.substr(eq + 1)).second)
      throw Misuse{fmt::format("{} {}: '{}' is given twice", flag, s, s.substr(0, eq))};
  }
  return values;
}

// A whole number from lo to hi, for flags whose values CLI11 would saturate or wrap.
uint64_t parseCount(std::string_view flag, const std::string& text, uint64_t lo, uint64_t hi) {
  size_t used = 0;
  try {
    if (!text.empty() && text[0] != '-' && text[0] != '+') {
      unsigned long long v = std::stoull(text, &used, 10);
      if (used == text.size() && v >= lo && v <= hi) return v;
    }
  } catch (const std::exception&) {
  }
  throw Misuse{fmt::format("{} {}: expected an integer from {} to {}", flag, text, lo, hi)};
}

int runKernel(const RunOptions& o) {
  SourceManager sources;
  std::optional<FileId> file = loadInput(sources, o.input);
  if (!file) return kExitMisuse;
  DiagnosticEngine diags(sources);
  auto render = [&] {
    if (o.diagnosticsJson)
      diags.renderJson(std::cerr);
    else
      diags.renderText(std::cerr);
  };
  // Only the kernel asked for: another's errors or warnings are not this run's business.
  std::optional<tir::Module> module = compileToThreadIR(sources, *file, diags, archOf(o.arch), o.kernel);
  if (!module) {
    render();
    return kExitUserError;
  }
  const tir::Kernel* kernel = nullptr;
  for (const tir::Kernel& k : module->kernels)
    if (k.name == o.kernel) kernel = &k;
  // The file's kernels, for the messages below: analysed again, all of them, their diagnostics
  // left aside.
  std::string names;
  if (!kernel) {
    DiagnosticEngine quiet(sources);
    if (std::optional<tir::Module> all = compileToThreadIR(sources, *file, quiet, archOf(o.arch)))
      for (const tir::Kernel& k : all->kernels) names += (names.empty() ? "" : ", ") + k.name;
    else
      names = "the others do not compile; tyloc check says why";
  }
  if (o.kernel.empty()) {
    std::cerr << fmt::format("tyloc: error: tyloc run needs --kernel NAME, the kernel to run; '{}' has: {} (see tyloc "
                             "run --help)\n",
                             o.input, names.empty() ? "no kernels" : names);
    return kExitMisuse;
  }
  if (!kernel) {
    std::cerr << fmt::format("tyloc: error: no kernel '{}' in '{}' (kernels: {})\n", o.kernel, o.input, names);
    return kExitMisuse;
  }
  try {
    // Scalars from --set; every scalar parameter needs one.
    std::map<std::string, std::string> sets = namedValues("--set", o.sets, "NAME=VALUE");
    std::map<std::string, std::string> npyInputs = namedValues("--input", o.inputs, "NAME=FILE.npy");
    uint64_t seed = parseCount("--seed", o.seed, 0, UINT64_MAX);
    const auto maxSteps = static_cast<int64_t>(parseCount("--max-steps", o.maxSteps, 1, INT64_MAX));
    const auto smCount = static_cast<int>(parseCount("--sm-count", o.smCount, 1, 4096));
    std::vector<emu::Arg> args(kernel->params.size());
    std::vector<std::string> missing;
    for (size_t i = 0; i < kernel->params.size(); ++i) {
      const tir::Param& p = kernel->params[i];
      if (p.isPointer) continue;
      auto it = sets.find(p.name);
      if (it == sets.end()) {
        missing.push_back(fmt::format("{}: {}", p.name, tir::typeName(p.type)));
        continue;
      }
      args[i] = scalarArg(p, it->second);
      sets.erase(it);
    }
    if (!missing.empty()) {
      std::string list;
      for (const std::string& m : missing) list += (list.empty() ? "" : ", ") + m;
      throw Misuse{fmt::format("kernel '{}' needs --set for its scalar parameters ({})", o.kernel, list)};
    }
    if (!sets.empty()) throw Misuse{fmt::format("kernel '{}' has no scalar parameter '{}'", o.kernel, sets.begin()->first)};

    // Tensors: from .npy files, or random with the seed.
    struct TensorInfo {
      size_t param;
      std::vector<int64_t> shape, strides;
    };
    std::vector<TensorInfo> tensors;
    std::vector<emu::Buffer> buffers;
    for (size_t i = 0; i < kernel->params.size(); ++i) {
      const tir::Param& p = kernel->params[i];
      if (!p.isPointer) continue;
      // A negative dimension allocates nothing: the launch checks refuse it (emu-launch-failure).
      std::string why;
      std::optional<emu::TensorExtent> extent = emu::tensorExtent(p, args, &why);
      if (!extent)
        throw Misuse{fmt::format("the shape of tensor '{}' cannot be computed from these scalar values ({})",
                                 p.name, why)};
      TensorInfo info{i, std::move(extent->shape), std::move(extent->strides)};
      const int64_t span = extent->span;
      constexpr int64_t kMaxElements = int64_t{1} << 28;
      if (span > kMaxElements)
        throw Misuse{fmt::format("tensor '{}' would need {} elements; the emulator allocates at most {}", p.name,
                                 span == INT64_MAX ? std::string("more than 2^63") : std::to_string(span),
                                 kMaxElements)};
      emu::Buffer b = emu::makeBuffer(p.type, span);
      auto npy = npyInputs.find(p.name);
      if (npy != npyInputs.end()) {
        emu::NpyArray a;
        try {
          a = emu::readNpy(npy->second);
        } catch (const emu::NpyError& e) {
          throw Misuse{fmt::format("--input {}: '{}': {}", p.name, npy->second, e.what())};
        }
        if (a.type != p.type || a.shape != info.shape)
          throw Misuse{fmt::format("--input {}: '{}' holds {}[{}] but '{}' is {}[{}]", p.name, npy->second,
                                   tir::typeName(a.type), shapeText(a.shape), p.name, tir::typeName(p.type),
                                   shapeText(info.shape))};
        int eb = tir::typeBytes(p.type);
        forEachElement(info.shape, info.strides, [&](int64_t dense, int64_t offset) {
          std::memcpy(b.bytes.data() + offset * eb, a.data.data() + dense * eb, static_cast<size_t>(eb));
        });
        npyInputs.erase(npy);
      } else {
        emu::fillRandom(b, p.type, seed * 1000003 + i);
      }
      args[i] = emu::Arg::pointer(static_cast<int>(buffers.size()));
      buffers.push_back(std::move(b));
      tensors.push_back(std::move(info));
    }
    if (!npyInputs.empty())
      throw Misuse{fmt::format("kernel '{}' has no tensor parameter '{}'", o.kernel, npyInputs.begin()->first)};

    // Where the dump goes is checked before the run, which may take long.
    if (!o.dumpDir.empty()) {
      std::error_code ec;
      std::filesystem::create_directories(o.dumpDir, ec);
      if (ec || !std::filesystem::is_directory(o.dumpDir))
        throw Misuse{fmt::format("--dump {}: {}", o.dumpDir, ec ? ec.message() : "not a folder")};
    }
    emu::Options options;
    options.maxWarpInstructions = maxSteps;
    options.smCount = smCount;
    emu::RunResult r = emu::run(*kernel, args, buffers, options);
    emu::reportFindings(r.findings, diags);
    render();
    for (size_t t = 0; t < tensors.size(); ++t) {
      const tir::Param& p = kernel->params[tensors[t].param];
      std::cout << fmt::format("{}: {}[{}] digest {}\n", p.name, tir::typeName(p.type), shapeText(tensors[t].shape),
                               emu::digestHex(emu::digest(buffers[t].bytes)));
    }
    std::cout << fmt::format("{}: {} blocks, {} warp instructions, {} mma.sync{}, {} barriers{}\n", kernel->name,
                             r.stats.blocks, r.stats.warpInstructions, r.stats.mmas,
                             r.stats.wgmmas > 0 ? fmt::format(", {} wgmma", r.stats.wgmmas) : "", r.stats.barriers,
                             r.ok() ? "" : fmt::format(", {} problem{} found", r.findings.size(), r.findings.size() == 1 ? "" : "s"));
    // A refused launch ran nothing: there is nothing to look at, and files left from an earlier
    // run stay as they were rather than be replaced by the inputs.
    const bool refused = std::any_of(r.findings.begin(), r.findings.end(),
                                     [](const emu::Finding& f) { return f.kind == emu::FindingKind::LaunchFailure; });
    if (!o.dumpDir.empty() && refused && !o.diagnosticsJson)
      std::cerr << fmt::format("tyloc: note: nothing written to {}: the launch was refused, so the kernel did not run\n",
                               o.dumpDir);
    if (!o.dumpDir.empty() && !refused) {
      for (size_t t = 0; t < tensors.size(); ++t) {
        const tir::Param& p = kernel->params[tensors[t].param];
        emu::NpyArray a;
        a.type = p.type;
        a.shape = tensors[t].shape;
        int eb = tir::typeBytes(p.type);
        int64_t count = 1;
        for (int64_t d : a.shape) count *= d;
        a.data.resize(static_cast<size_t>(count * eb));
        forEachElement(a.shape, tensors[t].strides, [&](int64_t dense, int64_t offset) {
          std::memcpy(a.data.data() + dense * eb, buffers[t].bytes.data() + offset * eb, static_cast<size_t>(eb));
        });
        std::string path = (std::filesystem::path(o.dumpDir) / (p.name + ".npy")).string();
        std::string err = writeFileAtomically(path, emu::encodeNpy(a));
        if (!err.empty()) throw Misuse{err};
      }
    }
    return r.ok() ? kExitOk : kExitUserError;
  } catch (const Misuse& m) {
    std::cerr << "tyloc: error: " << m.message << "\n";
    return kExitMisuse;
  } catch (const emu::NpyError& e) {
    std::cerr << "tyloc: error: " << e.what() << "\n";
    return kExitMisuse;
  }
}

}  // namespace

void addRunCommand(CLI::App& app, std::function<int()>& run) {
  auto o = std::make_shared<RunOptions>();
  std::string format = "text";
  auto fmtPtr = std::make_shared<std::string>("text");
  CLI::App* cmd = app.add_subcommand(
      "run", "Run one kernel on the CPU emulator with random or .npy inputs, checking for races, out-of-bounds and "
             "uninitialized accesses");
  cmd->add_option("input", o->input, "The .tyl file")->required();
  cmd->add_option("--kernel", o->kernel,
                  "The kernel to run, required (generic kernels: e.g. gemm_f16; without it, the file's kernels "
                  "are listed)");
  cmd->add_option("--set", o->sets,
                  "Scalar parameters, NAME=VALUE: one or more after each --set (--set M=3 N=4 is --set M=3 --set N=4); "
                  "every scalar needs one")
      ->type_name("NAME=VALUE");
  cmd->add_option("--input", o->inputs,
                  "Read a tensor parameter from a .npy file, NAME=FILE.npy (repeatable): its logical shape, row-major "
                  "(C order) whatever the layout; bf16 as <u2 (the raw bits). Other tensors are random: floats in "
                  "[-1, 1), integers -8..8 (u32 0..16)")
      ->type_name("NAME=FILE");
  cmd->add_option("--dump", o->dumpDir,
                  "Write every tensor after the run to DIR/NAME.npy, in the order of --input (also when the run "
                  "found problems; not when the launch was refused, since nothing ran)")
      ->type_name("DIR")
      ->check([](const std::string& dir) { return dir.empty() ? std::string("needs a folder name") : std::string(); });
  cmd->add_option("--seed", o->seed, "Seed for the random inputs, 0 to 2^64-1 (default 1)");
  cmd->add_option("--arch", o->arch,
                  "Run the code generated for this target: sm_80 (default), sm_90 or sm_90a (which store 16-bit "
                  "fragments to shared memory with stmatrix where it applies)")
      ->check(CLI::IsMember({"sm_80", "sm_90", "sm_90a"}));
  cmd->add_option("--max-steps", o->maxSteps,
                  fmt::format("Stop with emu-step-limit after this many steps, 1 to 2^63-1: warp instructions, "
                              "and one per block (default {}; about a million run per second)",
                              kDefaultMaxSteps));
  cmd->add_option("--sm-count", o->smCount,
                  "The device's SM count that sm_count() and persistent_grid(...) read, 1 to 4096 (default 132, "
                  "an H100 SXM): a few make each block of a persistent kernel take several tiles");
  cmd->add_option("--diagnostics-format", *fmtPtr, "How problems are printed: text or json")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->callback([o, fmtPtr, &run] {
    o->diagnosticsJson = *fmtPtr == "json";
    run = [o] { return runKernel(*o); };
  });
  (void)format;
}

}  // namespace tyl::driver
