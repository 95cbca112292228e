# cholsim_add_module(NAME DEPENDS <targets...> PRIVATE_DEPENDS <targets...>)
#
# One folder = one module = one library target `cholsim_<name>` with alias `cholsim::<name>`.
# Sources are the folder's .cpp files; headers are installed under include/cholsim/<name>/ and
# included as "<name>/<file>.hpp" both inside the tree and by installed consumers.
function(cholsim_add_module name)
  cmake_parse_arguments(ARG "" "" "DEPENDS;PRIVATE_DEPENDS" ${ARGN})
  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  file(GLOB headers CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.hpp)
  add_library(cholsim_${name} ${sources})
  add_library(cholsim::${name} ALIAS cholsim_${name})
  set_target_properties(cholsim_${name} PROPERTIES EXPORT_NAME ${name} OUTPUT_NAME cholsim_${name})
  target_include_directories(cholsim_${name} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
    $<INSTALL_INTERFACE:include/cholsim>)
  target_link_libraries(cholsim_${name} PUBLIC ${ARG_DEPENDS}
    PRIVATE ${ARG_PRIVATE_DEPENDS} $<BUILD_INTERFACE:cholsim_warnings> $<BUILD_INTERFACE:cholsim_sanitizers>)
  target_compile_features(cholsim_${name} PUBLIC cxx_std_20)
  if(CHOLSIM_SANITIZE)
    # A sanitized static library calls into the sanitizer runtimes, so whoever links it —
    # the installed package's consumers included — must link those runtimes too.
    target_link_options(cholsim_${name} INTERFACE -fsanitize=address,undefined)
  endif()
  install(TARGETS cholsim_${name} EXPORT cholsimTargets
    ARCHIVE DESTINATION lib LIBRARY DESTINATION lib RUNTIME DESTINATION bin)
  install(FILES ${headers} DESTINATION include/cholsim/${name})
endfunction()
