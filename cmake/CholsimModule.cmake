# cholsim_add_module(NAME DEPENDS <targets...> PRIVATE_DEPENDS <targets...>)
#
# One folder = one module = one library target `cholsim_<name>` with alias `cholsim::<name>`.
# Inside a module, one subfolder per idea (factor/schur/, fem/opsplit/, …). Sources are the
# .cpp files of the folder and its subfolders; headers are installed under
# include/cholsim/<name>/ keeping their subfolder, and included as "<name>/<idea>/<file>.hpp"
# both inside the tree and by installed consumers.
function(cholsim_add_module name)
  cmake_parse_arguments(ARG "" "" "DEPENDS;PRIVATE_DEPENDS" ${ARGN})
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  file(GLOB_RECURSE headers CONFIGURE_DEPENDS RELATIVE ${CMAKE_CURRENT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR}/*.hpp)
  add_library(cholsim_${name} ${sources})
  add_library(cholsim::${name} ALIAS cholsim_${name})
  set_target_properties(cholsim_${name} PROPERTIES EXPORT_NAME ${name} OUTPUT_NAME cholsim_${name})
  target_include_directories(cholsim_${name} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
    $<INSTALL_INTERFACE:include/cholsim>)
  target_link_libraries(cholsim_${name} PUBLIC ${ARG_DEPENDS}
    PRIVATE ${ARG_PRIVATE_DEPENDS} $<BUILD_INTERFACE:cholsim_warnings> $<BUILD_INTERFACE:cholsim_sanitizers>)
  target_compile_features(cholsim_${name} PUBLIC cxx_std_20)
  # The standard headers most files of a module include, parsed once per module instead of once
  # per file (about a second each, ~200 library files, in both of CI's builds).
  target_precompile_headers(cholsim_${name} PRIVATE <algorithm> <cmath> <cstdint> <functional> <memory> <span>
    <stdexcept> <string> <vector>)
  if(CHOLSIM_SANITIZE)
    # A sanitized static library calls into the sanitizer runtimes, so whoever links it —
    # the installed package's consumers included — must link those runtimes too.
    target_link_options(cholsim_${name} INTERFACE -fsanitize=address,undefined)
    # The libraries at -O1 (AddressSanitizer's advice for usable speed; Debug keeps the
    # assertions): the tests' time is spent in them — the sanitized suite took 608 s at -O0,
    # 177 s with everything at -O1. The tests and apps stay at -O0, which compiles faster
    # (all at -O1 the sanitizer build alone took 13.5 of CI's 30 minutes).
    target_compile_options(cholsim_${name} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-O1>)
  endif()
  install(TARGETS cholsim_${name} EXPORT cholsimTargets
    ARCHIVE DESTINATION lib LIBRARY DESTINATION lib RUNTIME DESTINATION bin)
  foreach(header ${headers})
    get_filename_component(subfolder ${header} DIRECTORY)
    install(FILES ${header} DESTINATION include/cholsim/${name}/${subfolder})
  endforeach()
endfunction()
