// ldmatrix, stmatrix and mma.sync: gather the operands of all 32 lanes, apply the
// instruction (Ptx.h), scatter the results.
#include <fmt/format.h>

#include <bit>
#include <functional>

#include "backend/emu/Interpreter.h"
#include "backend/emu/Ptx.h"
#include "backend/emu/Values.h"
#include "backend/emu/Wgmma.h"
#include "base/InternalError.h"

namespace tyl::emu {
namespace {

void checkMatrixOperands(const tir::Kernel& k, int num, size_t regs, const tir::MemRef& addr,
                         const char* name) {
  if (num != 1 && num != 2 && num != 4) TYL_UNREACHABLE("{}", fmt::format("emulator: {}.x{}", name, num));
  if (regs != static_cast<size_t>(num))
    TYL_UNREACHABLE("{}", fmt::format("emulator: {}.x{} with {} registers", name, num, regs));
  if (addr.buffer >= k.buffers.size() || k.buffers[addr.buffer].space != tir::Space::Shared)
    TYL_UNREACHABLE("{}", fmt::format("emulator: {} must address shared memory", name));
}

// mma.sync's A and B operands: packed pairs of the input type, or 32-bit integer registers
// holding such pairs.
void checkPackedOperand(const RegisterFile& regs, const tir::Reg& r, tir::Type ab) {
  tir::Type t = regs.type(r);
  if (t == ab || t == tir::Type::U32 || t == tir::Type::I32) return;
  TYL_UNREACHABLE("{}", 
      fmt::format("emulator: mma.sync {} operand in a {} register", tir::typeName(ab), tir::typeName(t)));
}

void checkFloatOperand(const RegisterFile& regs, const tir::Reg& r) {
  if (regs.type(r) != tir::Type::F32)
    TYL_UNREACHABLE("{}", 
        fmt::format("emulator: mma.sync accumulator in a {} register", tir::typeName(regs.type(r))));
}

}  // namespace

// The .aligned collectives need every lane of the warp; on the GPU a partial warp makes the
// result undefined. The emulator reports it and computes with whatever the idle lanes hold.
void Interpreter::checkCollective(const Warp& w, Mask mask, const char* name) {
  if (mask == kFullMask) return;
  int lane = 0;
  while (laneOn(mask, lane)) ++lane;  // the first missing lane
  int active = mask ? std::countr_zero(mask) : 0;
  std::string missing = laneOn(w.live, lane) ? describe(threadRef(w, lane)) + " does not take part"
                                             : fmt::format("the block has no thread for lane {}", lane);
  report(FindingKind::PartialCollective, w, active,
         fmt::format("{} executed by only part of warp {} (lanes {:#010x}): it needs all 32 lanes, and {}",
                     name, w.index, mask, missing));
}

namespace {

// The lanes that give row addresses to an ldmatrix or stmatrix of `num` matrices.
Mask addressLanes(int num) { return num >= 4 ? kFullMask : (Mask{1} << (8 * num)) - 1; }

}  // namespace

void Interpreter::execLdmatrix(Warp& w, const tir::Ldmatrix& ld, Mask mask) {
  checkMatrixOperands(ctx_.kernel, ld.num, ld.dst.size(), ld.addr, "ldmatrix");
  if (!mask) return;
  checkCollective(w, mask, "ldmatrix");
  // Lanes 8i..8i+7 give the row addresses of matrix i; the other lanes' addresses are unused.
  Lanes offsets = eval(w, ld.addr.offset, mask & addressLanes(ld.num));
  for (int i = 0; i < ld.num; ++i) {
    Matrix8x8 m{};
    for (int r = 0; r < 8; ++r) {
      int lane = 8 * i + r;
      if (!laneOn(mask, lane)) continue;
      std::array<std::byte, 16> row{};
      Place p;
      if (place(w, ld.addr, static_cast<int64_t>(offsets[lane]), 16, 16, lane, "ldmatrix row read", &p))
        readBytes(w, ld.addr, p, 16, lane, row.data());
      for (int c = 0; c < 8; ++c)
        m[r][c] = static_cast<uint16_t>(std::to_integer<uint16_t>(row[2 * c]) |
                                        (std::to_integer<uint16_t>(row[2 * c + 1]) << 8));
    }
    for (int lane = 0; lane < kWarpSize; ++lane)
      if (laneOn(mask, lane)) w.regs.writeWord(ld.dst[i], lane, ldmatrixWord(m, lane, ld.trans));
  }
}

// shfl.sync.bfly with the whole warp: each lane reads the value of lane ^ laneMask. A value
// computed from unwritten registers stays unwritten in the lane that receives it.
void Interpreter::execShfl(Warp& w, const tir::Shfl& sh, Mask mask) {
  if (!sh.value || sh.value->type != w.regs.type(sh.dst) || sh.laneMask < 1 || sh.laneMask >= kWarpSize)
    TYL_UNREACHABLE("{}", "emulator: a malformed shfl.sync");
  if (!mask) return;
  checkCollective(w, mask, "shfl.sync");
  Taint taint;
  const Lanes v = evalValue(w, sh.value, mask, taint);
  Lanes out{};
  Mask undefined = 0;
  for (int lane = 0; lane < kWarpSize; ++lane) {
    if (!laneOn(mask, lane)) continue;
    const int from = lane ^ sh.laneMask;
    out[lane] = v[from];
    // A lane outside the shuffle gives an undefined value (the collective was reported).
    if (!laneOn(mask, from) || laneOn(taint.undefined, from)) undefined |= Mask{1} << lane;
  }
  w.regs.write(sh.dst, out, mask);
  w.regs.undefine(sh.dst, undefined, taint.origin);
}

void Interpreter::execStmatrix(Warp& w, const tir::Stmatrix& st, Mask mask) {
  checkMatrixOperands(ctx_.kernel, st.num, st.src.size(), st.addr, "stmatrix");
  if (!mask) return;
  checkCollective(w, mask, "stmatrix");
  Lanes offsets = eval(w, st.addr.offset, mask & addressLanes(st.num));
  for (const tir::Reg& r : st.src)
    if (Mask unwritten = mask & ~w.regs.definedWord(r)) {
      reportUnwritten(w, unwritten, r, "the value stored");
      break;
    }
  for (int i = 0; i < st.num; ++i) {
    Matrix8x8 m{};
    for (int lane = 0; lane < kWarpSize; ++lane)
      stmatrixWord(m, lane, st.trans, w.regs.readWord(st.src[i], lane));
    for (int r = 0; r < 8; ++r) {
      int lane = 8 * i + r;
      if (!laneOn(mask, lane)) continue;
      std::array<std::byte, 16> row;
      for (int c = 0; c < 8; ++c) {
        row[2 * c] = static_cast<std::byte>(m[r][c] & 0xff);
        row[2 * c + 1] = static_cast<std::byte>(m[r][c] >> 8);
      }
      Place p;
      if (place(w, st.addr, static_cast<int64_t>(offsets[lane]), 16, 16, lane, "stmatrix row write", &p))
        writeBytes(w, st.addr, p, 16, lane, row.data());
    }
  }
}

void Interpreter::execMma(Warp& w, const tir::Mma& mma, Mask mask) {
  if (mma.ab != tir::Type::F16 && mma.ab != tir::Type::BF16)
    TYL_UNREACHABLE("{}", "emulator: mma.sync m16n8k16 takes f16 or bf16 inputs");
  if (mma.a.size() != 4 || mma.b.size() != 2 || mma.c.size() != 4 || mma.d.size() != 4)
    TYL_UNREACHABLE("{}", "emulator: mma.sync m16n8k16 takes 4 A, 2 B, 4 C and 4 D registers");
  for (const tir::Reg& r : mma.a) checkPackedOperand(w.regs, r, mma.ab);
  for (const tir::Reg& r : mma.b) checkPackedOperand(w.regs, r, mma.ab);
  for (const tir::Reg& r : mma.c) checkFloatOperand(w.regs, r);
  for (const tir::Reg& r : mma.d) checkFloatOperand(w.regs, r);
  if (!mask) return;
  checkCollective(w, mask, "mma.sync");
  MmaA a;
  MmaB b;
  MmaC c;
  for (int lane = 0; lane < kWarpSize; ++lane) {
    for (int j = 0; j < 4; ++j) a[lane][j] = w.regs.readWord(mma.a[j], lane);
    for (int j = 0; j < 2; ++j) b[lane][j] = w.regs.readWord(mma.b[j], lane);
    for (int j = 0; j < 4; ++j) c[lane][j] = std::bit_cast<float>(w.regs.readWord(mma.c[j], lane));
  }
  MmaC d = mmaM16n8k16(mma.ab, a, b, c);
  // Every lane's result reads other lanes' operands: one unwritten operand word anywhere
  // leaves the whole result unwritten.
  bool unwritten = false;
  for (const std::vector<tir::Reg>* operands : {&mma.a, &mma.b, &mma.c})
    for (const tir::Reg& r : *operands) unwritten = unwritten || (mask & ~w.regs.definedWord(r)) != 0;
  for (int lane = 0; lane < kWarpSize; ++lane)
    if (laneOn(mask, lane))
      for (int j = 0; j < 4; ++j) w.regs.writeWord(mma.d[j], lane, std::bit_cast<uint32_t>(d[lane][j]));
  if (unwritten)
    for (const tir::Reg& r : mma.d) w.regs.undefineWord(r, mask);
  ++ctx_.stats.mmas;
}

float Interpreter::wgmmaElement(const Warp& w, int lane, int64_t address, tir::Type type, const char* operand) {
  const int64_t byte = address - kSharedWindowBase;
  const tir::Kernel& k = ctx_.kernel;
  // The allocation the byte lies in, for the findings' messages.
  std::optional<uint32_t> buffer;
  for (uint32_t b = 0; b < k.buffers.size(); ++b)
    if (k.buffers[b].space == tir::Space::Shared && byte >= k.buffers[b].sharedOffset &&
        byte < k.buffers[b].sharedOffset + k.buffers[b].sharedBytes)
      buffer = b;
  if (byte < 0 || byte > shared().size() - 2 || !buffer) {
    report(FindingKind::OutOfBounds, w, lane,
           fmt::format("wgmma reads its {} at shared address {}, outside every shared allocation of the block (by {})",
                       operand, address, describe(threadRef(w, lane))));
    return 0.0f;
  }
  std::array<std::byte, 2> raw{};
  const tir::MemRef at{*buffer, nullptr};
  reportShared(w, shared().read(byte, 2, site(w, lane), raw.data()), at, lane,
               false);
  ctx_.stats.sharedBytesRead += 2;
  const uint64_t bits = std::to_integer<uint64_t>(raw[0]) | (std::to_integer<uint64_t>(raw[1]) << 8);
  return toFloat(type, bits);
}

// wgmma.mma_async: checked when it is issued (every lane gives the same operands, no base offset),
// performed when a wait_group retires its group. Until then its D registers read as unwritten.
void Interpreter::execWgmma(Warp& w, const tir::Wgmma& op, Mask mask) {
  if (!mask) return;
  checkCollective(w, mask, "wgmma.mma_async");
  const int lead = std::countr_zero(mask);
  const bool registerA = !op.a.empty();
  Lanes descA{};
  if (!registerA) descA = eval(w, op.descA, mask);
  const Lanes descB = eval(w, op.descB, mask);
  Lanes scale;
  scale.fill(1);
  if (op.accumulate) scale = eval(w, op.accumulate, mask);
  for (int l = 0; l < kWarpSize; ++l)
    if (laneOn(mask, l) && (descA[l] != descA[lead] || descB[l] != descB[lead] || scale[l] != scale[lead])) {
      report(FindingKind::InvalidOperand, w, l,
             fmt::format("wgmma operands differ between the lanes of warp {}: {} has descriptors {:#x}, {:#x} and "
                         "scale-d {}, {} has {:#x}, {:#x} and {}; every thread of the warpgroup must give the same",
                         w.index, describe(threadRef(w, lead)), descA[lead], descB[lead], scale[lead],
                         describe(threadRef(w, l)), descA[l], descB[l], scale[l]));
      break;
    }
  const MatrixDescriptor a = decodeMatrixDescriptor(descA[lead]), b = decodeMatrixDescriptor(descB[lead]);
  if (a.baseOffset != 0 || b.baseOffset != 0) {
    report(FindingKind::InvalidOperand, w, lead,
           fmt::format("a wgmma descriptor with base offset {}: the matrices must start on their swizzle's period",
                       a.baseOffset != 0 ? a.baseOffset : b.baseOffset));
    return;
  }
  IssuedWgmma issued{stmt_, descA[lead], descB[lead], scale[lead] != 0, mask, {}};
  // A from registers is read now: PTX forbids changing it before the wait, which tyloc checks
  // (mma-in-flight), so any moment until then gives the same words.
  for (size_t j = 0; j < op.a.size(); ++j) {
    if (const Mask unwritten = mask & ~w.regs.definedWord(op.a[j]))
      reportUnwritten(w, unwritten, op.a[j], "the A operand of a wgmma");
    for (int l = 0; l < kWarpSize; ++l) issued.aWords[j][static_cast<size_t>(l)] = w.regs.readWord(op.a[j], l);
  }
  w.wgmmaOpen.push_back(issued);
  // Until it is performed, the wgmma may read its operands: writing them races with it.
  forEachWgmmaOperand(w, w.wgmmaOpen.back(), [&](bool, int64_t, int64_t, int64_t address) {
    const int64_t byte = address - kSharedWindowBase;
    if (byte >= 0 && byte <= shared().size() - 2) shared().beginAsyncRead(byte, 2, site(w, lead));
  });
  for (const tir::Reg& reg : op.d) {
    HeldRegister& h = w.wgmmaHeld[{reg.id, reg.index}];
    if (h.writers++ == 0) {
      h.value = w.regs.read(reg);
      h.defined = w.regs.defined(reg);
      w.regs.undefine(reg, w.live);
    }
  }
  ++ctx_.stats.wgmmas;
}

void Interpreter::execWgmmaCommit(Warp& w, Mask mask) {
  if (!mask) return;
  checkCollective(w, mask, "wgmma.commit_group");
  w.wgmmaGroups.push_back(std::move(w.wgmmaOpen));
  w.wgmmaOpen.clear();
}

void Interpreter::execWgmmaWait(Warp& w, int pending, Mask mask) {
  if (!mask) return;
  checkCollective(w, mask, "wgmma.wait_group");
  retireWgmmas(w, static_cast<size_t>(pending));
}

void Interpreter::retireWgmmas(Warp& w, size_t pending) {
  while (w.wgmmaGroups.size() > pending) {
    for (const IssuedWgmma& issued : w.wgmmaGroups.front()) performWgmma(w, issued);
    w.wgmmaGroups.pop_front();
  }
}

// The elements warp `w`'s part of a wgmma reads, with their shared-window addresses: its 16 rows
// of A (rows 16 (warp % 4) ..) by row and k, then every row (column of C) of B by row and k.
void Interpreter::forEachWgmmaOperand(const Warp& w, const IssuedWgmma& issued,
                                      const std::function<void(bool, int64_t, int64_t, int64_t)>& fn) {
  const auto& op = std::get<tir::Wgmma>(issued.stmt->node);
  const MatrixDescriptor a = decodeMatrixDescriptor(issued.descA), b = decodeMatrixDescriptor(issued.descB);
  const int64_t firstRow = 16 * (w.index % 4);
  if (op.a.empty())
    for (int64_t r = 0; r < 16; ++r)
      for (int64_t k = 0; k < 16; ++k) fn(true, r, k, matrixElementAddress(a, op.transA, 2, firstRow + r, k));
  for (int64_t n = 0; n < op.n; ++n)
    for (int64_t k = 0; k < 16; ++k) fn(false, n, k, matrixElementAddress(b, op.transB, 2, n, k));
}

// Each warp of the warpgroup computes its own 16 rows of D: rows 16 (warp % 4) to 16 (warp % 4) +
// 15 depend only on those rows of A, all of B and the warp's own registers. Findings point at the
// wgmma statement.
void Interpreter::performWgmma(Warp& w, const IssuedWgmma& issued) {
  const tir::Stmt* const at = stmt_;
  stmt_ = issued.stmt;
  const auto& op = std::get<tir::Wgmma>(issued.stmt->node);
  const Mask mask = issued.mask;
  const int lead = std::countr_zero(mask);
  double A[16][16], B[256][16];
  if (!op.a.empty()) {
    const std::array<double, 256> a = registerA(op.ab, [&](int lane, int word) {
      return issued.aWords[static_cast<size_t>(word)][static_cast<size_t>(lane)];
    });
    for (int64_t r = 0; r < 16; ++r)
      for (int64_t k = 0; k < 16; ++k) A[r][k] = a[static_cast<size_t>(r * 16 + k)];
  }
  forEachWgmmaOperand(w, issued, [&](bool isA, int64_t row, int64_t k, int64_t address) {
    const int64_t byte = address - kSharedWindowBase;
    if (byte >= 0 && byte <= shared().size() - 2) shared().endAsyncRead(byte, 2);
    (isA ? A[row][k] : B[row][k]) = wgmmaElement(w, lead, address, op.ab, isA ? "A operand" : "B operand");
  });
  for (size_t r = 0; r < op.d.size(); ++r) {
    const tir::Reg& reg = op.d[r];
    // D as it was before this wgmma: what the first wgmma in flight found, or the previous one's result.
    auto held = w.wgmmaHeld.find({reg.id, reg.index});
    if (held == w.wgmmaHeld.end()) TYL_UNREACHABLE("{}", "emulator: a wgmma in flight without its held registers");
    const Lanes old = held->second.value;
    Mask defined = held->second.defined;
    Lanes result = old;
    for (int l = 0; l < kWarpSize; ++l) {
      if (!laneOn(mask, l)) continue;
      const int64_t row = l / 4 + 8 * ((r >> 1) & 1), col = 8 * (r >> 2) + 2 * (l % 4) + (r & 1);
      double sum = issued.accumulate ? toFloat(tir::Type::F32, old[l]) : 0.0;
      for (int64_t k = 0; k < 16; ++k) sum += A[row][k] * B[col][k];
      result[l] = fromFloat(tir::Type::F32, static_cast<float>(sum));
    }
    if (!issued.accumulate) defined |= mask;
    if (--held->second.writers > 0) {
      held->second.value = result;  // a later wgmma in flight writes it too
      held->second.defined = defined;
      continue;
    }
    w.wgmmaHeld.erase(held);
    w.regs.write(reg, result, w.live);
    w.regs.undefine(reg, w.live & ~defined);
  }
  stmt_ = at;
}

}  // namespace tyl::emu
