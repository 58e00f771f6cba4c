// The integer operations that C++ leaves undefined for some operands compute the thread IR's
// results in generated CUDA, against the table the emulator is checked against too
// (tests/support/IntSemanticsCases.h); so do f32 min, max and relu with signed zeros and NaNs.
//   int_semantics_test host     the runtime's helpers (tylo::wrap_add, div, shl, loop_next,
//                               float_to_i32, ...) on the host: no GPU needed
//   int_semantics_test device   the kernels of tests/emu/kernels/int_semantics.tyl, compiled
//                               by tyloc, on the GPU; exits 77 (skipped) without one
// Exit code: 0 when every case gives the table's result, 1 otherwise.
#include "int_semantics.cuh"

#include <tylo/runtime.cuh>

#include <cmath>
#include <cstdio>
#include <cstring>

#include "tests/support/IntSemanticsCases.h"

using tyl::test::IntCase;
using tyl::test::IntOp;
using tyl::test::IntType;

namespace {

int failures = 0;

void expect(const char* where, size_t index, int64_t got, int64_t want) {
  if (got == want) return;
  std::printf("%s case %zu: got %lld, want %lld\n", where, index, static_cast<long long>(got),
              static_cast<long long>(want));
  ++failures;
}

template <class T>
int64_t apply(IntOp op, T a, T b) {
  switch (op) {
    case IntOp::Add: return tylo::wrap_add(a, b);
    case IntOp::Sub: return tylo::wrap_sub(a, b);
    case IntOp::Mul: return tylo::wrap_mul(a, b);
    case IntOp::Neg: return tylo::wrap_neg(a);
    case IntOp::Div: return tylo::div(a, b);
    case IntOp::Rem: return tylo::rem(a, b);
    case IntOp::Shl: return tylo::shl(a, int64_t{b});
    case IntOp::Shr: return tylo::shr(a, int64_t{b});
    case IntOp::LoopNext: return tylo::loop_next(a, b);
  }
  return 0;
}

int64_t applyUnsigned(IntOp op, uint32_t a, uint32_t b) {
  switch (op) {
    case IntOp::Add: return static_cast<uint32_t>(a + b);
    case IntOp::Sub: return static_cast<uint32_t>(a - b);
    case IntOp::Mul: return static_cast<uint32_t>(a * b);
    case IntOp::Div: return tylo::div(a, b);
    case IntOp::Rem: return tylo::rem(a, b);
    case IntOp::Shl: return tylo::shl(a, int64_t{b});
    case IntOp::Shr: return tylo::shr(a, int64_t{b});
    case IntOp::LoopNext: return tylo::loop_next(a, b);
    case IntOp::Neg: break;
  }
  return -1;
}

float bitsToFloat(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
int64_t floatBits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return bits;
}

void host() {
  size_t i = 0;
  for (const IntCase& c : tyl::test::kIntCases) {
    int64_t got = 0;
    switch (c.type) {
      case IntType::I32: got = apply<int32_t>(c.op, static_cast<int32_t>(c.a), static_cast<int32_t>(c.b)); break;
      case IntType::I64: got = apply<int64_t>(c.op, c.a, c.b); break;
      case IntType::U32: got = applyUnsigned(c.op, static_cast<uint32_t>(c.a), static_cast<uint32_t>(c.b)); break;
    }
    expect("host", i++, got, c.expected);
  }
  i = 0;
  for (const tyl::test::FloatToIntCase& c : tyl::test::kFloatToIntCases) {
    const float x = c.nan ? NAN : c.value;
    const int64_t got = c.to == IntType::I32   ? int64_t{tylo::float_to_i32(x)}
                        : c.to == IntType::I64 ? tylo::float_to_i64(x)
                                               : int64_t{tylo::float_to_u32(x)};
    expect("host float", i++, got, c.expected);
  }
  i = 0;
  for (const tyl::test::MinMaxCase& c : tyl::test::kMinMaxCases) {
    const float a = bitsToFloat(c.a), b = bitsToFloat(c.b);
    expect("host min", i, floatBits(tylo::min(a, b)), c.min);
    expect("host max", i, floatBits(tylo::max(a, b)), c.max);
    expect("host relu", i, floatBits(tylo::max(a, 0.0f)), c.reluA);
    expect("host relu", i++, floatBits(tylo::max(b, 0.0f)), c.reluB);
  }
}

// The kernel's output slot for each operation (int_semantics.tyl).
int slotOf(IntOp op) {
  switch (op) {
    case IntOp::Add: return 0;
    case IntOp::Sub: return 1;
    case IntOp::Mul: return 2;
    case IntOp::Neg: return 3;
    case IntOp::Div: return 4;
    case IntOp::Rem: return 5;
    case IntOp::Shl: return 6;
    case IntOp::Shr: return 7;
    case IntOp::LoopNext: break;
  }
  return -1;
}

bool ok(cudaError_t e, const char* what) {
  if (e == cudaSuccess && cudaDeviceSynchronize() == cudaSuccess) return true;
  std::printf("%s: %s\n", what, cudaGetErrorString(cudaGetLastError()));
  ++failures;
  return false;
}

void device() {
  int32_t* out32 = nullptr;
  int64_t* out64 = nullptr;
  if (cudaMalloc(&out32, 8 * sizeof(int32_t)) != cudaSuccess || cudaMalloc(&out64, 8 * sizeof(int64_t)) != cudaSuccess) {
    ++failures;
    return;
  }
  size_t i = 0;
  for (const IntCase& c : tyl::test::kIntCases) {
    const size_t index = i++;
    const int slot = slotOf(c.op);
    if (c.type == IntType::U32 || slot < 0) continue;  // not .tyl types; loops below
    int64_t got = 0;
    if (c.type == IntType::I32) {
      int32_t host[8];
      if (!ok(ops32(out32, static_cast<int32_t>(c.a), static_cast<int32_t>(c.b)), "ops32")) continue;
      cudaMemcpy(host, out32, sizeof host, cudaMemcpyDeviceToHost);
      got = host[slot];
    } else {
      int64_t host[8];
      if (!ok(ops64(out64, c.a, c.b), "ops64")) continue;
      cudaMemcpy(host, out64, sizeof host, cudaMemcpyDeviceToHost);
      got = host[slot];
    }
    expect("device", index, got, c.expected);
  }
  // range(a, 2^31 - 1, 3) ends where the step would pass the largest i32.
  const int64_t end = tyl::test::kI32Max;
  for (int64_t a : {end - 10, end - 9, end - 8, end - 2, end - 1, end}) {
    int32_t n = -1;
    if (!ok(trips(out32, static_cast<int32_t>(a), static_cast<int32_t>(end)), "trips")) continue;
    cudaMemcpy(&n, out32, sizeof n, cudaMemcpyDeviceToHost);
    expect("device trips", static_cast<size_t>(end - a), n, (end - a + 2) / 3);
  }
  i = 0;
  for (const tyl::test::FloatToIntCase& c : tyl::test::kFloatToIntCases) {
    const size_t index = i++;
    if (c.to == IntType::U32) continue;
    int32_t got32 = 0;
    int64_t got64 = 0;
    if (!ok(to_int(out32, out64, c.nan ? NAN : c.value), "to_int")) continue;
    cudaMemcpy(&got32, out32, sizeof got32, cudaMemcpyDeviceToHost);
    cudaMemcpy(&got64, out64, sizeof got64, cudaMemcpyDeviceToHost);
    expect("device float", index, c.to == IntType::I32 ? int64_t{got32} : got64, c.expected);
  }
  i = 0;
  float* outf = reinterpret_cast<float*>(out64);  // 4 floats fit in its 64 bytes
  for (const tyl::test::MinMaxCase& c : tyl::test::kMinMaxCases) {
    const size_t index = i++;
    uint32_t got[4];
    if (!ok(minmax(outf, bitsToFloat(c.a), bitsToFloat(c.b)), "minmax")) continue;
    cudaMemcpy(got, outf, sizeof got, cudaMemcpyDeviceToHost);
    expect("device min", index, got[0], c.min);
    expect("device max", index, got[1], c.max);
    expect("device relu", index, got[2], c.reluA);
    expect("device relu", index, got[3], c.reluB);
  }
  cudaFree(out32);
  cudaFree(out64);
}

}  // namespace

int main(int argc, char** argv) {
  const bool onDevice = argc > 1 && std::strcmp(argv[1], "device") == 0;
  if (!onDevice) {
    host();
  } else {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
      std::printf("skipped: no GPU\n");
      return 77;
    }
    device();
  }
  std::printf("%s: %s\n", onDevice ? "device" : "host", failures == 0 ? "every case as the table says" : "WRONG");
  return failures == 0 ? 0 : 1;
}
