// Internals of semantic analysis, shared by Sema*.cpp. Not part of the frontend's API.
#pragma once

#include <array>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/CommonDiags.h"
#include "frontend/ConstEval.h"
#include "frontend/Sema.h"
#include "ir/thread/Builder.h"

namespace tyl::sema {

TYL_DIAG(kBadLoop, Error, "bad-loop", "a for loop over something other than range(...) or unroll(...)");
TYL_DIAG(kDuplicateName, Error, "duplicate-name", "a name declared twice in the same scope");
TYL_DIAG(kCopyShape, Error, "copy-shape-mismatch", "a copy between tensors of different shapes");
TYL_DIAG(kCopySpaces, Error, "copy-spaces", "a copy between memory spaces it does not support");
TYL_DIAG(kSetmaxnregRange, Error, "setmaxnreg-range",
         "a register count for increase_registers or decrease_registers outside 24..256 or not a multiple of 8");

// `f32[32, 4]`: an element type and a shape, as written in alloc_local and parameters.
struct TensorType {
  tile::DType dtype = tile::DType::F32;
  std::vector<tir::ExprRef> shape;
  std::vector<int64_t> staticShape;
};

// What an expression in a kernel body denotes.
struct Value {
  enum class Kind { Void, Const, Scalar, View, Frag, DType, TensorType, Namespace, Atom, Mma, MmaResult };
  Kind kind = Kind::Void;
  ConstValue cv;           // Const: known at compile time
  tir::ExprRef scalar;     // Scalar: computed at run time
  tile::View view;         // View: part of a tensor
  tile::FragRef frag;      // Frag: elementwise fragment arithmetic
  tile::DType dtype{};     // DType
  TensorType ttype;        // TensorType
  std::string ns;          // Namespace: `block_id`, `thread_id`, `block_dim`, `grid_dim`
  tile::TiledMma mma;      // Atom (element type only) and Mma; MmaResult: the arrangement used
  uint32_t mmaArgs[3] = {0, 0, 0};  // MmaResult: the c, a and b fragments (a warpgroup MMA: c only)
  tile::View mmaViews[2];           // MmaResult of a warpgroup MMA: the shared a and b tiles
  bool mmaAsync = false;            // MmaResult of a warpgroup MMA: mma(..., async = true)
  bool mmaRegisterA = false;        // MmaResult of a warpgroup MMA: A is the register fragment mmaViews[0]

  static Value constant(ConstValue v) {
    Value r;
    r.kind = Kind::Const;
    r.cv = std::move(v);
    return r;
  }
  static Value runtime(tir::ExprRef e) {
    Value r;
    r.kind = Kind::Scalar;
    r.scalar = std::move(e);
    return r;
  }
  static Value ofView(tile::View v) {
    Value r;
    r.kind = Kind::View;
    r.view = std::move(v);
    return r;
  }
};

const char* describe(const Value& v);
// cdiv from the quotient and the remainder of a / b: q + (r > 0), which cannot overflow where
// (a + b - 1) / b would.
tir::ExprRef roundedUp(const tir::ExprRef& q, const tir::ExprRef& r);
// A view of a whole register fragment (not a window of one).
bool isWholeLocal(const tile::Kernel& k, const Value& v);
// `a op b` elementwise: computed in f32 when either side is a float, else in i32.
Value fragBinary(tir::BinOp op, tile::FragRef a, tile::FragRef b);

// Module-level names: constants and layouts, in declaration order.
struct ModuleEnv {
  std::map<std::string, ConstValue, std::less<>> consts;
  std::map<std::string, SourceRange, std::less<>> declaredAt;
  // Declared names whose declaration failed (see Binding::poisoned).
  std::set<std::string, std::less<>> poisoned;
};

// The arguments of one instantiation of a generic kernel.
struct GenericArgs {
  std::map<std::string, tile::DType> types;  // `T in (f16, bf16)`
  std::map<std::string, int64_t> values;     // `D in (64, 128)`: constants in the kernel's scope
};

// Analyses one instantiation of one kernel.
class KernelSema {
 public:
  KernelSema(DiagnosticEngine& diags, const ModuleEnv& env, const ast::KernelDecl& decl, GenericArgs args)
      : diags_(diags), env_(env), decl_(decl), typeArgs_(std::move(args.types)), valueArgs_(std::move(args.values)) {}

  std::optional<tile::Kernel> run(std::string name);

 private:
  // Declarations (Sema.cpp)
  bool declareParams();
  bool declareLaunch();
  std::optional<tile::Tensor> tensorParam(const ast::Param& p, int paramIndex);
  // `dims`: how each dimension of the tensor is written.
  bool globalLayout(const ast::Expr& e, const std::vector<std::string>& dims, tile::Tensor& t);

  // Statements (SemaStmt.cpp)
  void block(const ast::Block& b);
  void stmt(const ast::Stmt& s);
  void stmtNode(const ast::Stmt& s);
  void let(const ast::Stmt& s, const ast::Let& l);
  void assign(const ast::Stmt& s, const ast::Assign& a);
  void forLoop(const ast::Stmt& s, const ast::For& f);
  // The values of an unrolled loop: begin, begin + step, ... (count of them).
  struct UnrollRange {
    int64_t begin = 0, step = 1, count = 0;
  };
  std::optional<UnrollRange> unrollRange(const ast::For& f, const ast::Call& c);
  // The bounds of a run-time range(...): begin and end in the loop variable's type (i64 when a
  // bound is, else i32) and the step, a positive constant.
  struct RangeBounds {
    tir::ExprRef begin, end;
    int64_t step = 1;
    tir::Type type = tir::Type::I32;
  };
  std::optional<RangeBounds> rangeBounds(const ast::Call& range);
  void pipelineLoop(const ast::Stmt& s, const ast::For& f, const ast::Call& range);
  // The warp-specialized form (SemaWarpPipeline.cpp): `producer` = warpgroup(P), `registers`
  // = (producer's, consumers') or null.
  void warpSpecializedPipeline(const ast::Stmt& s, const ast::For& f, const ast::Call& range, int64_t stages,
                               const ast::Arg& producer, const ast::Arg* registers);
  bool scalarLet(const ast::Stmt& s);
  // Persistent kernels (SemaPersistent.cpp). `for (m, n) in tiles((TM, TN), group = G)`: the
  // loop over this cluster's units of work (i in `range`) and what gives the tile of unit i.
  struct TileOrder {
    RangeBounds range;
    std::vector<tir::ExprRef> extents;  // TM (and TN), in range.type
    tir::ExprRef unitsM;                // rows of units: cdiv(TM, cluster)
    tir::ExprRef first, clusters;       // this cluster's first unit, and the clusters of the grid
    int64_t group = 1, cluster = 1;
  };
  std::optional<TileOrder> tileOrder(const ast::For& f, const ast::Call& c);
  // Emits the lets that compute the tile of iteration i, and binds f's names to it.
  void bindTile(const ast::For& f, const TileOrder& o, const tir::ExprRef& i);
  void tilesLoop(const ast::Stmt& s, const ast::For& f, const ast::Call& c);
  // The tile counts of tiles(...) or persistent_grid(...): one or two integers, in `type` or
  // i64 when one is.
  std::optional<std::vector<tir::ExprRef>> tileExtents(const ast::Expr& e, const char* fn, tir::Type type);
  std::optional<Value> persistentGrid(const ast::Expr& e, const ast::Call& c);
  // store_async(dst, value, staging = bufs): value stored sub-tile by sub-tile through bufs.
  std::optional<Value> stagedStore(const ast::Expr& e, const ast::Call& c);
  // The sub-tile of `f` at `at` (a constant offset per dimension) of `shape`: each leaf windowed.
  std::optional<tile::FragRef> subTile(const tile::FragRef& f, const std::vector<int64_t>& at,
                                       const std::vector<int64_t>& shape, SourceRange where);
  // What pipelineLoop has read of a pipeline: its stages, the loop's bounds, and its body
  // split into the copies (the producer) and the rest (the consumer).
  struct PipelineParts {
    int64_t stages = 0;
    int64_t step = 1;
    tir::Type type = tir::Type::I32;
    tir::ExprRef begin, end;
    std::vector<const ast::Stmt*> producer, consumer;
    tir::ExprRef iteration(int64_t i) const;  // begin + i * step
    tir::ExprRef stageOf(tir::ExprRef k) const;
  };
  std::optional<PipelineParts> pipelineParts(const ast::For& f, const ast::Call& range, int64_t stages);
  void prefetchedLoop(const ast::Stmt& s, const ast::For& f, const PipelineParts& p);
  void pipelinePrologue(const ast::For& f, const PipelineParts& p, int64_t count);
  // Runs `prelude`, then `list`, in a scope with the loop variable bound to k and `stage` to stage.
  void runPipelinePart(const ast::For& f, const std::vector<const ast::Stmt*>& list, Value k, Value stage,
                       const std::function<void()>& prelude = {});
  // Runs `body` with every copy_async enabled by `cond` only.
  void guardedCopies(tir::ExprRef cond, const std::function<void()>& body);

  // Sure values (SemaLoops.cpp). A range loop around the statement being analysed, with the
  // values its variable is sure to take whenever the loop runs: its first, and its last when
  // both bounds are constants.
  struct LoopValues {
    uint32_t var = 0;
    std::string name;
    SourceRange loc;               // the loop variable, as declared
    std::optional<int64_t> first;  // begin, when it is a constant
    int64_t step = 1;
    std::optional<int64_t> count;  // iterations, when both bounds are constants
    int64_t last = 0;              // the last value, when count is known and not 0
    int conditions = 0;            // conditions_ where the loop is
    tir::ExprRef begin, end;       // the bounds, in the variable's type
  };
  void enterLoop(uint32_t var, const std::string& name, SourceRange loc, const tir::ExprRef& begin,
                 const tir::ExprRef& end, int64_t step);
  void leaveLoop() { loops_.pop_back(); }
  // A value that a run-time coordinate surely takes, outside [0, most[i]] along dimension i.
  struct Escape {
    size_t dim = 0;
    int64_t value = 0;
    std::string when;        // "for k = 4 and thread 3"
    const LoopValues* loop = nullptr;  // the innermost loop named in `when` (null: none)
  };
  // Coordinates that depend only on loop variables of loops_ (no condition between the loop
  // and here) and, with no condition around the statement, on thread and block ids (with a
  // constant grid), directly or through lets that no assignment changes, are evaluated at the
  // values those surely take: every combination of them, or of the first and last values
  // when there are too many.
  std::optional<Escape> escapeAtSureValues(const std::vector<tir::ExprRef>& coord, const std::vector<int64_t>& most);
  // The same coordinates when they also depend on scalar parameters, directly or through the
  // last value of a loop whose end is one: unless their ranges show that they stay inside, the
  // launcher checks them at the corners of the sure values (every loop's first and last value,
  // the corners of the thread and the block: see SureSource), for launches in which the
  // statement runs. `what(d)`
  // says what leaving dimension d means ("index 0 into 's' leaves [0, 64)").
  void launchChecksAtSureValues(const std::vector<tir::ExprRef>& coord, const std::vector<int64_t>& most,
                                const std::function<std::string(size_t)>& what, SourceRange where);
  // What coordinates depend on: loops_ (indices), thread ids, block ids, scalar parameters, or
  // something else (a variable that changes, a register element, a value under a condition).
  struct SureDeps {
    std::vector<size_t> loops;  // in order, outermost first
    bool params = false, other = false;
    bool neverRuns = false;     // inside a loop with constant bounds and no iterations
    // Which ids: thread_id.x, .y, .z (bits 0..2) and lane_id() or warp_id() (bit 3); block_id
    // or the grid's size along x, y, z (bits 0..2).
    uint8_t threadAxes = 0, blockAxes = 0;
    bool thread() const { return threadAxes != 0; }
    bool block() const { return blockAxes != 0; }
  };
  SureDeps sureDependencies(const std::vector<tir::ExprRef>& coord, bool gridKnown) const;
  // The sources of the sure values deps names: its loops, the thread's linear index, the
  // block's (of `blocks`), each with values numbered 0 .. count - 1 (a loop's count is 1
  // when its end is not a constant). The corners of the thread and the block are the ids at
  // which an affine access takes its extremes: each axis it uses at its first and last value
  // (with lane_id() or warp_id(), laneWarpCorners in SemaLoops.cpp).
  struct SureSource {
    const LoopValues* loop = nullptr;  // null: the thread, or the block
    bool isThread = false;
    int64_t count = 1;
    std::vector<int64_t> corners;  // thread or block: linear ids (of a run-time grid: SurePoint::block)
  };
  std::vector<SureSource> sureSources(const SureDeps& deps, int64_t blocks,
                                      const std::array<int64_t, 3>& grid) const;
  // One choice of the sure values: each loop variable's value, the thread's and block's ids.
  struct SurePoint {
    std::map<uint32_t, tir::ExprRef> loops;
    // Linear indices; of a run-time grid, the axes (bits 0..2) along which the block is the last.
    int64_t thread = 0, block = 0;
  };
  // `e` at `p`, through lets (with `grid` the constant grid, or zeros: then the block ids are
  // 0, or the grid's size less 1 over the parameters).
  tir::ExprRef atSurePoint(const tir::ExprRef& e, const SurePoint& p, const std::array<int64_t, 3>& grid) const;
  bool windowInsideAtSureValues(const tile::View& w, const tile::Tensor& t);
  // Names that some assignment in `b` sets (`x = ...`, `x += ...`).
  void collectAssignedNames(const ast::Block& b);
  void ifStmt(const ast::Stmt& s, const ast::If& i);
  void exprStmt(const ast::Stmt& s, const ast::ExprStmt& e);
  bool storeElement(const ast::Stmt& s, const ast::Index& target, tir::ExprRef value, SourceRange valueRange);
  void nameTensor(uint32_t id, const std::string& name);
  void emit(SourceRange loc, auto node) {
    if (out_.empty() || !countStmt(loc)) return;
    out_.back()->push_back(tile::Stmt{loc, std::move(node)});
  }

  // Expressions (SemaExpr.cpp)
  std::optional<Value> expr(const ast::Expr& e);
  std::optional<Value> name(const ast::Expr& e, const std::string& n);
  std::optional<Value> binary(const ast::Expr& e, const ast::Binary& b);
  std::optional<Value> binaryOf(const ast::Expr& e, const ast::Binary& b, const Value& lhs, const Value& rhs);
  std::optional<Value> logical(const ast::Expr& e, const ast::Binary& b);
  std::optional<Value> unary(const ast::Expr& e, const ast::Unary& u);
  std::optional<Value> member(const ast::Expr& e, const ast::Member& m);
  std::optional<Value> index(const ast::Expr& e, const ast::Index& i);
  std::optional<Value> constExpr(const ast::Expr& e);
  std::optional<tir::ExprRef> scalar(const ast::Expr& e, std::optional<tir::Type> want = std::nullopt);
  std::optional<int64_t> constInt(const ast::Expr& e, const char* what);
  // One entry of a tuple, evaluated.
  struct Entry {
    Value value;
    SourceRange range;
  };
  // The entries of `e`: the elements of a tuple written out, `(a, b)`, or of a tuple
  // constant (`const TILE = (128, 32);`, each at the range of `e`), or else `e` itself.
  std::optional<std::vector<Entry>> entries(const ast::Expr& e);
  std::optional<int64_t> constInt(const Entry& e, const char* what);
  bool pairArg(const ast::Expr& e, const char* what, int64_t out[2]);
  std::optional<tir::ExprRef> toScalar(const Value& v, SourceRange where, std::optional<tir::Type> want);
  // `part`: a window of a register fragment at a compile-time origin may be read (arithmetic and
  // stores to memory read one; assignments to registers do not).
  std::optional<tile::FragRef> toFrag(const Value& v, SourceRange where, bool part = false);
  bool indicesInside(const tile::View& view, const std::vector<tir::ExprRef>& idx,
                     const std::vector<ast::ExprPtr>& exprs);
  // The view covers its whole tensor (static shape, zero origin, every dimension).
  bool isWholeTensor(const tile::View& v) const;
  // For a view that holds every element of its fragment but leaves out dimensions of extent 1
  // (`x[0]` of an f32[1, 32, 8]): a note that the fragment itself is what is read whole.
  void noteUnitDims(DiagBuilder& d, const tile::View& v, SourceRange where) const;
  bool sameFragmentLayout(SourceRange where, const tile::FragRef& a, const tile::FragRef& b);
  // False, with a type-mismatch at `where`, when a float (`src`, named `what`: "value", "source")
  // would go into `dst`'s integers without a conversion.
  bool noFloatIntoInt(const tile::Tensor& dst, tile::DType src, SourceRange where, const char* what);
  // sameFragmentLayout, or a broadcast: where one side's fragments have extent 1 in the dimensions
  // the other's are larger in (`x - row_max`), that side's leaves are marked to broadcast (lowering
  // finds, thread by thread, the slot that holds each element, or names the thread that lacks it).
  bool alignFragments(SourceRange where, tile::FragRef& a, tile::FragRef& b);
  // reduce(x, dims, op): a new fragment, x reduced over dims with sum, max or min.
  std::optional<Value> reduceCall(const ast::Expr& e, const ast::Call& c);
  // where(cond, a, b): elementwise on fragments (cond a comparison of them), or on scalars.
  std::optional<Value> whereCall(const ast::Expr& e, const ast::Call& c);
  // x.coord(d): each element's coordinate along dimension d, as an i32 fragment expression.
  std::optional<Value> coordCall(const ast::Expr& e, const ast::Call& c, const tile::View& v);
  // False, with a diagnostic, when `f` reads a part of a fragment and `dst` is a register fragment:
  // parts are stored to memory, their slots being the whole fragment's.
  bool wholeInRegisters(const tile::FragRef& f, const tile::Tensor& dst, SourceRange where);
  // A view's shape for messages, run-time extents by their parameter's name ("(M, 4)"), and
  // a hint when it has any.
  std::string shapeText(const tile::View& v) const;
  std::string runtimeShapeHint(const tile::View& v) const;
  std::optional<tir::ExprRef> arith(tir::BinOp op, tir::ExprRef a, tir::ExprRef b, SourceRange where);
  std::optional<std::vector<tir::ExprRef>> indices(const std::vector<ast::ExprPtr>& list);
  std::optional<TensorType> tensorType(const ast::Expr& e);
  std::optional<tir::Reg> registerElement(SourceRange where, const tile::View& view,
                                          const std::vector<tir::ExprRef>& idx,
                                          const std::vector<ast::ExprPtr>& idxExprs);

  // Calls (SemaCall.cpp)
  std::optional<Value> call(const ast::Expr& e, const ast::Call& c);
  std::optional<Value> method(const ast::Expr& e, const ast::Call& c, const ast::Member& m);
  // The tensor an alloc_local or alloc_shared call describes: its type and layout argument.
  std::optional<tile::Tensor> allocTensor(const ast::Expr& e, const ast::Call& c, tile::MemSpace space);
  std::optional<Value> allocLocal(const ast::Expr& e, const ast::Call& c);
  std::optional<Value> allocShared(const ast::Expr& e, const ast::Call& c);
  std::optional<Value> placeShared(tile::Tensor t, const ast::Expr& e);
  // mbarriers: alloc_barriers(n), init_barriers(bars, arrivals = c), arrive(bars[i]) (or with
  // expect_tx = bytes), wait_barrier(bars[i], parity). SemaBarriers.cpp.
  std::optional<Value> allocBarriers(const ast::Expr& e, const ast::Call& c);
  tir::ExprRef clusterRankArg(const ast::Arg& a, const char* what);
  std::optional<Value> barrierOp(const ast::Expr& e, const ast::Call& c, const std::string& fn);
  std::optional<Value> setMaxRegisters(const ast::Expr& e, const ast::Call& c, bool increase);
  std::optional<Value> blockBarrier(const ast::Expr& e, const ast::Call& c);
  // barrier(): the block's, or in a warp-specialized pipeline's consumers, theirs.
  void emitBlockBarrier(SourceRange loc, const char* origin = nullptr);
  // thread_index(): the thread's linear index in its block.
  tir::ExprRef threadIndex() const;
  std::optional<Value> storeAsync(const ast::Expr& e, const ast::Call& c);
  // The one argument of `fn` (wait_copies, wait_stores or wait_mmas): how many of the newest
  // groups (`what`) may remain, a constant in 0..most.
  std::optional<int> pendingGroups(const ast::Expr& e, const ast::Call& c, std::string_view fn, const char* what,
                                   int most = 8);
  std::optional<Value> window(const ast::Expr& e, const ast::Call& c, const tile::View& base);
  std::optional<Value> slotView(const ast::Expr& e, const ast::Call& c, const tile::View& base);
  // `t.T` and `t.permute(...)`: the same elements with the view's dimensions in another order.
  std::optional<Value> permute(const ast::Expr& e, const ast::Call& c, const tile::View& base);
  std::optional<Value> reordered(SourceRange where, const tile::View& base, const std::vector<int>& order,
                                 const char* spelling);
  std::optional<Value> copy(const ast::Expr& e, const ast::Call& c, bool async);
  std::optional<Value> multicastParts(const ast::Expr& e, tile::Copy cp);
  // The builtin function a misspelled name is closest to, when one is close.
  static std::optional<std::string> closestBuiltin(std::string_view fn);
  // What makes `e` differ between the blocks of a cluster ("cluster_rank()", "block_id.x", ...),
  // seen through the lets it reads; nothing when every block computes the same value.
  std::optional<std::string> clusterVarying(const tir::ExprRef& e) const;
  std::optional<layout::Layout> layoutArg(const ast::Expr& e);
  std::optional<Value> mmaAtom(const ast::Expr& e, const ast::Call& c,
                               std::string_view instruction = "mma.sync m16n8k16");
  std::optional<Value> tiledMma(const ast::Expr& e, const ast::Call& c);
  // wgmma_m64nNk16(A, B, C) (`n` parsed from the name) and warpgroup_mma(atom, warpgroups = (m, n)).
  std::optional<Value> wgmmaAtom(const ast::Expr& e, const ast::Call& c, int64_t n);
  std::optional<Value> warpgroupMma(const ast::Expr& e, const ast::Call& c);
  std::optional<Value> wgmmaCall(const ast::Expr& e, const ast::Call& c, const tile::TiledMma& mma);
  std::optional<Value> loadOperand(const ast::Expr& e, const ast::Call& c, bool isA);
  std::optional<Value> mmaCall(const ast::Expr& e, const ast::Call& c, const tile::TiledMma& mma);
  std::optional<Value> zeroC(const ast::Expr& e, const tile::TiledMma& mma);
  // A fragment of the tiled MMA's operands or accumulator; nullopt (reported) past the register limit.
  std::optional<uint32_t> allocFragment(const std::string& base, tile::DType dtype, std::vector<int64_t> shape,
                                        const layout::Layout& l, SourceRange loc, std::string madeBy);
  // How messages name a tensor: 'x' as the source does, or what made an unnamed one.
  static std::string tensorRef(const tile::Tensor& t);
  // Whether a fragment of `slots` register slots per thread is allowed; reports at `loc` when not.
  bool withinRegisterLimit(int64_t slots, SourceRange loc);
  void emitMma(SourceRange loc, uint32_t dst, const Value& result);

  // Names in scope
  struct Binding {
    Value value;
    bool mutableScalar = false;  // a `let` of a run-time scalar: assignable
    tir::Reg reg;                // the register of a mutable scalar
    SourceRange declared;
    // The declaration failed and was reported: uses of the name fail silently, so one
    // mistake is not followed by "unknown name" errors about a name that is there.
    bool poisoned = false;
    bool generic = false;  // an integer generic parameter's value
  };
  void pushScope() { scopes_.emplace_back(); }
  void popScope() { scopes_.pop_back(); }
  void bind(const std::string& n, Binding b) { scopes_.back()[n] = std::move(b); }
  Binding* lookup(const std::string& n);
  ConstEvaluator constEvaluator();

  uint32_t newVar(const std::string& base, tir::Type type);
  uint32_t addTensor(tile::Tensor t);
  tile::View wholeView(uint32_t tensor, SourceRange loc) const;
  bool countStmt(SourceRange where);
  bool countUnrolledIteration(SourceRange where);
  bool withinLimit(int64_t& count, int64_t limit, SourceRange where, std::string_view message);

  DiagnosticEngine& diags_;
  const ModuleEnv& env_;
  const ast::KernelDecl& decl_;
  std::map<std::string, tile::DType> typeArgs_;
  std::map<std::string, int64_t> valueArgs_;
  std::array<ConstValue, 3> blockDim_;  // what the constant evaluator's lookup of block_dim.x, .y, .z points at
  std::map<std::string, SourceRange> pipelineLets_;  // the lets of the pipelines being analysed
  bool blockKnown_ = false;             // block_dim has values: the launch's block has been evaluated
  tile::Kernel k_;
  std::vector<std::map<std::string, Binding>> scopes_;
  std::vector<tile::Block*> out_;
  // Set while a pipeline expands its producer: the condition every copy_async is enabled by.
  tir::ExprRef copyEnable_;
  // Inside a warp-specialized pipeline's producer: the mbarrier its copy_async calls complete on.
  std::optional<tile::View> copyBarrier_;
  // The bytes those copies land in this block's shared memory (all parts of a multicast tile), and
  // whether one was shared by the cluster's blocks (multicast = true).
  int64_t pipelineBytes_ = 0;
  bool pipelineMulticast_ = false;
  // While a warp-specialized pipeline's consumers are analysed: their warpgroup MMAs are async.
  bool asyncMmas_ = false;
  // Inside a warp-specialized pipeline's consumer branch: its threads, which `barrier()` waits for
  // (named barrier kConsumerBarrier), as the producer warpgroup never reaches it.
  int64_t consumerThreads_ = 0;
  int64_t consumerFirstThread_ = 0;  // the first of them
  // The threads that issue staged stores (store_async(..., staging = ...)), each with its first
  // store: at the kernel's end each waits for its stores to finish reading shared memory.
  std::map<int64_t, SourceRange> stagedIssuers_;
  std::vector<LoopValues> loops_;
  // The kernel's names that an assignment sets, and the value of each `let` variable whose
  // name none sets (it holds that value wherever it is seen).
  std::set<std::string> assignedNames_;
  std::map<uint32_t, tir::ExprRef> letValues_;
  // Run-time `if` statements around the statement being analysed.
  int conditions_ = 0;
  // Above 0 while an index or a window origin is analysed: integer arithmetic written there
  // is computed in 64 bits from the start (arith, unary). A name's value keeps its own type.
  int inIndex_ = 0;
  struct IndexScope {
    explicit IndexScope(int& depth) : depth_(depth) { ++depth_; }
    ~IndexScope() { --depth_; }
    IndexScope(const IndexScope&) = delete;
    IndexScope& operator=(const IndexScope&) = delete;
    int& depth_;
  };
  // Set while `x = load_a(...)` (or load_b) is evaluated: the fragment x, which the load fills
  // directly when its layout is the operand's.
  std::optional<uint32_t> loadInto_;
  std::map<std::string, int> nameCounts_;
  int64_t expanded_ = 0;
  int64_t unrolledIterations_ = 0;
  bool tooLarge_ = false;
};

}  // namespace tyl::sema
