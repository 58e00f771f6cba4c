#include "tests/fuzz/FuzzHarness.h"

#include <fmt/format.h>

#include <iostream>
#include <sstream>

#include "backend/cuda/EmitCuda.h"
#include "backend/emu/Emulator.h"
#include "backend/svg/LayoutSvg.h"
#include "base/Diagnostics.h"
#include "frontend/AstPrint.h"
#include "frontend/ConstEval.h"
#include "frontend/Imports.h"
#include "frontend/Parse.h"
#include "ir/layout/Error.h"
#include "ir/thread/Print.h"
#include "ir/tile/Print.h"
#include "tools/tyloc/LayoutCommand.h"
#include "tools/tyloc/Pipeline.h"

namespace tyl::fuzz {

const char* verdictName(Verdict v) {
  switch (v) {
    case Verdict::Accepted: return "accepted";
    case Verdict::Rejected: return "rejected";
    case Verdict::Misuse: return "misuse";
    case Verdict::Bug: return "BUG";
  }
  return "?";
}

namespace {

Result bug(std::string why) { return Result{Verdict::Bug, std::move(why)}; }

// A diagnostic must point into its source (or nowhere): renderers index the text with it.
std::optional<std::string> badRange(const SourceManager& sm, size_t files, SourceRange r, const std::string& what) {
  if (!r.valid()) return std::nullopt;
  if (r.begin.file >= files) return fmt::format("{} names file {} of {}", what, r.begin.file, files);
  if (!r.end.valid() || r.end.file != r.begin.file)
    return fmt::format("{} begins in file {} but ends in file {}", what, r.begin.file, r.end.file);
  size_t size = sm.file(r.begin.file).text.size();
  if (r.begin.offset > size || r.end.offset > size)
    return fmt::format("{} [{}, {}) lies outside the {}-byte source", what, r.begin.offset, r.end.offset, size);
  if (r.end.offset < r.begin.offset)
    return fmt::format("{} ends ({}) before it begins ({})", what, r.end.offset, r.begin.offset);
  return std::nullopt;
}

// Judges the diagnostics of a finished run. `rejected`: the run produced nothing.
Result judge(const SourceManager& sm, size_t files, const DiagnosticEngine& diags, bool rejected,
             const std::string& stage, bool json) {
  for (const Diagnostic& d : diags.diagnostics()) {
    if (!d.kind) return bug("a diagnostic without a kind: " + d.message);
    if (auto why = badRange(sm, files, d.range, fmt::format("diagnostic [{}] '{}'", d.kind->id, d.message)))
      return bug(*why);
    for (const DiagNote& n : d.notes)
      if (auto why = badRange(sm, files, n.range, fmt::format("note '{}' of [{}]", n.message, d.kind->id)))
        return bug(*why);
  }
  // What the user would see; rendering must not fail either.
  std::ostringstream rendered;
  if (json)
    diags.renderJson(rendered);
  else
    diags.renderText(rendered);
  // What is printed grows with the input, not with its square: a diagnostic shows one
  // source line, and the number shown is bounded.
  size_t sourceBytes = 0;
  for (size_t f = 0; f < files; ++f) sourceBytes += sm.file(static_cast<FileId>(f)).text.size();
  if (rendered.str().size() > 65536 + 128 * sourceBytes)
    return bug(fmt::format("the diagnostics of a {}-byte input render to {} bytes ({} errors, {} warnings, {} kept)",
                           sourceBytes, rendered.str().size(), diags.errorCount(), diags.warningCount(),
                           diags.diagnostics().size()));
  std::string first = diags.diagnostics().empty() ? "" : std::string(diags.diagnostics().front().kind->id) + ": " +
                                                            diags.diagnostics().front().message;
  if (rejected || diags.hasErrors()) {
    if (!diags.hasErrors()) return bug(stage + " rejected the input without reporting an error");
    if (!json && rendered.str().find("error: ") == std::string::npos)
      return bug(stage + " counted an error but printed none:\n" + rendered.str());
    return Result{Verdict::Rejected, first};
  }
  return Result{Verdict::Accepted, first};
}

}  // namespace

namespace {

// Runs every kernel on the emulator, as `tyloc run` would, with small scalars (integers 3,
// floats 1.5, booleans true) and random tensors. What the kernel does wrong becomes
// findings, which are fine; an exception or a crash is a bug. Kernels with tensors of more
// than 2^16 elements are skipped, and a budget of warp instructions keeps each run short.
void emulateKernels(const tir::Module& m) {
  emu::Options options;
  options.maxWarpInstructions = 100000;
  options.maxFindings = 4;
  for (const tir::Kernel& k : m.kernels) {
    std::vector<emu::Arg> args(k.params.size());
    for (size_t i = 0; i < k.params.size(); ++i) {
      const tir::Param& p = k.params[i];
      if (!p.isPointer)
        args[i] = tir::isFloat(p.type) ? emu::Arg::real(1.5) : emu::Arg::integer(p.type == tir::Type::Pred ? 1 : 3);
    }
    std::vector<emu::Buffer> buffers;
    bool runnable = true;
    for (size_t i = 0; i < k.params.size() && runnable; ++i) {
      const tir::Param& p = k.params[i];
      if (!p.isPointer) continue;
      std::optional<emu::TensorExtent> extent = emu::tensorExtent(p, args);
      runnable = extent && extent->span <= (1 << 16);
      for (size_t d = 0; runnable && d < extent->shape.size(); ++d)
        runnable = extent->shape[d] >= 0 && extent->shape[d] <= (1 << 16) && extent->strides[d] >= 0;
      if (!runnable) break;
      emu::Buffer b = emu::makeBuffer(p.type, extent->span);
      emu::fillRandom(b, p.type, 7 + i);
      args[i] = emu::Arg::pointer(static_cast<int>(buffers.size()));
      buffers.push_back(std::move(b));
    }
    if (runnable) (void)emu::run(k, args, buffers, options);
  }
}

}  // namespace

Result compileSource(std::string_view text, const CompileKnobs& knobs) {
  SourceManager sources;
  FileId file = sources.add("fuzz.tyl", std::string(text));
  DiagnosticOptions options;
  options.warningsAsErrors = knobs.werrorAndRemarks;
  options.remarks = knobs.werrorAndRemarks;
  DiagnosticEngine diags(sources, options);
  auto finish = [&](bool rejected, const std::string& stage) {
    return judge(sources, 1, diags, rejected, stage, knobs.jsonDiagnostics);
  };

  if (knobs.dumpStages) {
    // --emit tokens runs on its own engine, as a separate tyloc invocation would.
    DiagnosticEngine tokenDiags(sources, options);
    std::string tokens = dumpTokens(file, tokenDiags);
    Result r = judge(sources, 1, tokenDiags, false, "dumpTokens", false);
    if (r.verdict == Verdict::Bug) return r;
  }

  // The pipeline as tyloc runs it, with every stage; fuzz inputs must not reach the file
  // system, so every import is refused.
  driver::PipelineOptions po;
  po.imports = [](const ast::Import&, FileId, std::string& error) -> std::optional<FileId> {
    error = "imports are not read here";
    return std::nullopt;
  };
  po.emit.arch = knobs.sm90a ? cuda::Arch::Sm90a : cuda::Arch::Sm80;
  po.emit.lineDirectives = !knobs.noLine;
  po.emit.sourcePath = "fuzz.tyl";
  po.emit.outputName = "fuzz.cu";
  po.emit.headerName = "fuzz.cuh";
  driver::PipelineResult r = driver::runPipeline(sources, file, diags, po);
  if (knobs.dumpStages) {
    if (r.ast) (void)printAst(*r.ast, sources);
    if (r.tileIR) (void)tile::print(*r.tileIR);
    if (r.threadIR) (void)tir::print(*r.threadIR);
  }
  if (!r.ok) {
    if (r.misuse) return bug("the pipeline found command-line misuse in a run without options: " + *r.misuse);
    const char* stage = !r.ast ? "parse" : !r.tileIR ? "analyze" : !r.threadIR ? "lower" : "emit";
    return finish(true, stage);
  }
  if (knobs.emulate) emulateKernels(*r.threadIR);
  return finish(false, "emit");
}

namespace {

// Silences std::cout and std::cerr for a scope and keeps what was written.
class CaptureStreams {
 public:
  CaptureStreams() : oldOut_(std::cout.rdbuf(out_.rdbuf())), oldErr_(std::cerr.rdbuf(err_.rdbuf())) {}
  ~CaptureStreams() {
    std::cout.rdbuf(oldOut_);
    std::cerr.rdbuf(oldErr_);
  }
  std::string out() const { return out_.str(); }
  std::string err() const { return err_.str(); }

 private:
  std::ostringstream out_, err_;
  std::streambuf* oldOut_;
  std::streambuf* oldErr_;
};

// The picture, as runLayoutCommand draws it for --svg (which would also write a file).
Result layoutSvg(const LayoutRequest& request) {
  SourceManager sources;
  FileId file = sources.add("<layout>", request.expr);
  DiagnosticEngine diags(sources);
  ast::ExprPtr expr = parseLayoutExpr(file, diags);
  if (!expr) return judge(sources, 1, diags, true, "parseLayoutExpr", false);
  ConstEvaluator eval(diags, nullptr);
  std::optional<layout::Layout> l = eval.evalLayout(*expr);
  if (!l) return judge(sources, 1, diags, true, "evalLayout", false);
  svg::SvgOptions o;
  static const std::pair<const char*, int> kBytes[] = {{"i8", 1}, {"f16", 2}, {"bf16", 2}, {"f32", 4}, {"f64", 8}};
  for (auto [name, bytes] : kBytes)
    if (request.dtype == name) o.elementBytes = bytes, o.dtype = name;
  if (!request.highlight.empty() && o.elementBytes) {
    std::string why;
    o.highlight = svg::parseHighlight(request.highlight, why);
    if (!o.highlight) return Result{Verdict::Misuse, why};
  }
  try {
    layout::Shape shape = request.shape ? *request.shape : l->tile.shardExtents();
    if (shape.empty()) shape = {1};
    if (layout::shapeSize(shape) != l->size()) return Result{Verdict::Rejected, "shape-mismatch"};
    std::string picture = svg::renderLayoutSvg(*l, shape, o);
    if (picture.find("</svg>") == std::string::npos) return bug("renderLayoutSvg returned an unfinished picture");
  } catch (const layout::Error& err) {  // SvgError and OverflowError included, as runLayoutCommand does
    return Result{Verdict::Rejected, err.what()};
  }
  return Result{Verdict::Accepted, ""};
}

}  // namespace

Result layoutCommand(const LayoutRequest& request) {
  // The command line refuses these before the command runs (exit 2).
  if (request.shape)
    for (int64_t e : *request.shape)
      if (e <= 0) return Result{Verdict::Misuse, "--shape extent must be positive"};

  if (request.svg) {
    Result r = layoutSvg(request);
    if (r.verdict == Verdict::Bug) return r;
  }

  driver::LayoutOptions o;
  o.expr = request.expr;
  o.shape = request.shape;
  o.apply = request.apply;
  o.json = request.json;
  int code;
  std::string out, err;
  {
    CaptureStreams capture;
    code = driver::runLayoutCommand(o);
    out = capture.out();
    err = capture.err();
  }
  if (code == 0) {
    // Warnings about the expression (swizzle-order) are all it may print there.
    if (!err.empty() && (err.find(": warning: ") == std::string::npos || err.find(": error: ") != std::string::npos))
      return bug("tyloc layout succeeded but printed to stderr:\n" + err);
    if (out.empty()) return bug("tyloc layout succeeded but printed nothing");
    return Result{Verdict::Accepted, ""};
  }
  if (code == 1) {
    if (err.find("error: ") == std::string::npos) return bug("tyloc layout exited 1 without an error:\n" + err);
    if (!out.empty()) return bug("tyloc layout failed but printed to stdout:\n" + out);
    return Result{Verdict::Rejected, err.substr(0, err.find('\n'))};
  }
  return bug(fmt::format("tyloc layout returned exit code {}:\n{}", code, err));
}

namespace {

// "3,2", "(3, 2)", "[3,2]": integers separated by commas; anything else gives nullopt.
std::optional<std::vector<int64_t>> parseInts(std::string_view text) {
  std::vector<int64_t> values;
  std::string cur;
  auto flush = [&]() -> bool {
    size_t used = 0;
    try {
      values.push_back(std::stoll(cur, &used));
    } catch (const std::exception&) {
      return false;
    }
    bool whole = used == cur.size();
    cur.clear();
    return whole;
  };
  for (char c : text) {
    if (c == '(' || c == ')' || c == '[' || c == ']' || c == ' ') continue;
    if (c == ',') {
      if (!flush()) return std::nullopt;
    } else if ((c >= '0' && c <= '9') || c == '-' || c == '+') {
      cur += c;
    } else {
      return std::nullopt;
    }
  }
  if (!cur.empty() && !flush()) return std::nullopt;
  if (values.empty()) return std::nullopt;
  return values;
}

}  // namespace

LayoutRequest parseLayoutRequest(std::string_view payload) {
  LayoutRequest r;
  size_t nl = payload.find('\n');
  r.expr = std::string(payload.substr(0, nl));
  while (nl != std::string_view::npos) {
    payload.remove_prefix(nl + 1);
    nl = payload.find('\n');
    std::string_view line = payload.substr(0, nl);
    auto arg = [&](std::string_view key) -> std::optional<std::string_view> {
      if (line.substr(0, key.size()) != key) return std::nullopt;
      std::string_view rest = line.substr(key.size());
      while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
      return rest;
    };
    if (auto v = arg("shape")) {
      r.shape = parseInts(*v);
    } else if (auto v = arg("apply")) {
      r.apply = parseInts(*v);
    } else if (line == "json") {
      r.json = true;
    } else if (line == "svg") {
      r.svg = true;
    } else if (auto v = arg("dtype")) {
      r.dtype = std::string(*v);
    } else if (auto v = arg("highlight")) {
      r.highlight = std::string(*v);
    }
  }
  return r;
}

Result runFuzzInput(const uint8_t* data, size_t size) {
  if (size == 0) return Result{Verdict::Accepted, ""};
  uint8_t mode = data[0];
  std::string_view payload(reinterpret_cast<const char*>(data + 1), size - 1);
  if (mode == 'L' || mode == 'l') return layoutCommand(parseLayoutRequest(payload));
  CompileKnobs k;
  k.dumpStages = mode & 1;
  k.werrorAndRemarks = mode & 2;
  k.sm90a = mode & 4;
  k.noLine = mode & 8;
  k.jsonDiagnostics = mode & 16;
  k.emulate = mode & 32;
  return compileSource(payload, k);
}

}  // namespace tyl::fuzz
