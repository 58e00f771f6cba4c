// The examples' checks (examples/emulate/ExampleChecks.h) run a kernel through a Runner; this
// one calls the generated launcher, compiled as host C++, on guarded copies of the buffers
// (GuardedBuffers.h), by the host-thread harness (HostThreads.h). Include it where the
// generated headers are included (it needs the harness's tylo/runtime.cuh).
#pragma once

#include <tylo/runtime.cuh>

#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "examples/emulate/ExampleChecks.h"
#include "tests/hostrun/GuardedBuffers.h"

namespace tylo_host {

namespace detail {

template <class T>
T argument(const tyl::emu::Arg& a, const GuardedBuffers& memory) {
  if constexpr (std::is_pointer_v<T>) {
    if (a.kind != tyl::emu::Arg::Kind::Pointer) throw std::invalid_argument("a pointer parameter got a scalar");
    return reinterpret_cast<T>(memory.data(a.buffer) + a.offsetBytes);
  } else if constexpr (std::is_same_v<T, bool>) {
    return a.i != 0;
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(a.i);
  } else {
    return static_cast<T>(a.f);
  }
}

template <class... P, size_t... I>
cudaError_t call(cudaError_t (*launcher)(P...), const std::vector<tyl::emu::Arg>& args,
                 const GuardedBuffers& memory, std::index_sequence<I...>) {
  using Params = std::tuple<P...>;
  return launcher(argument<std::tuple_element_t<I, Params>>(args.at(I), memory)..., cudaStream_t{});
}

// Runs a generated launcher on guarded copies of the buffers.
template <class... P>
tyl::examples::Runner runner(cudaError_t (*launcher)(P...)) {
  return [launcher](const tyl::tir::Kernel& k, const std::vector<tyl::emu::Arg>& args, std::vector<tyl::emu::Buffer>& buffers,
                    std::string& problems) {
    constexpr size_t n = sizeof...(P) - 1;  // the last parameter is the stream
    if (args.size() != n) throw std::invalid_argument(k.name + ": the launcher takes another number of arguments");
    reportGuardPageFaults();
    GuardedBuffers memory(buffers);
    const int before = launches();
    const cudaError_t e = call(launcher, args, memory, std::make_index_sequence<n>{});
    std::string found = take_problems() + memory.copyBack(buffers);
    if (e != cudaSuccess) {
      const char* why = tylo::last_launch_error();
      found += k.name + ": the launcher returned error " + std::to_string(e) + (why ? std::string(": ") + why : "") + "\n";
    }
    // Every run here has something to compute: a launcher that returned without launching
    // would leave the outputs NaN, and say nothing.
    if (launches() == before) found += k.name + ": nothing was launched\n";
    problems += found;
    return found.empty();
  };
}

}  // namespace detail

using detail::runner;

}  // namespace tylo_host
