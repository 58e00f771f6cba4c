# CUDA is optional: without nvcc, tyloc and its CPU tests still build, and the examples, GPU
# tests and benchmarks are left out. TYLO_ENABLE_CUDA=OFF leaves them out even with nvcc (the
# sanitizer build does). Sets TYLO_HAVE_CUDA.
option(TYLO_ENABLE_CUDA "Build the CUDA parts (examples, GPU tests, benchmarks) when nvcc is found" ON)
if(TYLO_ENABLE_CUDA)
  include(CheckLanguage)
  check_language(CUDA)
endif()
if(TYLO_ENABLE_CUDA AND CMAKE_CUDA_COMPILER)
  # Real machine code only (no PTX to JIT), for Ampere and Hopper, unless the user chose.
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT DEFINED ENV{CUDAARCHS})
    set(CMAKE_CUDA_ARCHITECTURES "80-real;90-real" CACHE STRING
        "CUDA architectures the examples, GPU tests and benchmarks are built for")
  endif()
  enable_language(CUDA)
  # The project's C++20 would otherwise apply to .cu files too; generated code is C++17.
  set(CMAKE_CUDA_STANDARD 17)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  set(TYLO_HAVE_CUDA ON)
  message(STATUS "tylo: CUDA ${CMAKE_CUDA_COMPILER_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES}")
else()
  set(TYLO_HAVE_CUDA OFF)
  message(STATUS "tylo: no CUDA compiler found: the examples, GPU tests and benchmarks are not built")
endif()
