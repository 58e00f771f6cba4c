// Internals of lowering, shared by the files of ir/lower: the KernelLowering class, whose
// run() (LowerKernel.cpp) lists the steps of lowering one kernel, and the tables they share.
#pragma once

#include <array>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <limits>
#include <optional>
#include <set>
#include <tuple>

#include "ir/layout/MmaAtom.h"
#include "ir/layout/Tma.h"
#include "ir/layout/Wgmma.h"
#include "ir/lower/Addressing.h"
#include "ir/lower/Affine.h"
#include "ir/lower/Lower.h"
#include "ir/lower/MemoryRuns.h"
#include "ir/lower/Ownership.h"
#include "ir/thread/Builder.h"

namespace tyl::lower {

TYL_DIAG(kCopyVector, Remark, "copy-vector", "which vector width a copy uses, and why not a wider one");

// For every element of a fragment (row-major), the threads holding it and in which slot.
struct OwnerTable {
  std::vector<std::vector<std::pair<int32_t, int32_t>>> holders;  // (linear thread id, slot m)
};

// One warp-wide shared-memory access: the byte address of each lane (nullopt: inactive).
struct WarpAccess {
  std::vector<std::optional<int64_t>> bytes;
  int width = 4;
  std::string where;  // the run-time part of the window's origin it is for (MemoryRuns::shiftDescription)
};

// Why wider vectors were not used, widest first, so the last reason is what the next
// wider width needs. Neighbouring widths failing alike are told together:
// "16- and 8-byte vectors: P; 4-byte vectors: Q".
class WidthReasons {
 public:
  void add(int64_t bytes, const std::string& problem);
  bool empty() const { return groups_.empty(); }
  std::string text() const;
  // What the launcher checks so that the chosen width is right (addStrideChecks), for the remark.
  std::string launchChecked;
  // The view dimension the vectors run along when it is not the last (chooseVectorWidth).
  std::optional<size_t> vectorDim;

 private:
  struct Group {
    std::vector<int64_t> bytes;
    std::string problem;
  };
  std::vector<Group> groups_;
};

// The places a view of a shared tile can start at, for checks that hold at compile-time offsets
// (TMA boxes, wgmma descriptors): its constant origin, with each run-time coordinate of a
// dimension the view leaves out (a pipeline's stage) taking every value of that dimension.
// `runtimeKeptDim`: a dimension the view keeps whose origin is known only at run time (then no
// origins); `count` > kMaxTileOrigins: too many to check (no origins either).
struct TileOrigins {
  static constexpr int64_t kMaxTileOrigins = 64;
  std::vector<std::vector<int64_t>> origins;
  bool varies = false;  // some coordinate is known only at run time
  std::optional<size_t> runtimeKeptDim;
  int64_t count = 1;
};
TileOrigins tileOrigins(const tile::View& v, const std::vector<int64_t>& shape);

// Decoded register layouts, shared by all the kernels of a module: the tensors of a
// kernel mostly share a few layouts (the accumulator and its temporaries, each K step's
// operands), and the instantiations of a generic kernel all the same ones.
class LayoutTables {
 public:
  struct Entry {
    layout::Layout layout;
    std::vector<int64_t> shape;
    std::array<int64_t, 3> block;
    std::shared_ptr<const FragmentMap> fragment;
    std::shared_ptr<const OwnerTable> owners;
  };
  // The entry of this layout, shape and launch, made empty if new.
  Entry& at(const layout::Layout& l, const std::vector<int64_t>& shape, const std::array<int64_t, 3>& block) {
    for (Entry& e : entries_)
      if (e.block == block && e.shape == shape && e.layout == l) return e;
    return entries_.emplace_back(Entry{l, shape, block, nullptr, nullptr});
  }
  MemoryRuns::Cache memoryRuns;  // offsets of tensors with static layouts, for every kernel

  // The registers of a tiled mma's instructions, checked once for each combination of the
  // operands' tables and the tiling (the same in every instantiation and every unrolled copy):
  // per instruction, in order, the slots of D, A's and B's 32-bit words, and C.
  struct MmaRegs {
    std::array<int64_t, 4> d, a, c;
    std::array<int64_t, 2> b;
    bool cFromD;  // C is D's registers (a later K block, or acc = mma(acc, ...))
  };
  using MmaKey = std::tuple<const OwnerTable*, const OwnerTable*, const OwnerTable*, const OwnerTable*, int64_t,
                            int64_t, int64_t, int64_t, int64_t>;
  std::map<MmaKey, std::vector<MmaRegs>> mmaRegs;

 private:
  std::deque<Entry> entries_;  // stable references
};

class KernelLowering {
 public:
  KernelLowering(const tile::Kernel& tk, DiagnosticEngine& diags, LayoutTables& tables, const Options& options)
      : tk_(tk), k_(tk.skeleton), diags_(diags), tables_(tables), options_(options) {}

  std::optional<tir::Kernel> run();

 private:
  // The steps of run(), in order, each in the file named above it.

  // CheckLayouts.cpp: every tensor's layout places each element once.
  bool checkLayouts();
  // CheckExpectTx.cpp: an arrive.expect_tx's constant count against the bytes of the TMA copies
  // beside it on the same barrier.
  void checkExpectTx(const tile::Block& block);
  // CheckInFlight.cpp: nothing an async wgmma or TMA store still uses (accumulator, A fragment,
  // shared tiles at constant places) touched, and the kernel not ended, before the wait that
  // retires its group.
  void checkInFlight();
  // CheckRegisterBudget.cpp: the registers each warp holds after the setmaxnreg it runs (where the
  // conditions around them depend on thread ids only) against what the launch allocates.
  void checkRegisterBudget();
  std::string barrierName(const tile::View& bar) const;

  // LaunchChecks.cpp: the launcher's conditions (and addLaunchCheck, which drops repeats).
  std::vector<tir::LaunchCheck> takeAnalysisChecks();
  void addAlignmentChecks();
  void addDimensionChecks();
  void addGridDivisorChecks();
  // Inserts the overlap checks of written pointers at index `at` of the kernel's checks.
  void addDisjointChecks(size_t at);
  void appendAnalysisChecks(std::vector<tir::LaunchCheck> checks);
  void addLaunchCheck(tir::LaunchCheck check);

  // LowerStatements.cpp: the body, statement by statement.
  void lowerBody();
  void block(const tile::Block& b);
  void stmt(const tile::Stmt& s);
  void stmtNode(const tile::Stmt& s);
  // The most elements `s` touches in one view or register fragment.
  int64_t largestOperand(const tile::Stmt& s) const;
  void emit(SourceRange loc, auto node) {
    ++emitted_;
    out_.back()->push_back(tir::Stmt{loc, std::move(node)});
  }
  // ReadOnlyBuffers.cpp: global buffers never stored to.
  void markReadOnlyBuffers();

  // KnownValues.cpp: ranges and divisors of values, element addresses and bounds tests.
  tir::MemRef memRef(const tile::Tensor& t, const std::vector<tir::ExprRef>& coord);
  // inBounds() knowing what the kernel says of its values (atomRange).
  tir::ExprRef bounds(const tile::Tensor& t, const std::vector<tir::ExprRef>& coord);
  std::optional<tir::Range> atomRange(const tir::Expr& atom) const;
  tir::AtomRange atomRanges() const {
    return [this](const tir::Expr& a) { return atomRange(a); };
  }
  // The expression each scalar variable set once holds (for boundsImply).
  std::function<tir::ExprRef(const tir::Expr&)> definitions() const {
    return [this](const tir::Expr& v) -> tir::ExprRef {
      auto it = varDefs_.find(static_cast<uint32_t>(v.id));
      return it == varDefs_.end() ? nullptr : it->second;
    };
  }
  // What is known of the divisibility of a variable (lower/Affine.h): a loop variable is a
  // multiple of its step when its begin is, and a scalar set once of what its value is.
  int64_t atomDivisor(const tir::Expr& atom) const;
  AtomDivisor atomDivisors() const {
    return [this](const tir::Expr& a) { return atomDivisor(a); };
  }
  // Every value of the integer expression `e` is a multiple of the result (0: it is always 0).
  int64_t divisorOf(const tir::ExprRef& e) const;
  int64_t gridLimit(int64_t axis) const;
  // What the launch checks guarantee about a value: it is a multiple of the result.
  int64_t knownDivisor(const tir::ExprRef& e) const;
  // FragmentTables.cpp: which threads hold each element of a fragment, and in which slot.
  const FragmentMap* fragment(uint32_t tensor, SourceRange where);
  // The fragment map seen through `v`, a view of every element of the fragment
  // (tile::coversElements): the coordinates of the dimensions it leaves out, all 0, are dropped.
  const FragmentMap* fragmentThrough(const tile::View& v, SourceRange where);
  // The map of a part of a fragment (a window at a compile-time origin): the slots of its
  // elements, with coordinates relative to the window, which must be the same slots in every
  // thread that holds the fragment.
  const FragmentMap* fragmentPart(const tile::View& part, SourceRange where);
  // The map an expression's slots follow: its layout leaf's fragment, or the part it reads.
  const FragmentMap* fragmentOf(const tile::FragExpr& leaf, SourceRange where) {
    return leaf.part ? fragmentPart(*leaf.part, where) : fragment(leaf.tensor, where);
  }
  const OwnerTable* owners(uint32_t tensor);

  // LowerFragment.cpp
  tir::ExprRef fragValue(const tile::FragRef& f, int64_t slot, tir::Type want);
  void fragAssign(SourceRange loc, uint32_t dst, const tile::FragRef& value);
  // The memory operands of fragment arithmetic (`beta * C` beside a fragment): each is read
  // into registers of its element type, `slots` of them, in vectors of `width` elements.
  struct MemoryOperand {
    const tile::FragExpr* leaf;
    uint32_t regs;
    int width;
    std::optional<size_t> dim;  // the view dimension its vectors run along, when not the last
  };
  // Also finds, for each broadcast leaf, the slot that holds each slot's row (rowSlots); `shaped`
  // is the fragment whose shape and slots the expression has.
  std::vector<MemoryOperand> memoryOperands(SourceRange loc, const tile::FragRef& value, const FragmentMap& fm,
                                            const tile::Tensor& shaped);
  // The number of slots computed together: a multiple of every operand's vector width.
  static size_t operandGroup(const std::vector<MemoryOperand>& ops, size_t width);
  // Reads slots [first, first + count) of every memory operand.
  void readMemoryOperands(SourceRange loc, const std::vector<MemoryOperand>& ops, const FragmentMap& fm,
                          size_t first, size_t count);
  // LowerReduce.cpp: reductions and broadcasts. rowSlots gives, by slot of the fragment `fm` maps
  // (of shape `shaped`), the slot of fragment `narrow` that holds its row (its element with
  // coordinate 0 in the dimensions where `narrow` has extent 1) in the same thread: one slot in
  // every thread, or a diagnostic naming the thread and element that break it (-1: a slot that
  // holds no element).
  std::optional<std::vector<int64_t>> rowSlots(SourceRange loc, const FragmentMap& fm, const tile::Tensor& shaped,
                                               uint32_t narrow);
  void reduce(SourceRange loc, const tile::Reduce& r);
  // The masks of the linear thread id that combine the threads holding one row of `t` reduced
  // over `dims` (from the thread bits its layout gives them): below 32 lane bits, shuffled; from 32
  // up warp bits, combined through shared memory. None when the layout steps threads by other
  // than powers of two (reported).
  void shuffleLanes(SourceRange loc, const tile::Reduce& r, const FragmentMap& src, const FragmentMap& dst,
                    const std::vector<int>& masks);
  void combineWarps(SourceRange loc, const tile::Reduce& r, const FragmentMap& src, const FragmentMap& dst,
                    const std::vector<int>& masks);
  std::optional<std::vector<int>> reductionLanes(SourceRange loc, const tile::Tensor& t, const std::vector<size_t>& dims);
  // Whether the butterfly over `masks` gives each holder of a row of r.dst every element of the
  // row once (for max and min, at least once); reports the first that it does not.
  bool checkButterfly(SourceRange loc, const tile::Reduce& r, const FragmentMap& src, const FragmentMap& dst,
                      const std::vector<int64_t>& into, const std::vector<int>& masks);

  // Emits `body` run only where `guard` holds (always when it is null).
  void emitGuarded(SourceRange loc, const tir::ExprRef& guard, tir::Block body);

  // LowerMatrixCopy.cpp: a fragment load with ldmatrix or store with stmatrix, when the
  // instruction's ownership tables match the fragment's. `registers` gives the 16-bit register
  // array moved (for a store, it emits what computes it) once the instruction is chosen.
  bool tryMatrixCopy(SourceRange loc, const tile::View& mem, uint32_t fragId, const FragmentMap& fm, bool store,
                     const std::function<uint32_t()>& registers, std::string& why);

  // CheckBankConflicts.cpp
  void reportBankConflicts(SourceRange loc, const std::string& instr, const tile::Tensor& t,
                           const std::function<std::vector<WarpAccess>(const layout::Layout&)>& accesses);
  void checkSharedBanks(SourceRange loc, const char* instr, const tile::Tensor& t, const tile::View& v,
                        const std::vector<int64_t>& shape, int64_t w, int64_t vectors);
  // The accesses of a fragment copy (or memory operand) in vectors of `w` elements, each
  // thread its own slots (a store: the first replica only). With `part`, a window of the
  // fragment at a constant origin, only the slots inside it, at `v` less its origin.
  void checkFragmentBanks(SourceRange loc, const char* instr, const tile::View& v, const FragmentMap& fm, int w,
                          bool store, const tile::View* part = nullptr);
  // An element load or store of shared memory whose index depends only on constants, thread ids
  // and the variables of enclosing loops with constant bounds: the accesses of every warp at
  // every value of those variables (at most kMaxLoopPoints of them, and kMaxElementAccesses
  // accesses in all; beyond, the statement is not checked).
  void checkElementBanks(SourceRange loc, const char* instr, const tile::View& v, const std::vector<tir::ExprRef>& index);
  static constexpr int64_t kMaxLoopPoints = 256;
  static constexpr int64_t kMaxElementAccesses = 1 << 16;

  // LowerMma.cpp
  void mma(SourceRange loc, const tile::Mma& op);
  std::optional<int64_t> uniformSlot(uint32_t tensor, const char* role,
                                     const std::function<layout::RowCol(int64_t, int)>& element, const char* atomReg,
                                     SourceRange loc, const char* instruction = "mma.sync", int64_t warps = -1);
  // The 32-bit register words of an operand of 16-bit elements: for j < count, the slots of
  // `element(warp, lane, 2 j)` and `element(warp, lane, 2 j + 1)` (uniformSlot), an even slot and
  // the next; word j is the even slot / 2.
  std::optional<std::vector<int64_t>> mmaWords(uint32_t id, const char* role, int count,
                                               const std::function<layout::RowCol(int64_t, int, int)>& element,
                                               const char* const* names, SourceRange loc,
                                               const char* instruction = "mma.sync", int64_t warps = -1);

  // LowerTma.cpp: copy_async(..., barrier = b) as TMA boxes.
  std::vector<tir::ExprRef> tmaCoords(const tile::View& globalView, const layout::TmaBox& box) const;
  void tmaCopy(SourceRange loc, const tile::Copy& c);
  void tmaStore(SourceRange loc, const tile::Copy& c);
  static bool hasTmaStores(const tile::Block& b);
  // The boxes of a TMA copy between a shared tile and a global window, and the tensor map of
  // the global tensor for them (made, with its launch checks, when new); nullopt after a
  // tma-layout error. `store`: the tile is a TMA store's source (read), else a load's destination.
  // The views are returned as the boxes and coordinates take them: with the global tensor's
  // unit-stride dimension last (LowerTma.cpp, tmaOperands).
  struct TmaPlan {
    layout::TmaTileForm form;
    uint32_t map = 0;
    tile::View shared, global;
  };
  std::optional<TmaPlan> tmaPlan(SourceRange loc, const tile::View& sharedView, const tile::View& globalView,
                                 bool store);

  // LowerMbarriers.cpp
  void mbarrierOp(SourceRange loc, const tile::MbarrierOp& op);

  // LowerWgmma.cpp
  void warpgroupMma(SourceRange loc, const tile::WarpgroupMma& op);
  // The wgmma form of a shared operand tile, the same whatever its run-time origin; nullopt
  // (reported) when it has none.
  std::optional<layout::WgmmaOperandForm> wgmmaForm(SourceRange loc, const tile::View& v, bool isA, int64_t atomMN);

  // LowerFragmentCopy.cpp: the dispatch of copies, and copies between a fragment and memory.
  void copy(SourceRange loc, const tile::Copy& c);
  void copyFragmentMemory(SourceRange loc, const tile::Copy& c, bool toMemory);
  // Memory into a window of a fragment: each slot inside the window, element by element.
  void copyIntoFragmentWindow(SourceRange loc, const tile::Copy& c);
  void checkWindowInside(SourceRange loc, const tile::View& window, const tile::Tensor& f);
  // Moves slots [first, first + w) between the registers `regs` and memory: one vector along
  // view dimension `dim` (the last when none) when it is inside the tensor, else element by
  // element; elements outside are skipped, or read as zero when `zeroOutside`.
  void accessSlots(SourceRange loc, const tile::View& mem, uint32_t regs, const FragmentMap& fm, size_t first, int w,
                   std::optional<size_t> dim, bool toMemory, bool zeroOutside);
  int chooseVectorWidth(const tile::View& mem, const FragmentMap& fm, WidthReasons& why);
  // The copy-vector remark's text for a width chosen for `t`.
  static std::string vectorRemark(int w, const tile::Tensor& t, const WidthReasons& why);
  std::vector<ThreadPoint> threadPoints() const { return lower::threadPoints(k_.block); }
  // By thread of the block: whether it holds part of the fragment (and, when given, `also` holds
  // there too: a store's first replica); none where that is not known at compile time.
  std::optional<std::vector<bool>> holders(const FragmentMap& fm, const tir::ExprRef& also = {}) const;
  // Each thread's base coordinate in `fm`, by linear thread id; nullopt when one is not known
  // at compile time.
  std::optional<std::vector<std::vector<int64_t>>> threadCoords(const FragmentMap& fm) const;
  // Returns what they check, for remarks ("the stride of dimension 0 of C is a multiple of 2
  // elements"); empty when there is nothing to check.
  std::string addStrideChecks(const tile::Tensor& t, const std::vector<std::pair<int, int64_t>>& conditions);

  // LowerMemoryCopy.cpp: copies between two memories, spread over the block's threads.
  // `v` with its dimensions reordered so that dimension j comes last, the others in their order:
  // the same elements, for runs along j.
  static tile::View lastAlong(const tile::View& v, size_t j);
  void copyMemoryMemory(SourceRange loc, const tile::Copy& c);
  // Why no vector can be formed when each view is contiguous along some dimension but none is
  // common to both (naming the dimensions of each); empty otherwise.
  std::string noCommonRun(const tile::View& dv, const tile::View& sv);
  // The view dimensions along which the view's first element and the next are adjacent in
  // memory, whatever the tensor's declared alignment.
  std::vector<size_t> contiguousDims(const tile::View& v);
  // "'A' along dimension 1", "the register slots along dimensions 0 and 1".
  static std::string runsText(const std::string& what, const std::vector<size_t>& dims);

  const tile::Kernel& tk_;
  tir::Kernel k_;
  // Thread-IR statements emitted so far, and whether the kernel went past the limit.
  int64_t emitted_ = 0;
  bool tooLarge_ = false;
  DiagnosticEngine& diags_;
  std::vector<tir::Block*> out_;
  // By tensor (from tables_ when another tensor had the same layout).
  std::map<uint32_t, std::shared_ptr<const FragmentMap>> fragments_;
  std::map<uint32_t, std::shared_ptr<const OwnerTable>> owners_;
  std::map<std::pair<uint32_t, std::vector<int>>, FragmentMap> fragmentViews_;  // (tensor, kept dims) -> map
  // (tensor, origin, shape, kept dims) -> map of that part (none: it cannot be read)
  std::map<std::tuple<uint32_t, std::vector<int64_t>, std::vector<int64_t>, std::vector<int>>,
           std::optional<FragmentMap>>
      fragmentParts_;
  LayoutTables& tables_;
  const Options options_;
  std::map<uint32_t, tir::Range> varRanges_;  // loop variable -> its values in the loop's body
  std::set<int64_t> checkedDims_;           // scalar parameters the launcher checks are >= 0
  std::map<uint32_t, int> scalarSets_;      // scalar variable -> how many statements set it
  std::map<uint32_t, tir::ExprRef> varDefs_;  // scalar variable set once -> its value
  std::map<uint32_t, int64_t> varDivisors_;   // loop variable or scalar set once -> atomDivisor
  // The enclosing loops whose begin, end and step are constants, outermost first.
  struct ConstLoop {
    uint32_t var;
    int64_t begin, end, step;
  };
  std::vector<ConstLoop> constLoops_;
  mutable std::array<std::optional<int64_t>, 3> gridLimits_;  // gridLimit(), once worked out
  std::map<int64_t, int64_t> paramDivisor_;  // scalar parameter -> the launch checks divide it by
  std::vector<uint8_t> injective_;  // per tensor: checkLayouts proved no two elements share a place
  bool hasTmaStores_ = false;       // the kernel has store_async: barriers fence the async proxy
  int temps_ = 0;
  std::map<const tile::FragExpr*, uint32_t> operandRegs_;  // memory operand -> its registers
  std::map<const tile::FragExpr*, std::vector<int64_t>> broadcastSlots_;  // broadcast leaf -> rowSlots
  std::map<const tile::FragExpr*, std::vector<tir::ExprRef>> coordValues_;  // x.coord(d) -> by slot
  std::map<tir::Type, uint32_t> reduceScratch_;  // the shared buffers reductions combine warps in, by type
};

}  // namespace tyl::lower
