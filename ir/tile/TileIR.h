// Tile IR: kernels as operations on whole tensors that carry layouts.
//
// Semantic analysis produces it from the AST; the layout checks read it; lowering turns
// each tile operation into what every thread does (the thread IR). Scalar computations
// are already thread IR expressions here: they lower one to one. What the tile IR adds
// are tensors with layouts, views into them, and operations on whole tiles.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "base/Source.h"
#include "ir/layout/Layout.h"
#include "ir/layout/MmaAtom.h"
#include "ir/thread/ThreadIR.h"

namespace tyl::tile {

enum class DType : uint8_t { F32, F16, BF16, I32, I64, Bool };

tir::Type toTir(DType t);
const char* dtypeName(DType t);
int dtypeBytes(DType t);
std::optional<DType> dtypeFromName(std::string_view name);
inline bool isFloat(DType t) { return t == DType::F32 || t == DType::F16 || t == DType::BF16; }

enum class MemSpace : uint8_t { Global, Shared, Local };
const char* spaceName(MemSpace s);

// A tensor: a global kernel parameter, a shared allocation, or a register fragment.
struct Tensor {
  std::string name;
  MemSpace space = MemSpace::Local;
  DType dtype = DType::F32;
  // Every dimension as an i64 expression (a constant when static); staticShape holds
  // the value, or -1 for a dimension known only at run time.
  std::vector<tir::ExprRef> shape;
  std::vector<int64_t> staticShape;
  // Shared and local tensors (and global ones with a constant layout) have a static
  // layout. Global tensors also carry one stride per dimension, possibly at run time.
  std::optional<layout::Layout> layout;
  std::vector<tir::ExprRef> strides;
  int64_t alignBytes = 0;    // global: declared base alignment; shared: allocation alignment
  uint32_t buffer = ~0u;     // global and shared: the thread IR buffer
  uint32_t array = ~0u;      // local: the register array holding this thread's slots
  int64_t slots = 0;         // local: register slots per thread
  SourceRange loc;
  SourceRange layoutLoc;
  bool mbarriers = false;  // shared: an array of mbarriers (8 bytes each), not data
  bool autoNamed = false;  // named by the compiler; a `let` binding may rename it
  std::string madeBy;      // while autoNamed: what made it, for messages ("load_b's fragment")

  bool isStatic() const;
  int64_t staticSize() const;  // -1 when a dimension is dynamic
  // How messages name it: 'x' as the source does, or what made an unnamed one.
  std::string ref() const { return autoNamed && !madeBy.empty() ? madeBy : "'" + name + "'"; }
};

// A rectangular part of a tensor: the element at view coordinate c is the tensor
// element with coordinate `origin` + c placed on the kept dimensions `dims`. Dropped
// dimensions (indexed away, as in `As[stage]`) stay at their origin. `dims` lists the kept
// dimensions in the view's order, which a transposed view (`B.T`) gives out of the tensor's.
struct View {
  uint32_t tensor = 0;
  std::vector<tir::ExprRef> origin;  // one per tensor dimension
  std::vector<int> dims;             // the tensor dimension at each of the view's positions
  std::vector<int64_t> shape;        // the view's extent along each kept dimension
  SourceRange loc;

  size_t rank() const { return shape.size(); }
  int64_t size() const;
};

// The view is all of `t`: every dimension kept, from origin 0, at the static extent.
bool coversTensor(const View& v, const Tensor& t);
// The view holds every element of `t` in the same order, though it may leave out dimensions of
// extent 1 (as `x[0]` of an f32[1, 32, 8] tensor does): coversTensor, less those dimensions.
bool coversElements(const View& v, const Tensor& t);

// Elementwise arithmetic over register fragments that share one layout, scalars broadcast
// to every element, and memory tensors of the same shape, read in the fragments' layout
// (each thread reads the elements of its own slots; outside a global tensor, zero).
struct FragExpr;
using FragRef = std::shared_ptr<const FragExpr>;

struct FragExpr {
  enum class Kind : uint8_t { Tensor, Scalar, Binary, Unary, Cast, Memory, Select };
  Kind kind = Kind::Tensor;
  DType dtype = DType::F32;
  uint32_t tensor = 0;      // Tensor
  // Tensor: the part of the fragment read, when not all of it (a window at a compile-time origin,
  // its elements in the slots the fragment gives them). Only stores to memory read parts.
  std::optional<View> part;
  // Tensor: a fragment with extent 1 in dimensions where the expression's shape is larger, each
  // element read wherever the expression uses its row (`x - row_max`). Lowering finds the slot
  // that holds it in each thread, or reports the thread that lacks it.
  bool broadcast = false;
  // Tensor: instead of the elements, each one's coordinate along this dimension (i32), as
  // x.coord(d) reads it: where the layout puts each element decides the value in each slot.
  std::optional<size_t> coord;
  View memory;              // Memory: a view of a global or shared tensor
  tir::ExprRef scalar;      // Scalar
  tir::BinOp bin = tir::BinOp::Add;
  tir::UnOp un = tir::UnOp::Neg;
  FragRef a, b;
  FragRef cond;  // Select: cond ? a : b, elementwise (a Bool expression; a comparison is Binary with dtype Bool)
};

// The first leaf of this kind in `f` (left to right), or null.
const FragExpr* firstLeaf(const FragRef& f, FragExpr::Kind kind);
// The register fragment whose layout an elementwise expression is computed in: its first.
// Broadcast leaves do not count: they have extent 1 where the expression is larger.
const FragExpr* layoutLeaf(const FragRef& f);
// Whether `f` reads a part of a fragment.
bool readsPart(const FragRef& f);

struct Stmt;
using Block = std::vector<Stmt>;

// dst = value, for a scalar register (a `let` or an assignment).
struct ScalarSet {
  tir::Reg dst;
  tir::ExprRef value;
};

// dst = one element of a tensor view.
struct ElemLoad {
  tir::Reg dst;
  View view;
  std::vector<tir::ExprRef> index;
};

// One element of a tensor view = value.
struct ElemStore {
  View view;
  std::vector<tir::ExprRef> index;
  tir::ExprRef value;
};

// A tile copy. `src` is a view, or `value` an elementwise fragment expression. Copies
// between a fragment and memory are done by the owning threads; copies between two
// memories are spread over the block's threads. `async` uses cp.async (global to shared).
struct Copy {
  View dst;
  std::optional<View> src;
  FragRef value;
  bool async = false;
  // copy_async only: when this is false nothing is read and the destination is
  // zero-filled (null: always enabled). A pipeline's prefetch past the end of its loop is
  // disabled this way instead of branched around, so the copies stay in the loop's
  // straight-line code.
  tir::ExprRef enable;
  // copy_async only: a TMA copy (sm_90) that completes its bytes on this mbarrier (a rank-0 view of
  // an alloc_barriers array), issued by each thread that runs it.
  std::optional<View> barrier;
  // With `barrier`: a 16-bit mask of cluster ranks (I32) to multicast the box to (null: this block).
  tir::ExprRef multicast;
  // store_async: a TMA store (sm_90) from a shared tile to a global window, in the issuing
  // thread's bulk group; async is set too.
  bool tmaStore = false;
};

// A fragment = an elementwise expression over fragments of the same layout.
struct FragAssign {
  uint32_t dst = 0;
  FragRef value;
};

// dst = src reduced with `op` (Add, Max or Min) over dimensions `dims` of src's shape, computed
// in f32 (i32 for integers): dst is a register fragment of that shape with extent 1 in those
// dimensions, in the layout layout::reduceDims derives from src's (each thread that holds part
// of a row holds the row's result).
struct Reduce {
  uint32_t dst = 0;
  FragRef src;
  std::vector<size_t> dims;
  tir::BinOp op = tir::BinOp::Add;
};

// A tiled MMA: the mma.sync m16n8k16 atom repeated over warps and positions, or (wgmmaN > 0) the
// wgmma m64nNk16 atom once per warpgroup of a groupsM x groupsN grid (warpgroup g at row
// g / groupsN, column g % groupsN).
struct TiledMma {
  DType ab = DType::F16;  // element type of A and B (f16 or bf16); C is f32
  layout::TiledMmaShape shape;
  int64_t wgmmaN = 0;
  int64_t groupsM = 1, groupsN = 1;

  bool warpgroup() const { return wgmmaN > 0; }
  int64_t tileM() const { return warpgroup() ? 64 * groupsM : shape.tileM(); }
  int64_t tileN() const { return warpgroup() ? wgmmaN * groupsN : shape.tileN(); }
  int64_t threads() const { return warpgroup() ? 128 * groupsM * groupsN : shape.threads(); }
};

// d = a * b + c over the whole tile, on register fragments: c and d (tileM, tileN) f32,
// a (tileM, K), b (K, tileN), K a multiple of 16.
struct Mma {
  TiledMma mma;
  uint32_t d = 0, a = 0, b = 0, c = 0;
};

// d = a * b + c over the whole tile with wgmma (sm_90a): c and d (tileM, tileN) f32 register
// fragments; a (tileM, K) and b (K, tileN) views of shared tensors, read through descriptors (or a
// from registers, aFrag), K a multiple of 16. The statement's wgmmas are one commit group of their warpgroup; unless
// `async`, the statement also waits for it. An async MMA's d is defined, and its tiles free,
// only once a WaitMmas retires its group.
struct WarpgroupMma {
  TiledMma mma;
  uint32_t d = 0, c = 0;
  View a, b;
  bool async = false;
  // A from registers: a whole (tileM, K) register fragment, a its whole view (wgmma reads each
  // warp's rows as words; an async MMA's A is in flight like its d).
  std::optional<uint32_t> aFrag;
};

// wait_mmas(n): wgmma.wait_group n (n in 0..7), this warpgroup's async MMA groups retired but the n
// newest.
struct WaitMmas {
  int pending = 0;
};

// mbarriers (sm_90). Init: every barrier of the array `bar` (a whole tensor) gets `value`
// arrivals per phase, by the block's first thread, then the block synchronizes. Arrive: each
// thread that runs it arrives once on the barrier `bar` (rank 0), after expecting `value`
// transaction bytes when there is one. Wait: each thread waits until the barrier's phase of
// parity `value` completes.
struct MbarrierOp {
  enum class Kind : uint8_t { Init, Arrive, Wait };
  Kind kind = Kind::Arrive;
  View bar;
  tir::ExprRef value;
  tir::ExprRef cta;  // Arrive: the cluster rank of the block whose barrier it is (null: this block's)
};

struct CommitCopies {};
struct WaitCopies {
  int pending = 0;
};
// barrier(), or with `cluster`, cluster_barrier(): every thread of the cluster. With `threads` > 0,
// barrier(threads = n, id = i): the named barrier i of the n threads that reach it (whole warps).
struct Barrier {
  bool cluster = false;
  int id = 0;
  int threads = 0;  // 0: every thread of the block
  const char* origin = nullptr;  // as tir::Barrier::origin
};
// commit_stores() / wait_stores(n): cp.async.bulk.commit_group / wait_group.read (TMA stores).
struct CommitStores {};
struct WaitStores {
  int pending = 0;
};
// increase_registers(n) / decrease_registers(n): setmaxnreg.
struct SetMaxNReg {
  bool increase = false;
  int count = 0;
};

struct For {
  uint32_t var = 0;
  tir::ExprRef begin, end, step;
  Block body;
};

struct If {
  tir::ExprRef cond;
  Block then;
  Block otherwise;
};

struct Stmt {
  SourceRange loc;
  std::variant<ScalarSet, ElemLoad, ElemStore, Copy, FragAssign, Reduce, Mma, WarpgroupMma, MbarrierOp, CommitCopies, WaitCopies,
               Barrier, SetMaxNReg, CommitStores, WaitStores, WaitMmas, For, If>
      node;
};

struct Kernel {
  // Parameters, registers, buffers and the launch configuration, shared with the
  // thread IR that lowering fills in.
  tir::Kernel skeleton;
  std::vector<Tensor> tensors;
  Block body;
  // For an instantiation of a generic kernel, its arguments ("T = f16, D = 128"); empty
  // otherwise. Diagnostics found in it say so.
  std::string instantiation;
};

struct Module {
  std::string sourceName;
  std::vector<Kernel> kernels;
};

}  // namespace tyl::tile
