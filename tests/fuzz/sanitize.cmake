# Initial cache for the sanitizer and fuzzer build (tests/fuzz/README.md):
#
#   cmake -S . -B build-asan -G Ninja -C tests/fuzz/sanitize.cmake
#
# clang, AddressSanitizer + UndefinedBehaviorSanitizer that stop at the first report
# (-fno-sanitize-recover), libFuzzer's coverage instrumentation in every library
# (fuzzer-no-link: the unit tests link no fuzzer runtime), and the fuzz_compile target.
# No CUDA parts: they are built by nvcc and exercise no compiler code.
set(CMAKE_C_COMPILER clang CACHE STRING "")
set(CMAKE_CXX_COMPILER clang++ CACHE STRING "")
# -O1 with line tables: fast enough to fuzz, quicker to build, readable stack traces.
set(CMAKE_BUILD_TYPE Sanitize CACHE STRING "")
set(CMAKE_CXX_FLAGS_SANITIZE "-O1 -gline-tables-only" CACHE STRING "")
set(CMAKE_C_FLAGS_SANITIZE "-O1 -gline-tables-only" CACHE STRING "")
set(TYLO_BUILD_FUZZER ON CACHE BOOL "")
set(TYLO_FUZZ_REPLAY_TIMEOUT 60 CACHE STRING "")
set(TYLO_BUILD_EXAMPLES OFF CACHE BOOL "")
set(TYLO_BUILD_BENCH OFF CACHE BOOL "")
set(TYLO_ENABLE_CUDA OFF CACHE BOOL "")
# The generated CUDA run as host C++ (tests/hostrun) exercises no compiler code either, and its
# guard pages already catch what the sanitizers would there.
set(TYLO_BUILD_HOST_RUN_TESTS OFF CACHE BOOL "")
# The sanitizers replace malloc themselves.
set(TYLO_USE_MIMALLOC OFF CACHE BOOL "")

# ANTLR 4.9's headers do not compile with clang in C++20: InterpreterData's user-provided
# constructor default-initializes a Vocabulary whose defaulted constructor clang deletes
# (a const std::vector member). GCC accepts it. A copy of the headers with that one
# constructor defaulted (never called by us, and the struct layout is unchanged) comes
# first on the include path; the library itself is the system's.
set(_antlr_system /usr/include/antlr4-runtime)
set(_antlr_compat ${CMAKE_BINARY_DIR}/clang-compat/antlr4-runtime)
if(EXISTS ${_antlr_system}/misc/InterpreterDataReader.h)
  file(COPY ${_antlr_system}/ DESTINATION ${_antlr_compat})
  file(READ ${_antlr_system}/misc/InterpreterDataReader.h _reader)
  string(REPLACE "InterpreterData() {};" "InterpreterData() = default;" _reader "${_reader}")
  file(WRITE ${_antlr_compat}/misc/InterpreterDataReader.h "${_reader}")
  set(_compat_flag "-I${_antlr_compat}")
endif()

set(CMAKE_CXX_FLAGS
    "${_compat_flag} -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
    CACHE STRING "")
set(CMAKE_C_FLAGS "-fsanitize=address,undefined -fno-sanitize-recover=all" CACHE STRING "")
