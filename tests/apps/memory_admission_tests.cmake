# Issue 23 memory admission: a request predicted to exceed --max-memory (default: the
# available memory) is refused before it allocates, exit 2, naming the need and the limit.
# The TIMEOUT of a few seconds is the "before allocating" bound: the builtins below would
# take minutes and far more memory than the machine has.
set(cholsim_app_test_group memory_admission)

function(cholsim_refused_test name)
  cmake_parse_arguments(ARG "" "ARGS;STDERR_REGEX" "" ${ARGN})
  cholsim_app_test(${name} ARGS "${ARG_ARGS}" EXPECT_EXIT 2 STDERR_REGEX "${ARG_STDERR_REGEX}" STDOUT_EMPTY)
  set_tests_properties(apps.${cholsim_app_test_group}.${name} PROPERTIES TIMEOUT 10)
endfunction()

set(limit_regex "but the memory limit is [0-9.]+ [MG]iB")
# A builtin matrix of 2.4·10^10 DOF: refused by its predicted size before it is built.
cholsim_refused_test(factor_builtin_too_large ARGS "factor|--builtin|elasticity:2000,2000,2000"
  STDERR_REGEX "building elasticity:2000,2000,2000 needs [0-9.]+ GiB \\(matrix\\) ${limit_regex} \\(the available memory")
# A box that builds and analyses within 40 MiB but whose factor (L 120 MiB) does not fit:
# refused after the analysis, every predicted item named.
cholsim_refused_test(factor_over_max_memory ARGS "factor|--builtin|elasticity:20,20,20|--max-memory|40M"
  STDERR_REGEX "the factorization needs [0-9.]+ MiB \\(matrix [0-9.]+ MiB, analysis [0-9.]+ MiB, L [0-9.]+ MiB, update blocks [0-9.]+ MiB.*${limit_regex} \\(--max-memory 40M\\)")
cholsim_refused_test(factor_bad_max_memory ARGS "factor|--builtin|elasticity:2,2,2|--max-memory|12Q"
  STDERR_REGEX "--max-memory: '12Q' is not a size")
# Simulations refuse a procedural mesh whose simulation cannot fit (the resolution-600 box
# reached 6.5 GB before "out of memory", exit 1).
foreach(command corot opsplit)
  cholsim_refused_test(${command}_box_resolution_600
    ARGS "${command}|--builtin|box|--resolution|600|--frames|1|--out|${CMAKE_CURRENT_BINARY_DIR}/admission_${command}"
    STDERR_REGEX "simulating the builtin box \\(up to 324000000 tets\\) needs [0-9.]+ GiB.*${limit_regex}")
endforeach()

# Within the limit the report shows the prediction next to the measured peak (that the
# update-block prediction is exact is checked in tests/factor/numeric/test_memory_estimate.cpp).
cholsim_app_test(factor_memory_report ARGS "factor|--builtin|elasticity:6,6,6|--threads|1|--repeat|1|--json"
  JSON_KEYS "predicted_memory_bytes|predicted_L_bytes|predicted_update_blocks_bytes|peak_resident_bytes|memory_limit")
# Where the update blocks would not fit, the left-looking top takes more supernodes (issue 23):
# the 20³ box needs 200 MiB multifrontal, 173 MiB with the top from 8 MiB blocks.
cholsim_app_test(factor_left_looking_under_limit ARGS "factor|--builtin|elasticity:20,20,20|--max-memory|175M|--repeat|1|--json"
  MAX_RESIDUAL 1e-10 STDERR_REGEX "supernodes with update blocks of at least [0-9,]+ \\([0-9.]+ MiB\\) and their ancestors are computed left-looking"
  STDOUT_REGEX "\"left_looking_supernodes\": [1-9]")
cholsim_refused_test(factor_bad_left_looking_top ARGS "factor|--builtin|elasticity:2,2,2|--left-looking-top|12Q"
  STDERR_REGEX "--left-looking-top: '12Q' is not a size")
