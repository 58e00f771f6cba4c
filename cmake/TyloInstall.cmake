# `cmake --install`: tyloc (installed by tools/tyloc), the runtime headers, and a package
# configuration so that a consumer writes find_package(Tylo REQUIRED) and add_tylo_kernel(...).
include(CMakePackageConfigHelpers)

set(TYLO_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/Tylo)
# Where tools/tyloc/CMakeLists.txt installs tyloc; TyloConfig.cmake imports it from there.
set(TYLO_INSTALL_BINDIR bin)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/runtime/tylo DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.cuh")
install(TARGETS tylo_runtime EXPORT TyloTargets)
install(EXPORT TyloTargets NAMESPACE Tylo:: DESTINATION ${TYLO_INSTALL_CMAKEDIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/TyloConfig.cmake.in
  ${PROJECT_BINARY_DIR}/TyloConfig.cmake
  INSTALL_DESTINATION ${TYLO_INSTALL_CMAKEDIR}
  PATH_VARS TYLO_INSTALL_BINDIR)
# 0.x: a new minor version may change the language.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/TyloConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/TyloConfig.cmake
  ${PROJECT_BINARY_DIR}/TyloConfigVersion.cmake
  ${PROJECT_SOURCE_DIR}/cmake/TyloKernel.cmake
  DESTINATION ${TYLO_INSTALL_CMAKEDIR})
