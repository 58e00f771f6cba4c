// Thread IR: what one thread of a kernel does.
//
// The CUDA backend prints it and the emulator executes it, so a CPU run checks the very
// lowering the GPU will run. It is structured (blocks, `for`, `if`), typed, and explicit:
// addresses are element offsets into named buffers, register arrays are indexed only by
// compile-time constants, and hardware instructions (ldmatrix, mma.sync, cp.async, ...)
// are statements with their register and address operands spelled out.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "base/Source.h"

namespace tyl::tir {

// ---- Types -----------------------------------------------------------------------

// Scalar types. 16-bit floats live in registers as packed pairs: a register array of
// F16/BF16 elements is stored as 32-bit words, word w holding elements 2w and 2w+1.
enum class Type : uint8_t { Pred, I32, I64, U32, F32, F16, BF16 };

int typeBytes(Type t);  // Pred counts as 1
bool isFloat(Type t);
bool isInt(Type t);  // I32, I64, U32
const char* typeName(Type t);

enum class Space : uint8_t { Global, Shared };

// Integer values [lo, hi], both included.
struct Range {
  int64_t lo = 0, hi = 0;
  bool within(const Range& outer) const { return lo >= outer.lo && hi <= outer.hi; }
};

// ---- Entities --------------------------------------------------------------------

// A scalar register (a mutable local variable).
struct Var {
  std::string name;
  Type type;
  // Assigned once, at the top of the kernel body, before any use (a named invariant):
  // the CUDA backend prints it as a const definition.
  bool single = false;
  // Every value the variable holds, where the pass that made it knows more than its
  // assignments show (a counter that wraps at S holds 0..S-1).
  std::optional<Range> known;
  // The name the source gives it, where `name` had to be made unique in the kernel (a second
  // `k` is `k_1`); empty when the two are the same.
  std::string sourceName;
};

// The variable's name as diagnostics should show it: the source's.
inline const std::string& shownName(const Var& v) { return v.sourceName.empty() ? v.name : v.sourceName; }

// A register array: fragment storage. Indices are always compile-time constants.
struct Array {
  std::string name;
  Type elem;
  int64_t count;
};

// Memory a kernel addresses: a global tensor (through a pointer parameter) or a shared
// allocation (a byte range of the block's dynamic shared memory).
struct Buffer {
  std::string name;
  Space space;
  Type elem;
  int param = -1;             // global: the parameter holding the pointer
  int64_t sharedOffset = 0;   // shared: byte offset in dynamic shared memory
  int64_t sharedBytes = 0;    // shared: size in bytes
  int64_t alignBytes = 0;     // guaranteed alignment of the base address
  bool readOnly = false;      // global: never written by the kernel
};


// ---- Expressions -----------------------------------------------------------------

enum class Special : uint8_t {
  TidX, TidY, TidZ,        // threadIdx
  CtaidX, CtaidY, CtaidZ,  // blockIdx
  NctaidX, NctaidY, NctaidZ,  // gridDim
  LaneId,                  // %laneid
  WarpId,                  // linear thread id / 32
  SharedBase,              // the shared-window byte address of the block's dynamic shared memory
  ElectOne,                // elect.sync over the whole warp: true in one lane (pred); a warp-wide instruction
  ClusterRank,             // %cluster_ctarank: the block's rank in its cluster (sm_90)
  SmCount,                 // the device's multiprocessor count: read by the launcher, in launch-time
                           // expressions (the grid) only
};
inline constexpr int kSpecialCount = static_cast<int>(Special::SmCount) + 1;

enum class BinOp : uint8_t {
  Add, Sub, Mul, Div, Rem,  // integer Div/Rem truncate toward zero, as in C++
  Shl, Shr, And, Or, Xor,
  Min, Max,
  Lt, Le, Gt, Ge, Eq, Ne,   // result Pred
  LAnd, LOr,                // Pred operands
};

// Relu and the math functions take and give f32. The precise forms are CUDA's math functions
// (sqrtf is correctly rounded; exp2f, expf and rsqrtf within 2 ulp, log2f and logf 1 ulp); the
// Fast forms are PTX's .approx instructions, within their stated bounds (docs/language.md).
enum class UnOp : uint8_t {
  Neg, Not, Relu,
  Abs, Sqrt, Rsqrt, Exp2, Exp, Log2, Log,
  FastSqrt, FastRsqrt, FastExp2, FastExp, FastLog2, FastLog,
};

// The function's name in .tyl and in the runtime (tylo::exp2): relu, abs, ..., fast_log; null
// for Neg and Not, which are operators.
const char* unaryFunctionName(UnOp op);

enum class ExprKind : uint8_t { IntConst, FloatConst, VarRef, ParamRef, SpecialReg, Elem, Binary, Unary, Select, Cast };

struct Expr;
using ExprRef = std::shared_ptr<const Expr>;

// Immutable expression nodes, shared freely between statements. Each kind reads only its
// own fields; the others keep their defaults, so that equal expressions compare equal.
struct Expr {
  ExprKind kind;
  Type type;
  int64_t value = 0;              // IntConst: the value (a Pred: 0 or 1)
  double real = 0;                // FloatConst: the value
  uint32_t id = 0;                // VarRef: the Var; ParamRef: the Param; Elem: the Array
  int64_t index = 0;              // Elem: the element of the array
  Special special = Special::TidX;  // SpecialReg: which register
  BinOp bin = BinOp::Add;         // Binary
  UnOp un = UnOp::Neg;            // Unary
  std::array<ExprRef, 3> args{};  // Binary: a, b; Unary/Cast: a; Select: cond, a, b
};

struct Param {
  std::string name;
  bool isPointer = false;  // pointer to `type` elements; otherwise a scalar of `type`
  Type type;
  int buffer = -1;  // pointers: the Buffer addressed through this parameter
  // Pointers: the tensor's shape and strides in elements, over scalar parameters (for
  // hosts that allocate and inspect it, such as `tyloc run`).
  std::vector<ExprRef> shape;
  std::vector<ExprRef> strides;
};

// ---- Statements ------------------------------------------------------------------

// A register operand: a scalar variable or one element of a register array.
struct Reg {
  bool isVar = false;
  uint32_t id = 0;     // Var id or Array id
  int64_t index = 0;   // element index (arrays)

  static Reg var(uint32_t id) { return Reg{true, id, 0}; }
  static Reg elem(uint32_t array, int64_t index) { return Reg{false, array, index}; }
};

// `offset` elements (of the buffer's element type) past the start of `buffer`.
struct MemRef {
  uint32_t buffer = 0;
  ExprRef offset;
};

struct Stmt;
using Block = std::vector<Stmt>;

struct Assign {
  Reg dst;
  ExprRef value;
};

// Moves `regs.size()` consecutive elements between memory and registers as one access
// of regs.size() * typeBytes(type) bytes (1 to 16), when `pred` is null or true.
struct Load {
  Type type;
  MemRef src;
  std::vector<Reg> dst;
  ExprRef pred;
};
struct Store {
  Type type;
  MemRef dst;
  std::vector<Reg> src;
  ExprRef pred;
};

struct If {
  ExprRef cond;
  Block then;
  Block otherwise;
};

// for (var = begin; var < end; var += step), the step positive; `var + step` saturates at
// the type's largest value, so that the loop ends. `unroll` asks the backend to unroll it.
struct For {
  uint32_t var;
  ExprRef begin;
  ExprRef end;
  ExprRef step;
  bool unroll = false;
  Block body;
};

// bar.sync 0: every thread of the block waits here. With `threads` > 0, bar.sync id, threads: the
// named barrier `id` (1..15) waits for that many threads (whole warps), those that reach it. With
// `cluster`, barrier.cluster.arrive.release + barrier.cluster.wait.acquire (sm_90): every thread
// of every block of the cluster waits here, and what each did before is visible to all after,
// shared memory of the other blocks included.
struct Barrier {
  bool cluster = false;
  int id = 0;
  int threads = 0;  // 0: every thread of the block
  // What a barrier the source does not write synchronizes for ("the pipeline", "reduce() across
  // warps"), for the diagnostics; null for barrier().
  const char* origin = nullptr;
};

// cp.async of `bytes` (4, 8 or 16) from global to shared. Only `srcBytes` bytes are read
// (null: all); the rest of the destination is zero-filled.
struct CpAsync {
  MemRef dst;
  MemRef src;
  int bytes = 16;
  ExprRef srcBytes;
};
struct CpAsyncCommit {};
// cp.async.wait_group n: at most n of this thread's committed groups remain in flight.
struct CpAsyncWait {
  int n = 0;
};

// ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16: each lane gives the address of
// one 16-byte row (lanes 8i..8i+7 address matrix i) and receives one 32-bit word per
// matrix. `dst` are 32-bit words of 16-bit register arrays (Reg.index = word index).
struct Ldmatrix {
  int num = 4;
  bool trans = false;
  std::vector<Reg> dst;
  MemRef addr;
};
// stmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16 (sm_90): the inverse of ldmatrix.
struct Stmatrix {
  int num = 4;
  bool trans = false;
  std::vector<Reg> src;
  MemRef addr;
};

// shfl.sync.bfly.b32 over the whole warp (member mask 0xffffffff, clamp 31): `dst` receives the
// `value` of lane laneid ^ laneMask. A 32-bit value (F32 or I32); a warp-wide instruction.
struct Shfl {
  Reg dst;
  ExprRef value;
  int laneMask = 1;
};

// mma.sync.aligned.m16n8k16.row.col.f32.{ab}.{ab}.f32: d = a * b + c. `a` (4) and `b` (2)
// are 32-bit words of 16-bit arrays; `c` and `d` (4 each) are F32 elements.
struct Mma {
  Type ab = Type::F16;
  std::vector<Reg> d;
  std::vector<Reg> a;
  std::vector<Reg> b;
  std::vector<Reg> c;
};

// wgmma.mma_async.sync.aligned.m64nNk16.f32.{ab}.{ab} (sm_90a): for the warpgroup of this
// thread's warp, D (64 x n, f32) = A (64 x 16) * B (16 x n) + (accumulate ? D : 0), the operands
// read from shared memory through 64-bit matrix descriptors: `descA` and `descB` are I64 values
// holding the descriptor bits, computed by the kernel (ir/layout/Wgmma.h has the fields). Or A
// from registers: `a` holds four 32-bit words of a 16-bit array, this warp's 16 rows of A as
// mma.sync m16n8k16 holds its A, and `descA` is null.
// `transA` / `transB` set imm-trans: the operand is MN-major. `d` are this thread's n / 2 F32
// registers of D (ir/layout/Wgmma.h gives which element each holds). The instruction is
// asynchronous: D may be read only after a WgmmaWait covers the group it was committed in.
struct Wgmma {
  Type ab = Type::F16;
  int n = 8;
  ExprRef descA;
  ExprRef descB;
  bool transA = false;
  bool transB = false;
  ExprRef accumulate;  // Pred; null: always
  std::vector<Reg> d;
  std::vector<Reg> a;  // A from registers (descA null)
};
// wgmma.fence.sync.aligned: orders this warpgroup's earlier register accesses before the next
// wgmma's (needed before the first wgmma and after any other write to its registers).
struct WgmmaFence {};
// wgmma.commit_group.sync.aligned: the wgmmas issued since the last commit become one group.
struct WgmmaCommit {};
// wgmma.wait_group.sync.aligned n: at most n of this warpgroup's committed groups remain pending.
struct WgmmaWait {
  int n = 0;
};

// setmaxnreg.inc / .dec (sm_90a): the registers per thread of the executing warp become `count`
// (24..256, a multiple of 8), taken from or returned to the block's pool: the registers the launch
// allocated. An increase waits until the pool has them. Every warp of a warpgroup executes it.
struct SetMaxNReg {
  bool increase = false;
  int count = 0;
};

// mbarriers (sm_90): 8-byte objects in shared memory, barrier i of a buffer of I64 elements at
// MemRef{buffer, i}. A barrier counts, per phase, the arrivals still pending and the
// transaction bytes still expected; the phase completes when both reach zero
// (backend/emu/Mbarrier.h has the model).
//
// mbarrier.init.shared::cta.b64 [bar], count: `count` arrivals per phase, in phase 0.
struct MbarrierInit {
  MemRef bar;
  ExprRef count;
};
// mbarrier.arrive.shared::cta.b64, or with `expectTx`, mbarrier.arrive.expect_tx: first adds
// that many bytes to the phase's expected transactions, then arrives once. With `cta` (I32), the
// barrier at the same offset in the shared memory of that block of the cluster (its rank):
// mapa.shared::cluster, then mbarrier.arrive.shared::cluster (release at CTA scope, the default).
struct MbarrierArrive {
  MemRef bar;
  ExprRef expectTx;
  ExprRef cta;
};
// mbarrier.try_wait.parity.shared::cta.b64 in a loop: waits until the phase of parity `parity`
// (0 or 1) has completed; the thread then sees what the arrivals of that phase released.
struct MbarrierWait {
  MemRef bar;
  ExprRef parity;
};
// fence.mbarrier_init.release.cluster: the inits before it are visible to the asynchronous proxy
// (TMA completes its transactions there) and to the cluster.
struct FenceMbarrierInit {};

// cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes (sm_90): TMA
// copies the box of tensor map `map` (Kernel::tensorMaps) whose first element is at `coords`
// (elements, innermost first) into shared memory at `dst`, as ir/layout/Tma.h places it; box
// elements outside the tensor read as zeros. When the bytes have landed, the copy completes
// that many transaction bytes on the mbarrier `bar` (the whole box counts, zeros included).
// One thread issues it: every thread that executes the statement issues its own copy.
// With `multicast` (I32, .multicast::cluster), a 16-bit mask of cluster ranks: the box lands at the
// same offset in the shared memory of every block of the mask, and completes its bytes on the
// mbarrier at `bar`'s offset in each.
struct TmaLoad {
  uint32_t map = 0;
  MemRef dst;
  std::vector<ExprRef> coords;
  MemRef bar;
  ExprRef multicast;
};

// cp.async.bulk.tensor, shared to global (TMA store, sm_90): the box of tensor map `map` whose
// first element is at `coords` is read from shared memory at `src` (as TmaLoad writes it) and
// written to the tensor, elements outside it skipped. It joins the issuing thread's open bulk
// group; the shared source must not change until a BulkWait retires the group.
struct TmaStore {
  uint32_t map = 0;
  MemRef src;
  std::vector<ExprRef> coords;
};
// cp.async.bulk.commit_group and cp.async.bulk.wait_group.read n: the thread's TMA stores since
// its last commit become a group; the wait returns once at most n groups may still read shared
// memory.
struct BulkCommit {};
struct BulkWait {
  int n = 0;
};
// fence.proxy.async.shared::cta: this thread's earlier writes to shared memory become visible to
// the async proxy (a TMA store reading them after a barrier).
struct FenceProxyAsync {};

// A note carried into the generated code (and ignored by the emulator).
struct Comment {
  std::string text;
};

// A condition a correct kernel meets that tyloc could not prove at compile time nor leave to
// the launcher (a window of a register fragment at an origin read from memory, say). The
// emulator reports the first thread of a warp where it fails (emu-out-of-bounds: `message`,
// then the thread's `values` as integers in parentheses); the generated code evaluates it only when compiled with
// TYLO_DEVICE_CHECKS defined, and then traps there.
struct Check {
  ExprRef cond;
  std::string message;
  std::vector<ExprRef> values;
};

// Marks where lowering put a tile statement whose work threads share: a copy between memories
// (the block's threads divide its vectors among them) or the store of a register fragment whose
// elements several threads hold (one of them, the leader, stores each). Of the threads where
// `member` holds (null: all), those with equal values of `group` (empty: the whole block) form a
// group: when one of a group reaches the statement, each `leader` of it (null: each member)
// must reach it too, as often. `what` names the statement in diagnostics. Only the convergence
// check reads it; lowering removes it after that check.
struct Cooperative {
  std::string what;
  std::vector<ExprRef> group;
  ExprRef member;
  ExprRef leader;
};

struct Stmt {
  SourceRange loc;
  std::variant<Assign, Load, Store, If, For, Barrier, CpAsync, CpAsyncCommit, CpAsyncWait, Ldmatrix, Stmatrix, Shfl, Mma,
               Wgmma, WgmmaFence, WgmmaCommit, WgmmaWait, SetMaxNReg, MbarrierInit, MbarrierArrive, MbarrierWait,
               FenceMbarrierInit, TmaLoad, TmaStore, BulkCommit, BulkWait, FenceProxyAsync, Comment, Check, Cooperative>
      node;
};

// ---- Kernels ---------------------------------------------------------------------

// A condition the host launcher checks before launching; the launch fails with
// cudaErrorInvalidValue and `message` when it does not hold.
struct LaunchCheck {
  enum class Kind { Condition, PointerAlignment, Disjoint };
  Kind kind = Kind::Condition;
  ExprRef cond;         // Condition: over scalar parameters
  int param = -1;       // PointerAlignment: this pointer parameter ...
  int64_t alignBytes = 0;  // ... must be a multiple of this
  // Disjoint: the elements of pointer parameters `param` and `other` (by their Param shape and
  // strides) share no byte.
  int other = -1;
  std::string message;
  SourceRange loc;
  // Checked before the grid size: a launch with an empty grid does nothing and succeeds
  // without the other checks, but sizes must still be valid.
  bool beforeGrid = false;
};

// A TMA tensor map (CUtensorMap) of a global tensor and one box shape: the launcher encodes it
// (cuTensorMapEncodeTiled) and passes it to the kernel as a __grid_constant__ parameter after
// the others. The tensor is seen as dims.size() dimensions, innermost first.
struct TensorMap {
  std::string name;
  int param = -1;                // the tensor's pointer parameter
  std::vector<ExprRef> dims;     // extents in elements, innermost first, over scalar parameters
  std::vector<ExprRef> strides;  // bytes from one index to the next of dims[1], dims[2], ... (I64)
  std::vector<int64_t> box;      // box extents, innermost first
  int swizzle = 0;               // bytes: 0, 32, 64 or 128
};

// The most shared memory one block can have (sm_90's opt-in maximum).
constexpr int64_t kMaxSharedBytesPerBlock = 227 * 1024;

struct Kernel {
  std::string name;
  SourceRange loc;        // the kernel's name
  SourceRange launchLoc;  // its launch clause
  std::vector<Param> params;
  std::vector<Var> vars;
  std::vector<Array> arrays;
  std::vector<Buffer> buffers;
  std::array<ExprRef, 3> grid;       // over scalar parameters
  std::array<int64_t, 3> block{1, 1, 1};
  std::array<int64_t, 3> cluster{1, 1, 1};  // blocks per cluster (sm_90); the grid is a multiple
  int64_t sharedBytes = 0;           // dynamic shared memory per block
  std::vector<LaunchCheck> checks;
  std::vector<TensorMap> tensorMaps;
  Block body;

  int64_t threadsPerBlock() const { return block[0] * block[1] * block[2]; }
  int64_t clusterSize() const { return cluster[0] * cluster[1] * cluster[2]; }
};

// The registers per thread the launch gives a block of `threads` threads that is alone on its SM
// (tyloc emits __launch_bounds__(threads, 1) for kernels that use setmaxnreg): the SM's 64K over
// the block's warps' threads, in steps of 8, at most 248. The block's pool for setmaxnreg is this
// times its warps' threads.
inline int launchRegistersPerThread(int64_t threads) {
  const int64_t warpThreads = (threads + 31) / 32 * 32;
  return static_cast<int>(std::min<int64_t>(248, 65536 / warpThreads / 8 * 8));
}

struct Module {
  std::string sourceName;  // the .tyl file, for #line directives
  std::vector<Kernel> kernels;
};

}  // namespace tyl::tir
