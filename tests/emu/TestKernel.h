// Hand-built thread IR kernels for the emulator tests. Every statement gets its own line
// of a fake source file, so tests can check which statements a finding points at.
#pragma once

#include <string>
#include <vector>

#include "backend/emu/Emulator.h"
#include "base/Source.h"
#include "ir/thread/Builder.h"
#include "ir/thread/ThreadIR.h"

namespace tyl::emu::test {

// A source file of numbered lines, shared by all tests ("kernel.tyl", 1000 lines).
const SourceManager& sources();
SourceRange line(int n);  // the whole of line n
int lineOf(SourceRange r);

struct TestKernel {
  explicit TestKernel(std::string name, int64_t bx, int64_t by = 1, int64_t bz = 1);

  // A pointer parameter and the global buffer it addresses; returns the buffer id.
  uint32_t globalBuffer(const std::string& name, tir::Type elem);
  // A scalar parameter; returns the parameter index.
  int scalar(const std::string& name, tir::Type type);
  // A shared allocation after the previous ones (128-byte aligned); returns the buffer id.
  uint32_t sharedBuffer(const std::string& name, tir::Type elem, int64_t count);
  uint32_t var(const std::string& name, tir::Type type) { return tir::addVar(k, name, type); }
  uint32_t array(const std::string& name, tir::Type elem, int64_t count) {
    return tir::addArray(k, name, elem, count);
  }

  tir::ExprRef v(uint32_t var) const { return tir::varRef(k, var); }
  tir::ExprRef elem(uint32_t array, int64_t i) const { return tir::elemRef(k, array, i); }
  tir::ExprRef param(int p) const { return tir::paramRef(k, p); }

  tir::Kernel k;
};

template <class Node>
tir::Stmt at(int lineNo, Node node) {
  return tir::Stmt{line(lineNo), std::move(node)};
}

// Short spellings for expressions.
inline tir::ExprRef i32(int64_t v) { return tir::intConst(v, tir::Type::I32); }
inline tir::ExprRef f32(double v) { return tir::floatConst(v, tir::Type::F32); }
inline tir::ExprRef tid() { return tir::special(tir::Special::TidX); }
inline tir::ExprRef laneId() { return tir::special(tir::Special::LaneId); }
inline tir::ExprRef bin(tir::BinOp op, tir::ExprRef a, tir::ExprRef b) {
  return tir::binary(op, std::move(a), std::move(b));
}

// Statement builders with every field spelled (the IR structs are aggregates).
inline tir::MemRef mem(uint32_t buffer, tir::ExprRef offset) {
  return tir::MemRef{buffer, std::move(offset)};
}
inline tir::Load load(tir::Type type, tir::MemRef src, std::vector<tir::Reg> dst,
                      tir::ExprRef pred = nullptr) {
  return tir::Load{type, std::move(src), std::move(dst), std::move(pred)};
}
inline tir::Store store(tir::Type type, tir::MemRef dst, std::vector<tir::Reg> src,
                        tir::ExprRef pred = nullptr) {
  return tir::Store{type, std::move(dst), std::move(src), std::move(pred)};
}
inline tir::For loop(uint32_t var, tir::ExprRef begin, tir::ExprRef end, tir::ExprRef step, tir::Block body) {
  return tir::For{var, std::move(begin), std::move(end), std::move(step), false, std::move(body)};
}
inline tir::If when(tir::ExprRef cond, tir::Block then, tir::Block otherwise = {}) {
  return tir::If{std::move(cond), std::move(then), std::move(otherwise)};
}
// Registers elem(array, first) .. elem(array, first + n - 1).
std::vector<tir::Reg> elems(uint32_t array, int64_t first, int64_t n);

// out[0 .. n) after running `k`, whose parameters are (out: i32 pointer, s: scalar), with scalar
// `s`; slots the kernel does not write hold -1. Requires a run without findings.
std::vector<double> runIntOutput(const tir::Kernel& k, int64_t n, int64_t s);

// Findings of `kind` in `r`.
std::vector<Finding> findingsOf(const RunResult& r, FindingKind kind);
// All findings rendered, for failure messages.
std::string describe(const RunResult& r);

}  // namespace tyl::emu::test
