#include "TestKernel.h"

#include <catch2/catch.hpp>

#include <fmt/format.h>

namespace tyl::emu::test {
namespace {

constexpr int kLines = 1000;

SourceManager& mutableSources() {
  static SourceManager sm = [] {
    SourceManager m;
    std::string text;
    for (int i = 1; i <= kLines; ++i) text += fmt::format("statement {:04}\n", i);
    m.add("kernel.tyl", text);
    return m;
  }();
  return sm;
}

constexpr uint32_t kLineBytes = 15;  // "statement 0001\n"

}  // namespace

const SourceManager& sources() { return mutableSources(); }

SourceRange line(int n) {
  uint32_t begin = static_cast<uint32_t>(n - 1) * kLineBytes;
  return SourceRange{SourceLoc{0, begin}, SourceLoc{0, begin + kLineBytes - 1}};
}

int lineOf(SourceRange r) { return r.valid() ? static_cast<int>(r.begin.offset / kLineBytes) + 1 : 0; }

TestKernel::TestKernel(std::string name, int64_t bx, int64_t by, int64_t bz) {
  k.name = std::move(name);
  k.loc = line(kLines);
  k.block = {bx, by, bz};
  k.grid = {i32(1), i32(1), i32(1)};
}

uint32_t TestKernel::globalBuffer(const std::string& name, tir::Type elem) {
  int p = static_cast<int>(k.params.size());
  uint32_t b = static_cast<uint32_t>(k.buffers.size());
  tir::Param prm;
  prm.name = name;
  prm.isPointer = true;
  prm.type = elem;
  prm.buffer = static_cast<int>(b);
  k.params.push_back(prm);
  tir::Buffer buf;
  buf.name = name;
  buf.space = tir::Space::Global;
  buf.elem = elem;
  buf.param = p;
  buf.alignBytes = 16;
  k.buffers.push_back(buf);
  return b;
}

int TestKernel::scalar(const std::string& name, tir::Type type) {
  tir::Param prm;
  prm.name = name;
  prm.type = type;
  k.params.push_back(prm);
  return static_cast<int>(k.params.size() - 1);
}

uint32_t TestKernel::sharedBuffer(const std::string& name, tir::Type elem, int64_t count) {
  tir::Buffer buf;
  buf.name = name;
  buf.space = tir::Space::Shared;
  buf.elem = elem;
  buf.sharedOffset = (k.sharedBytes + 127) / 128 * 128;
  buf.sharedBytes = count * tir::typeBytes(elem);
  buf.alignBytes = 128;
  k.sharedBytes = buf.sharedOffset + buf.sharedBytes;
  k.buffers.push_back(buf);
  return static_cast<uint32_t>(k.buffers.size() - 1);
}

std::vector<tir::Reg> elems(uint32_t array, int64_t first, int64_t n) {
  std::vector<tir::Reg> regs;
  for (int64_t i = 0; i < n; ++i) regs.push_back(tir::Reg::elem(array, first + i));
  return regs;
}

std::vector<double> runIntOutput(const tir::Kernel& k, int64_t n, int64_t s) {
  std::vector<Buffer> buffers = {makeBuffer(tir::Type::I32, n, false)};
  for (int64_t i = 0; i < n; ++i) setElement(buffers[0], tir::Type::I32, i, -1);
  RunResult r = run(k, {Arg::pointer(0), Arg::integer(s)}, buffers);
  INFO(describe(r));
  REQUIRE(r.ok());
  std::vector<double> out;
  for (int64_t i = 0; i < n; ++i) out.push_back(getElement(buffers[0], tir::Type::I32, i));
  return out;
}

std::vector<Finding> findingsOf(const RunResult& r, FindingKind kind) {
  std::vector<Finding> out;
  for (const Finding& f : r.findings)
    if (f.kind == kind) out.push_back(f);
  return out;
}

std::string describe(const RunResult& r) { return renderFindings(r.findings, sources()); }

}  // namespace tyl::emu::test
