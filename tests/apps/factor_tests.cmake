# Tests of `cholsim factor` (and of the program's top-level --help).
set(cholsim_app_test_group factor)

# Help works for the program and for the subcommand.
cholsim_app_test(help ARGS "--help" STDOUT_REGEX "factor")
cholsim_app_test(subcommand_help ARGS "factor|--help" STDOUT_REGEX "--builtin.*--ordering.*--json")
cholsim_app_test(no_subcommand ARGS "--threads|2" EXPECT_EXIT 2)

# A small builtin gives one JSON object with every statistic, and an accurate solve.
set(factor_json_keys
  "source|n|nnz_A_lower|nnz_A|nnz_L|nnz_L_exact|flops|supernodes|fundamental_supernodes"
  "|column_histogram|largest_front|largest_supernode_columns|tree_levels|factor_bytes"
  "|ordering_s|symbolic_s|analyze_s|factor_s|solve_s|gflops|peak_update_bytes|threads"
  "|residual|max_error")
string(CONCAT factor_json_keys ${factor_json_keys})
cholsim_app_test(json_elasticity ARGS "factor|--builtin|elasticity:6,6,6|--json"
  JSON_KEYS "${factor_json_keys}" MAX_RESIDUAL 1e-10 STDERR_REGEX "factorizing 3/3")
cholsim_app_test(json_laplacian_natural
  ARGS "factor|--builtin|laplacian:8,7,6|--ordering|natural|--repeat|1|--refine|--threads|2|--json"
  JSON_KEYS "${factor_json_keys}|refinement_steps" MAX_RESIDUAL 1e-10)
# auto (the default) reports the method it kept and AMD's predicted flops; amd solves too.
cholsim_app_test(json_auto_ordering ARGS "factor|--builtin|elasticity:5,4,3|--repeat|1|--json"
  JSON_KEYS "ordering_used|amd_flops_predicted" MAX_RESIDUAL 1e-10 STDOUT_REGEX "\"ordering\": \"auto\"")
cholsim_app_test(json_amd_ordering ARGS "factor|--builtin|laplacian:9,8,7|--ordering|amd|--repeat|1|--json"
  JSON_KEYS "ordering_used" MAX_RESIDUAL 1e-10 STDOUT_REGEX "\"ordering_used\": \"amd\"")
cholsim_app_test(json_nd_camd_ordering ARGS "factor|--builtin|elasticity:6,5,4|--ordering|nd-camd|--repeat|1|--json"
  JSON_KEYS "ordering_used" MAX_RESIDUAL 1e-10 STDOUT_REGEX "\"ordering_used\": \"nd-camd\"")
# A left-looking top from 64 KiB update blocks (factor/numeric/left_looking_top.hpp) solves as well; off has none.
cholsim_app_test(json_left_looking_top ARGS "factor|--builtin|elasticity:8,8,8|--left-looking-top|64k|--repeat|1|--threads|2|--json"
  MAX_RESIDUAL 1e-10 STDOUT_REGEX "\"left_looking_supernodes\": [1-9]")
cholsim_app_test(json_left_looking_top_off ARGS "factor|--builtin|elasticity:8,8,8|--left-looking-top|off|--repeat|1|--json"
  MAX_RESIDUAL 1e-10 STDOUT_REGEX "\"left_looking_supernodes\": 0,")
# The human report: sections of aligned "key: value" lines.
cholsim_app_test(text_report ARGS "factor|--builtin|elasticity:3,3,3|--repeat|1"
  STDOUT_REGEX "matrix\n  source: +elasticity:3,3,3\n.*\n  residual \\|b-Ax\\|/\\|b\\|: +[0-9.e+-]+\n")

# A Matrix Market file factors and solves.
cholsim_app_test(spd_file ARGS "factor|${cholsim_app_data}/spd_small.mtx|--json"
  JSON_KEYS "n|nnz_L|residual" MAX_RESIDUAL 1e-12 STDOUT_REGEX "\"n\": 6,")

# Issue 23 D4: the reported residual of a matrix scaled by 1e300 or 1e-300 is a number (the
# norms are scaled), not -nan or 0 from an overflowing or underflowing sum of squares.
foreach(scale huge tiny)
  cholsim_app_test(scaled_${scale} ARGS "factor|${cholsim_app_data}/spd_small_scaled_${scale}.mtx|--json"
    JSON_KEYS "n|residual" MAX_RESIDUAL 1e-12 STDOUT_REGEX "\"residual\": [1-9][0-9.]*e-1[0-9]")
endforeach()

# Failure paths: bad input exits 2 naming file:line, not positive definite exits 3 naming the
# column, and in every failure stdout stays empty.
cholsim_app_test(malformed_file ARGS "factor|${cholsim_app_data}/malformed.mtx|--json"
  EXPECT_EXIT 2 STDERR_REGEX "malformed\\.mtx:4:" STDOUT_EMPTY)
cholsim_app_test(missing_file ARGS "factor|${cholsim_app_data}/does_not_exist.mtx"
  EXPECT_EXIT 2 STDERR_REGEX "does_not_exist\\.mtx" STDOUT_EMPTY)
cholsim_app_test(indefinite_file ARGS "factor|${cholsim_app_data}/indefinite.mtx"
  EXPECT_EXIT 3 STDERR_REGEX "failing column: 1 \\(0-based" STDOUT_EMPTY)
cholsim_app_test(indefinite_file_natural ARGS "factor|${cholsim_app_data}/indefinite.mtx|--ordering|natural"
  EXPECT_EXIT 3 STDERR_REGEX "failing column: 1 \\(0-based" STDOUT_EMPTY)
cholsim_app_test(builtin_bogus ARGS "factor|--builtin|bogus"
  EXPECT_EXIT 2 STDERR_REGEX "expected elasticity:NX,NY,NZ or laplacian:NX,NY,NZ" STDOUT_EMPTY)
cholsim_app_test(builtin_bad_size ARGS "factor|--builtin|elasticity:4,0,4"
  EXPECT_EXIT 2 STDERR_REGEX "expected elasticity:NX,NY,NZ" STDOUT_EMPTY)
cholsim_app_test(dofs_not_dividing ARGS "factor|--builtin|laplacian:2,2,2|--dofs-per-node|3"
  EXPECT_EXIT 2 STDERR_REGEX "does not divide" STDOUT_EMPTY)
cholsim_app_test(bad_ordering ARGS "factor|--builtin|laplacian:2,2,2|--ordering|colamd"
  EXPECT_EXIT 2 STDOUT_EMPTY)

# Partial factorization with a Schur complement (issue 5): the report keys in JSON and text,
# an accurate three-phase solve (schur_residual below 1e-10), a Schur set from a file, the GPU
# fallback message, and bad Schur sets rejected as bad input naming what is wrong.
set(schur_json_keys
  "schur_size|partial_factor_s|full_factor_s|fill_increase|nnz_L_constrained|nnz_L_unconstrained"
  "|inner_iteration_s|phases_s|schur_residual|schur_device")
string(CONCAT schur_json_keys ${schur_json_keys})
set(schur_residual_regex "\"schur_residual\": [0-9.]+e-(1[0-9]|[2-9][0-9])")
cholsim_app_test(schur_fraction_json
  ARGS "factor|--builtin|elasticity:5,5,5|--schur-fraction|0.05|--repeat|2|--json"
  JSON_KEYS "${factor_json_keys}|${schur_json_keys}" MAX_RESIDUAL 1e-10
  STDOUT_REGEX "\"schur_size\": 33,.*${schur_residual_regex}")
cholsim_app_test(schur_fraction_text
  ARGS "factor|--builtin|laplacian:8,8,8|--schur-fraction|0.02|--repeat|1"
  STDOUT_REGEX "Schur complement.*\n  Schur size: +10\n.*fill increase: +-?[0-9.]+ %\n.*inner iteration.*residual \\|b-\\(A\\+dS\\)x\\|/\\|b\\|: +[0-9.]+e-1[0-9]\n")
cholsim_app_test(schur_set_file
  ARGS "factor|${cholsim_app_data}/spd_small.mtx|--schur-set|${cholsim_app_data}/schur_set.txt|--json"
  JSON_KEYS "${schur_json_keys}" STDOUT_REGEX "\"schur_size\": 2,.*${schur_residual_regex}")
cholsim_app_test(schur_gpu_fallback
  ARGS "factor|--builtin|laplacian:6,6,6|--schur-fraction|0.05|--schur-device|gpu|--repeat|1|--json"
  JSON_KEYS "schur_size|schur_device" STDOUT_REGEX "\"schur_device\": \"cpu\"" STDERR_REGEX "using the CPU")
# --device auto stays on the CPU below gpu_min_total_flops, GPU or not (issue 22).
cholsim_app_test(factor_device_auto_small_is_cpu
  ARGS "factor|--builtin|laplacian:6,6,6|--device|auto|--repeat|1|--json"
  JSON_KEYS "device|residual" STDOUT_REGEX "\"device\": \"cpu\"")
cholsim_app_test(factor_device_unknown
  ARGS "factor|--builtin|laplacian:6,6,6|--device|tpu"
  EXPECT_EXIT 2 STDERR_REGEX "tpu" STDOUT_EMPTY)
cholsim_app_test(schur_set_duplicate
  ARGS "factor|${cholsim_app_data}/spd_small.mtx|--schur-set|${cholsim_app_data}/schur_set_duplicate.txt"
  EXPECT_EXIT 2 STDERR_REGEX "index 1 appears twice" STDOUT_EMPTY)
cholsim_app_test(schur_set_out_of_range
  ARGS "factor|${cholsim_app_data}/spd_small.mtx|--schur-set|${cholsim_app_data}/schur_set_out_of_range.txt"
  EXPECT_EXIT 2 STDERR_REGEX "entry 1 is 6, outside" STDOUT_EMPTY)
cholsim_app_test(schur_set_malformed
  ARGS "factor|${cholsim_app_data}/spd_small.mtx|--schur-set|${cholsim_app_data}/schur_set_malformed.txt"
  EXPECT_EXIT 2 STDERR_REGEX "schur_set_malformed\\.txt:2: 'x' is not a 0-based index" STDOUT_EMPTY)
cholsim_app_test(schur_options_exclusive
  ARGS "factor|--builtin|laplacian:4,4,4|--schur-fraction|0.1|--schur-set|${cholsim_app_data}/schur_set.txt"
  EXPECT_EXIT 2 STDOUT_EMPTY)

# Incremental refactorization (issue 4): element blocks of an elasticity box or columns of a
# plain matrix change; the refactorized factor must equal a fresh one (the command fails
# otherwise) and the report carries the refactorization keys.
set(refactor_json_keys "refactor_s|refactor_ratio|recomputed_flop_fraction|retained_bytes|factor_bytes|residual")
cholsim_app_test(refactor_ball_elasticity
  ARGS "factor|--builtin|elasticity:6,6,6|--refactor-fraction|0.05|--threads|2|--json"
  JSON_KEYS "${refactor_json_keys}" STDOUT_REGEX "\"refactor_unit\": \"elements\"")
cholsim_app_test(refactor_scattered_columns
  ARGS "factor|${cholsim_app_data}/spd_small.mtx|--refactor-fraction|0.5|--refactor-shape|scattered|--json"
  JSON_KEYS "${refactor_json_keys}" STDOUT_REGEX "\"refactor_unit\": \"columns\"")
cholsim_app_test(refactor_text_report
  ARGS "factor|--builtin|laplacian:6,5,4|--refactor-fraction|0.1|--repeat|1"
  STDOUT_REGEX "incremental refactorization.*refactor / full: +[0-9.]+\n.*max \\|L - L_fresh\\| / max \\|L_fresh\\|: +[0-9.e+-]+")
cholsim_app_test(refactor_bad_fraction ARGS "factor|--builtin|laplacian:2,2,2|--refactor-fraction|1.5"
  EXPECT_EXIT 2 STDOUT_EMPTY)
cholsim_app_test(refactor_bad_shape ARGS "factor|--builtin|laplacian:2,2,2|--refactor-fraction|0.5|--refactor-shape|cube"
  EXPECT_EXIT 2 STDOUT_EMPTY)

# The factor's time derivative (issue 6): L and L̇ together with the built-in or a file Ȧ; the
# identity residual must be at rounding level (regex: an exponent of -13 or below) and the
# central difference close to the analytic L̇; a Ȧ with another pattern is bad input.
set(derivative_json_keys
  "derivative_factor_s|factor_s|derivative_ratio|identity_residual|forward_difference_error"
  "|central_difference_error|forward_difference_epsilon|central_difference_epsilon"
  "|derivative_flops|derivative_bytes")
string(CONCAT derivative_json_keys ${derivative_json_keys})
set(tiny_identity_regex "\"identity_residual\": [0-9.]+e-(1[3-9]|[2-9][0-9])")
cholsim_app_test(derivative_builtin_json
  ARGS "factor|--builtin|elasticity:5,5,5|--derivative|--repeat|2|--threads|2|--json"
  JSON_KEYS "${factor_json_keys}|${derivative_json_keys}" MAX_RESIDUAL 1e-10
  STDOUT_REGEX "${tiny_identity_regex}.*\"central_difference_error\": [0-9.]+e-(0[7-9]|1[0-9])"
  STDERR_REGEX "factorizing with derivative 2/2")
cholsim_app_test(derivative_file_json
  ARGS "factor|${cholsim_app_data}/spd_small.mtx|--derivative-file|${cholsim_app_data}/spd_small_derivative.mtx|--json"
  JSON_KEYS "${derivative_json_keys}" STDOUT_REGEX "${tiny_identity_regex}")
cholsim_app_test(derivative_text_report
  ARGS "factor|--builtin|laplacian:6,5,4|--derivative|--repeat|1"
  STDOUT_REGEX "factor derivative.*\n  ratio to L alone: +[0-9.]+\n.*identity \\|Ldot L\\^T \\+ L Ldot\\^T - Adot\\|/\\|Adot\\|: +[0-9.]+e-1[3-9]\n")
cholsim_app_test(derivative_file_other_pattern
  ARGS "factor|${cholsim_app_data}/spd_small.mtx|--derivative-file|${cholsim_app_data}/spd_small_derivative_other_pattern.mtx"
  EXPECT_EXIT 2 STDERR_REGEX "derivative: matrix pattern differs" STDOUT_EMPTY)
cholsim_app_test(derivative_file_missing
  ARGS "factor|${cholsim_app_data}/spd_small.mtx|--derivative-file|${cholsim_app_data}/does_not_exist.mtx"
  EXPECT_EXIT 2 STDERR_REGEX "does_not_exist\\.mtx" STDOUT_EMPTY)
