# Tests of `cholsim factor --plot DIR` (issue 23 item 5): the SVG writer, and folders written
# by the program checked for completeness, well-formedness and the numbers they show.
set(cholsim_app_test_group plots)

# The strict XML well-formedness check shared by the writer's unit test and the folder checker.
add_library(cholsim_xml_well_formedness STATIC ${CMAKE_CURRENT_SOURCE_DIR}/plots/xml_well_formedness.cpp)
target_include_directories(cholsim_xml_well_formedness PUBLIC ${PROJECT_SOURCE_DIR})
target_link_libraries(cholsim_xml_well_formedness PRIVATE cholsim_warnings cholsim_sanitizers cholsim_thin_code)

# The writer is compiled into the cholsim program, not a library; its test compiles it again.
add_executable(cholsim_svg_document_tests
  ${CMAKE_CURRENT_SOURCE_DIR}/plots/svg_document_test.cpp ${PROJECT_SOURCE_DIR}/apps/plots/svg_document.cpp
  ${PROJECT_SOURCE_DIR}/apps/xml_text.cpp)
target_include_directories(cholsim_svg_document_tests PRIVATE ${PROJECT_SOURCE_DIR}/apps)
target_link_libraries(cholsim_svg_document_tests PRIVATE cholsim_xml_well_formedness
  GTest::gtest GTest::gtest_main cholsim_warnings cholsim_sanitizers cholsim_thin_code)
gtest_discover_tests(cholsim_svg_document_tests DISCOVERY_TIMEOUT 60 TEST_PREFIX "apps.plots.")

# check_plot_files DIR REPORT.json (see its header).
add_executable(cholsim_check_plot_files ${CMAKE_CURRENT_SOURCE_DIR}/plots/check_plot_files.cpp)
target_link_libraries(cholsim_check_plot_files PRIVATE cholsim_xml_well_formedness nlohmann_json::nlohmann_json
  cholsim_warnings cholsim_sanitizers cholsim_thin_code)

# cholsim_plot_test(NAME ARGS <a|b|c> [CORRUPT file]): cholsim ARGS --plot <build>/plots_NAME --json,
# then the checker on that folder.
function(cholsim_plot_test name)
  cmake_parse_arguments(ARG "" "ARGS;CORRUPT" "" ${ARGN})
  set(definitions -DCHOLSIM=$<TARGET_FILE:cholsim> -DCHECKER=$<TARGET_FILE:cholsim_check_plot_files>
    "-DARGS=${ARG_ARGS}" -DDIR=${CMAKE_CURRENT_BINARY_DIR}/plots_${name})
  if(DEFINED ARG_CORRUPT)
    list(APPEND definitions -DCORRUPT=${ARG_CORRUPT})
  endif()
  add_test(NAME apps.plots.${name}
    COMMAND ${CMAKE_COMMAND} ${definitions} -P ${CMAKE_CURRENT_SOURCE_DIR}/plots/run_plot_check.cmake)
  set_tests_properties(apps.plots.${name} PROPERTIES ENVIRONMENT "OPENBLAS_NUM_THREADS=1" TIMEOUT 120)
endfunction()

# One thread: the sequential update-stack peak must equal the measured one; every bin is one entry.
cholsim_plot_test(elasticity_one_thread ARGS "factor|--builtin|elasticity:3,3,3|--threads|1|--repeat|1")
# n = 15,625 on 280 bins, and a tree big enough to be collapsed below its top levels.
cholsim_plot_test(laplacian_binned ARGS "factor|--builtin|laplacian:25,25,25|--threads|2|--repeat|1")
# The refactorization's tree marks as many supernodes as the report says were recomputed
# (16 of 120 here: a mix, so marking all or none would fail).
cholsim_plot_test(refactor ARGS "factor|--builtin|elasticity:8,8,8|--refactor-fraction|0.02|--repeat|1")
# A picture cut short is rejected, naming the file.
cholsim_plot_test(checker_rejects_cut_file ARGS "factor|--builtin|laplacian:4,4,4|--repeat|1" CORRUPT spy_L.svg)

# A folder that cannot be created (a file stands in the way) is bad input, before any work.
set(plots_data ${CMAKE_CURRENT_BINARY_DIR}/plots_data)
file(WRITE ${plots_data}/not_a_folder "a file where --plot expects a folder\n")
cholsim_app_test(unwritable_folder ARGS "factor|--builtin|laplacian:3,3,3|--plot|${plots_data}/not_a_folder/pictures"
  EXPECT_EXIT 2 STDERR_REGEX "not_a_folder" STDOUT_EMPTY)
