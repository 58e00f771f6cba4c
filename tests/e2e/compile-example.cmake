# Compiles one example .tyl with tyloc, then its .cu with nvcc (-c) for one architecture.
#   cmake -DTYLOC=... -DNVCC=... -DTYL=... -DARCH=sm_80|sm_90|sm_90a -DRUNTIME=<runtime dir>
#         -DWORK=<scratch dir> -P compile-example.cmake
foreach(var TYLOC NVCC TYL ARCH RUNTIME WORK)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "compile-example.cmake: -D${var}=... is missing")
  endif()
endforeach()

file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
cmake_path(GET TYL STEM LAST_ONLY stem)
set(cu ${WORK}/${stem}.cu)

execute_process(
  COMMAND ${TYLOC} ${TYL} -o ${cu} --header ${WORK}/${stem}.cuh --arch ${ARCH}
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tyloc ${TYL} --arch ${ARCH} failed (exit code ${rc})")
endif()

# Hopper-only instructions need the sm_90a target, which only the -gencode form gives.
string(REGEX REPLACE "^sm_" "" number ${ARCH})
execute_process(
  COMMAND ${NVCC} -std=c++17 -I${RUNTIME} -gencode=arch=compute_${number},code=sm_${number}
          -c ${cu} -o ${WORK}/${stem}.o
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nvcc -gencode=arch=compute_${number},code=sm_${number} -c ${cu} failed (exit code ${rc})")
endif()
message(STATUS "${TYL}: tyloc --arch ${ARCH} and nvcc sm_${number} succeeded")
