# add_tylo_kernel(<target> <file.tyl>... [ARCH sm_80|sm_90|sm_90a] [INSTANTIATE <kernel:type>...])
#
# Compiles each .tyl file with tyloc at build time into
#   ${CMAKE_CURRENT_BINARY_DIR}/tylo/<stem>.cu   (the kernels and their host launchers)
#   ${CMAKE_CURRENT_BINARY_DIR}/tylo/<stem>.cuh  (the launchers' declarations)
# adds the .cu to <target>, and adds the tylo/ folder and the runtime headers to its include
# directories, so its sources write `#include "<stem>.cuh"`. tyloc writes a depfile, so the
# files are regenerated when a .tyl file (or a file it includes) or tyloc itself changes.
#
#   ARCH         the architecture tyloc generates code for (default sm_80). Code for sm_80 also
#                runs on sm_90; sm_90a code needs CUDA_ARCHITECTURES 90a-real (or 90a-virtual).
#   INSTANTIATE  generate only these instantiations of generic kernels (default: all). With
#                several files, each request goes to the files that declare its kernel
#                (`kernel <name><`), read at configure time; a kernel that only an imported file
#                declares needs a call for its file alone.
#
# The caller must have enabled CUDA (project(... LANGUAGES CXX CUDA) or enable_language(CUDA)).
# tyloc is the target Tylo::tyloc: inside the tylo project an alias of the tyloc it builds,
# in a consumer the executable imported by find_package(Tylo).
include_guard(GLOBAL)

# Needs CMake 3.20 (cmake_path, DEPFILE for every generator). Functions keep the policies in
# effect where they are defined, so a consumer that asks for an older CMake still gets depfile
# paths handled the current way (CMP0116).
cmake_policy(VERSION 3.20...3.25)

function(add_tylo_kernel target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "ARCH" "INSTANTIATE")
  set(sources ${arg_UNPARSED_ARGUMENTS})
  set(where "add_tylo_kernel(${target})")

  if(NOT TARGET ${target})
    message(FATAL_ERROR "${where}: there is no target named '${target}'; create it first "
                        "(add_executable or add_library), then add its kernels")
  endif()
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "INTERFACE_LIBRARY" OR type STREQUAL "UTILITY")
    message(FATAL_ERROR "${where}: '${target}' is an ${type} target and compiles no sources")
  endif()

  get_property(languages GLOBAL PROPERTY ENABLED_LANGUAGES)
  if(NOT "CUDA" IN_LIST languages)
    message(FATAL_ERROR "${where}: the CUDA language is not enabled. The generated kernels are CUDA "
                        "C++: write project(<name> LANGUAGES CXX CUDA) or call enable_language(CUDA) "
                        "before add_tylo_kernel.")
  endif()

  if(NOT TARGET Tylo::tyloc)
    message(FATAL_ERROR "${where}: there is no tyloc: call find_package(Tylo REQUIRED) first")
  endif()
  if(NOT TARGET Tylo::runtime)
    message(FATAL_ERROR "${where}: there is no Tylo::runtime target: call find_package(Tylo REQUIRED) first")
  endif()

  if(NOT sources)
    message(FATAL_ERROR "${where}: no .tyl files given")
  endif()

  foreach(keyword IN LISTS arg_KEYWORDS_MISSING_VALUES)
    message(FATAL_ERROR "${where}: ${keyword} is given without a value")
  endforeach()
  if(NOT DEFINED arg_ARCH)
    set(arg_ARCH sm_80)
  endif()
  set(known_arches sm_80 sm_90 sm_90a)
  if(NOT arg_ARCH IN_LIST known_arches)
    message(FATAL_ERROR "${where}: ARCH must be one of sm_80, sm_90, sm_90a (got '${arg_ARCH}')")
  endif()
  if(arg_ARCH STREQUAL "sm_90a")
    get_target_property(cuda_arches ${target} CUDA_ARCHITECTURES)
    foreach(a IN LISTS cuda_arches)
      if(NOT a MATCHES "^90a")
        message(WARNING "${where}: ARCH sm_90a code runs only on sm_90a, but the target is built for "
                        "CUDA architecture '${a}' too; set its CUDA_ARCHITECTURES to 90a-real")
        break()
      endif()
    endforeach()
  endif()

  # In the tylo project Tylo::tyloc is an alias of the tyloc target; depending on the real target
  # rebuilds tyloc first and regenerates the kernels when it changes.
  get_target_property(tyloc_target Tylo::tyloc ALIASED_TARGET)
  if(tyloc_target)
    set(tyloc_command ${tyloc_target})
    set(tyloc_depends ${tyloc_target})
  else()
    set(tyloc_command Tylo::tyloc)
    set(tyloc_depends "$<TARGET_FILE:Tylo::tyloc>")
  endif()

  foreach(inst IN LISTS arg_INSTANTIATE)
    if(NOT inst MATCHES "^[A-Za-z_][A-Za-z0-9_]*:.+$")
      message(FATAL_ERROR "${where}: INSTANTIATE takes kernel:type, e.g. gemm:f16 (got '${inst}')")
    endif()
  endforeach()
  list(LENGTH sources source_count)
  set(routed)  # the INSTANTIATE requests that went to a file

  set(out_dir ${CMAKE_CURRENT_BINARY_DIR}/tylo)
  file(MAKE_DIRECTORY ${out_dir})
  foreach(src IN LISTS sources)
    cmake_path(ABSOLUTE_PATH src BASE_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR} NORMALIZE OUTPUT_VARIABLE tyl)
    if(NOT tyl MATCHES "\\.tyl$")
      message(FATAL_ERROR "${where}: '${src}' is not a .tyl file")
    endif()
    get_source_file_property(generated ${tyl} GENERATED)
    if(NOT EXISTS ${tyl} AND NOT generated)
      message(FATAL_ERROR "${where}: '${src}' does not exist (looked for ${tyl})")
    endif()
    cmake_path(GET tyl STEM LAST_ONLY stem)
    set(cu ${out_dir}/${stem}.cu)
    set(cuh ${out_dir}/${stem}.cuh)
    set(depfile ${out_dir}/${stem}.d)
    # tyloc refuses a request that names no kernel of the file it compiles. With one file it gets
    # every request; with several, those for the kernels the file declares (read now, so the
    # configuration depends on the file).
    set(text "")
    if(arg_INSTANTIATE AND source_count GREATER 1)
      if(NOT EXISTS "${tyl}")
        message(FATAL_ERROR "${where}: INSTANTIATE with several files needs to read them, and '${src}' "
                            "does not exist yet; call add_tylo_kernel for it alone")
      endif()
      set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${tyl}")
      file(READ "${tyl}" text)
    endif()
    set(instantiate_args)
    foreach(inst IN LISTS arg_INSTANTIATE)
      string(REGEX REPLACE ":.*" "" kernel "${inst}")
      if(source_count EQUAL 1 OR text MATCHES "(^|[^A-Za-z0-9_])kernel[ \t\r\n]+${kernel}[ \t\r\n]*<")
        list(APPEND instantiate_args --instantiate ${inst})
        list(APPEND routed ${inst})
      endif()
    endforeach()
    set(args ${tyl} -o ${cu} --header ${cuh} --depfile ${depfile} --arch ${arg_ARCH} ${instantiate_args})

    # One rule per output in a directory: a second call for the same .tyl with the same options
    # (another target of this directory) reuses the first rule; different options would collide.
    # Every target that compiles the output depends on one generating target, so that Makefile
    # generators do not run the rule for two targets at once.
    string(MD5 dir_hash "${out_dir}")
    string(SUBSTRING "${dir_hash}" 0 8 dir_hash)
    string(MAKE_C_IDENTIFIER "tylo_generate_${stem}_${dir_hash}" generate_target)
    get_property(previous DIRECTORY PROPERTY TYLO_KERNEL_RULE_${stem})
    if("${previous}" STREQUAL "")
      set_property(DIRECTORY PROPERTY TYLO_KERNEL_RULE_${stem} "${args}")
      add_custom_command(
        OUTPUT ${cu} ${cuh}
        COMMAND ${tyloc_command} ${args}
        DEPENDS ${tyl} ${tyloc_depends}
        DEPFILE ${depfile}
        COMMENT "tyloc ${src} -> tylo/${stem}.cu (${arg_ARCH})"
        VERBATIM)
      add_custom_target(${generate_target} DEPENDS ${cu} ${cuh})
    elseif(NOT "${previous}" STREQUAL "${args}")
      message(FATAL_ERROR "${where}: tylo/${stem}.cu is already generated in this directory from other "
                          "options or another file named ${stem}.tyl; rename the file or add the "
                          "targets in different directories")
    endif()
    add_dependencies(${target} ${generate_target})
    target_sources(${target} PRIVATE ${cu} ${cuh})
  endforeach()

  foreach(inst IN LISTS arg_INSTANTIATE)
    if(NOT inst IN_LIST routed)
      string(REGEX REPLACE ":.*" "" kernel "${inst}")
      message(FATAL_ERROR "${where}: INSTANTIATE ${inst}: none of the files declares a generic kernel "
                          "'${kernel}' (one declared in an imported file needs its own add_tylo_kernel call)")
    endif()
  endforeach()

  # A library's users call its launchers too, so they see the header folder (at build time only:
  # it lives in the build tree).
  if(type STREQUAL "EXECUTABLE")
    set(scope PRIVATE)
  else()
    set(scope PUBLIC)
  endif()
  target_include_directories(${target} ${scope} $<BUILD_INTERFACE:${out_dir}>)
  # The runtime headers are needed only by the generated .cu. Their include directories are
  # taken from Tylo::runtime rather than linking it, so either target_link_libraries signature
  # stays free for the caller.
  target_include_directories(${target} PRIVATE $<TARGET_PROPERTY:Tylo::runtime,INTERFACE_INCLUDE_DIRECTORIES>)
  # Generated code is C++17. Without CUDA_STANDARD, CMake would use the target's CXX_STANDARD
  # for its .cu files too, and C++20 is newer than CMake 3.25 knows nvcc to support.
  get_target_property(cuda_standard ${target} CUDA_STANDARD)
  if(NOT cuda_standard)
    set_target_properties(${target} PROPERTIES CUDA_STANDARD 17)
  endif()
  target_compile_features(${target} PRIVATE cuda_std_17)
endfunction()
