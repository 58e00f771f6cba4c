// Fragment loads from shared memory with ldmatrix, and stores to it with stmatrix (sm_90), its
// inverse. The instructions' ownership tables decide when they apply: every 32-bit register
// word of the fragment must hold, across the 32 lanes of each warp, one 8x8 matrix in the order
// ldmatrix delivers it and stmatrix takes it (plain, or transposed), and every row of that
// matrix must be 16 contiguous, aligned bytes. Words are grouped into .x4, .x2 and .x1
// instructions; lane l gives the address of row l % 8 of matrix l / 8.
#include <fmt/format.h>

#include <map>

#include "ir/lower/LowerImpl.h"
#include "ir/lower/MemoryRuns.h"

namespace tyl::lower {

TYL_DIAG(kMatrixCopy, Remark, "ldmatrix",
         "which ldmatrix (or, storing, stmatrix) instructions a fragment load or store became");

using tir::ExprRef;
using tir::Type;

namespace {

struct Coord2 {
  int64_t r, c;
  bool operator==(const Coord2&) const = default;
};

// Where lane `l` finds element e of its word in an 8x8 matrix with origin (0, 0).
Coord2 pattern(bool trans, int l, int e) {
  int g = l / 4, t = l % 4;
  return trans ? Coord2{2 * t + e, g} : Coord2{g, 2 * t + e};
}

}  // namespace

bool KernelLowering::tryMatrixCopy(SourceRange loc, const tile::View& mem, uint32_t fragId, const FragmentMap& fm,
                                   bool store, const std::function<uint32_t()>& registers, std::string& why) {
  const tile::Tensor& t = tk_.tensors[mem.tensor];
  const tile::Tensor& f = tk_.tensors[fragId];
  const char* name = store ? "stmatrix" : "ldmatrix";
  if (t.space != tile::MemSpace::Shared) return why = fmt::format("{} {} shared memory", name, store ? "writes" : "reads"), false;
  if (tile::dtypeBytes(t.dtype) != 2 || (!store && f.dtype != t.dtype))
    return why = fmt::format("{} moves 16-bit elements", name), false;
  if (mem.rank() != 2) return why = fmt::format("{} needs a two-dimensional tile", name), false;
  if (store && fm.primary) return why = "the fragment holds some elements in more than one thread", false;
  int64_t threads = k_.threadsPerBlock();
  if (threads % 32 != 0) return why = "the block is not a whole number of warps", false;
  // The warps that hold part of the fragment, with all their lanes (the others skip the copy).
  std::vector<int64_t> warps;
  const std::optional<std::vector<bool>> holds = holders(fm);
  if (!holds) return why = "which threads hold part of the fragment is not known at compile time", false;
  for (int64_t warp = 0; warp < threads / 32; ++warp) {
    const auto lanes = holds->begin() + warp * 32;
    const int64_t held = std::count(lanes, lanes + 32, true);
    if (held != 0 && held != 32)
      return why = fmt::format("warp {} holds part of the fragment in {} of its lanes", warp, held), false;
    if (held == 32) warps.push_back(warp);
  }
  if (warps.empty()) return why = "no warp holds part of the fragment", false;
  // The 32-bit register words moved, two slots each: all of the fragment's, or those of a part.
  std::vector<const FragmentSlot*> slotAt(static_cast<size_t>(f.slots + 1), nullptr);  // by slot m
  for (const FragmentSlot& s : fm.slots)
    if (s.m >= 0 && s.m < f.slots) slotAt[static_cast<size_t>(s.m)] = &s;
  std::vector<int64_t> wordOf;  // the register word of each word moved
  for (int64_t m = 0; m < f.slots; m += 2) {
    const bool lo = slotAt[static_cast<size_t>(m)], hi = slotAt[static_cast<size_t>(m + 1)];
    if (lo && hi) wordOf.push_back(m / 2);
    if (lo != hi || (!lo && fm.slots.size() == static_cast<size_t>(f.slots)))
      return why = fmt::format("register slot {} holds no element", lo ? m + 1 : m), false;
  }
  const int64_t words = static_cast<int64_t>(wordOf.size());
  if (words == 0) return why = "no register word holds elements", false;

  // Thread coordinates, evaluated for every thread.
  const std::optional<std::vector<std::vector<int64_t>>> base = threadCoords(fm);
  if (!base) return why = "the thread's coordinates are not known at compile time", false;
  // The matrices' rows run along the tile's last dimension, as stored row-major; or, `swapped`,
  // along its first (a K-major tile of B stored N x K): then the tile is read with its two
  // dimensions exchanged, view dimension R as the matrices' rows and C as their columns.
  auto attempt = [&](bool swapped, std::string& why) -> bool {
    const size_t R = swapped ? 1 : 0, C = swapped ? 0 : 1;
    const tile::View view = swapped ? lastAlong(mem, 0) : mem;
    // Thread coordinates, evaluated for every thread.
    // Slot e (0 or 1) of word w.
    auto coordOf = [&](int64_t tid, int64_t w, int e) {
      const FragmentSlot& s = *slotAt[static_cast<size_t>(2 * wordOf[static_cast<size_t>(w)] + e)];
      const std::vector<int64_t>& b = (*base)[static_cast<size_t>(tid)];
      return Coord2{b[R] + s.offset[R], b[C] + s.offset[C]};
    };
    // Which pattern every word follows, and its matrix origin in each warp.
    std::optional<bool> trans;
    std::vector<std::vector<Coord2>> origin(words);  // [word][index into warps]
    for (int64_t w = 0; w < words; ++w) {
      for (int64_t warp : warps) {
        Coord2 o = coordOf(warp * 32, w, 0);
        bool fits[2] = {true, true};
        for (int mode = 0; mode < 2; ++mode) {
          for (int l = 0; l < 32 && fits[mode]; ++l) {
            for (int e = 0; e < 2; ++e) {
              Coord2 p = pattern(mode == 1, l, e);
              if (!(coordOf(warp * 32 + l, w, e) == Coord2{o.r + p.r, o.c + p.c})) fits[mode] = false;
            }
          }
        }
        bool mode = trans.value_or(!fits[0]);
        if (!fits[mode ? 1 : 0])
          return why = fmt::format("register word {} does not hold an 8x8 matrix in the order {}{} {} it", w, name,
                                   trans ? (*trans ? ".trans" : "") : "", store ? "takes" : "delivers"),
                 false;
        trans = mode;
        origin[w].push_back(o);
      }
    }
    // Every matrix row must be 16 contiguous, aligned bytes of shared memory.
    MemoryRuns runs(t, view, &tables_.memoryRuns, atomDivisors());
    for (int64_t w = 0; w < words; ++w) {
      for (const Coord2& o : origin[w]) {
        for (int64_t i = 0; i < 8; ++i) {
          MemoryRuns::Problem p = runs.check({o.r + i, o.c}, 8, nullptr);
          if (!p.ok()) return why = fmt::format("a matrix row is not 16 contiguous, aligned bytes: {}", p.message), false;
        }
      }
    }

    // Group words into instructions.
    struct Instr {
      int64_t first;
      int n;
    };
    std::vector<Instr> instrs;
    for (int64_t w = 0; w < words;) {
      int n = words - w >= 4 ? 4 : words - w >= 2 ? 2 : 1;
      instrs.push_back({w, n});
      w += n;
    }
    int eb = tile::dtypeBytes(t.dtype);
    reportBankConflicts(loc, fmt::format("{}{}", name, *trans ? ".trans" : ""), t, [&](const layout::Layout& l) {
      tile::Tensor probe = t;
      probe.layout = l;
      MemoryRuns r(probe, view, &tables_.memoryRuns, atomDivisors());
      std::vector<WarpAccess> out;
      for (size_t shift = 0; shift < r.shifts().size(); ++shift) {
        for (const Instr& in : instrs) {
          for (size_t warp = 0; warp < warps.size(); ++warp) {
            WarpAccess a;
            a.width = 16;
            a.where = r.shiftDescription(shift);
            for (int lane = 0; lane < 32; ++lane) {
              int i = (lane / 8) % in.n;
              if (lane >= 8 * in.n) {
                a.bytes.push_back(std::nullopt);
                continue;
              }
              const Coord2& o = origin[in.first + i][warp];
              std::optional<int64_t> m = r.offsetAt({o.r + lane % 8, o.c}, shift);
              a.bytes.push_back(m ? std::optional<int64_t>(*m * eb) : std::nullopt);
            }
            out.push_back(std::move(a));
          }
        }
      }
      return out;
    });

    // Lane l addresses row l % 8 of matrix (l / 8) % n: its own coordinate of that matrix's
    // word, moved back to the matrix origin by the pattern, plus the row.
    ExprRef lane = tir::special(tir::Special::LaneId);
    ExprRef patR = *trans ? tir::mul(modConst(lane, 4), tir::intConst(2)) : divConst(lane, 4);
    ExprRef patC = *trans ? divConst(lane, 4) : tir::mul(modConst(lane, 4), tir::intConst(2));
    ExprRef row = modConst(lane, 8);
    std::string summary;
    tir::Block body;  // run by the warps that hold part of the fragment
    out_.push_back(&body);
    const uint32_t array = registers();
    for (const Instr& in : instrs) {
      ExprRef which = in.n == 1 ? tir::intConst(0) : modConst(divConst(lane, 8), in.n);
      // Matrix i's offset from the first word's slot, as a function of `which` = i: linear in
      // i, or (for four matrices, as the mma operands lay them out) linear in each of its two
      // bits, else a table; the first offset stays a separate constant, so that addressing can
      // move it out of a swizzle and share one address between instructions.
      auto offsetOf = [&](int d) {
        std::vector<int64_t> off;
        for (int i = 0; i < in.n; ++i)
          off.push_back(slotAt[static_cast<size_t>(2 * wordOf[static_cast<size_t>(in.first + i)])]->offset[d == 0 ? R : C]);
        if (in.n == 1) return tir::intConst(off[0]);
        bool linear = true;
        for (int i = 2; i < in.n; ++i) linear &= off[i] - off[0] == i * (off[1] - off[0]);
        ExprRef delta;
        if (linear) {
          delta = tir::mul(which, tir::intConst(off[1] - off[0]));
        } else if (in.n == 4 && off[3] - off[2] == off[1] - off[0]) {
          delta = tir::add(tir::mul(tir::binary(tir::BinOp::And, which, tir::intConst(1)), tir::intConst(off[1] - off[0])),
                           tir::mul(tir::binary(tir::BinOp::Shr, which, tir::intConst(1)), tir::intConst(off[2] - off[0])));
        } else {
          delta = tir::intConst(off[in.n - 1] - off[0]);
          for (int i = in.n - 1; i-- > 0;)
            delta = tir::select(tir::binary(tir::BinOp::Eq, which, tir::intConst(i)), tir::intConst(off[i] - off[0]),
                                delta);
        }
        return tir::add(delta, tir::intConst(off[0]));
      };
      ExprRef r = tir::add(tir::sub(tir::add(fm.base[R], offsetOf(0)), patR), row);
      ExprRef c = tir::sub(tir::add(fm.base[C], offsetOf(1)), patC);
      std::vector<tir::Reg> words;
      for (int i = 0; i < in.n; ++i) words.push_back(tir::Reg::elem(array, wordOf[static_cast<size_t>(in.first + i)]));
      if (store)
        emit(loc, tir::Stmatrix{in.n, *trans, std::move(words), memRef(t, tensorCoord(view, {r, c}))});
      else
        emit(loc, tir::Ldmatrix{in.n, *trans, std::move(words), memRef(t, tensorCoord(view, {r, c}))});
    }
    out_.pop_back();
    emitGuarded(loc, fm.owns, std::move(body));
    std::map<int, int> counts;
    for (const Instr& in : instrs) ++counts[in.n];
    for (const auto& [n, count] : counts)
      summary += fmt::format("{}{} x {}.x{}{}", summary.empty() ? "" : ", ", count, name, n, *trans ? ".trans" : "");
    diags_.report(kMatrixCopy, loc,
                  fmt::format("fragment {}: {}{}", store ? "store" : "load", summary,
                              swapped ? " (matrix rows along dimension 0)" : ""));
    return true;
  };
  if (attempt(false, why)) return true;
  std::string otherWay;
  return attempt(true, otherWay);
}

}  // namespace tyl::lower
