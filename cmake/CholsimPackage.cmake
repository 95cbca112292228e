# `cmake --install` writes libraries, headers and a CMake package so that consumers can
# `find_package(cholsim)` and link `cholsim::factor` and friends.
include(CMakePackageConfigHelpers)
install(EXPORT cholsimTargets NAMESPACE cholsim:: DESTINATION lib/cmake/cholsim)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/cholsimConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cholsimConfig.cmake INSTALL_DESTINATION lib/cmake/cholsim)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cholsimConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cholsimConfig.cmake ${PROJECT_BINARY_DIR}/cholsimConfigVersion.cmake
  DESTINATION lib/cmake/cholsim)
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION share/doc/cholsim)
