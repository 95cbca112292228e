# Tests of `cholsim opsplit` (seed 003 operator splitting).
set(cholsim_app_test_group opsplit)

cholsim_app_test(help ARGS "opsplit|--help"
  STDOUT_REGEX "--mesh.*--builtin.*--stiffness.*--poisson.*--density.*--dt.*--volume-iterations.*--frames.*--fixed.*--out.*--solve-precision.*--element-precision.*--rotation-warm-start.*--json")

# A tiny run: one JSON object with the setup, the per-phase step times and the det F range;
# progress on stderr; frames that VTK's readers open (3 steps + the initial state of a
# 4x2x2-cell box: 45 nodes, 96 tets) with velocity and volume_ratio.
set(opsplit_json_keys
  "mesh_source|nodes|tets|youngs_modulus|dt|volume_iterations|solve_precision|element_precision|rotation_warm_start|fixed_nodes|frames|free_nodes|nnz_L"
  "|analyze_s|factorize_s|rotations_s|rhs_s|solve_s|volume_s|collisions_s|step_s|rotation_fallbacks"
  "|min_volume_ratio|max_volume_error|pvd|vtu_files")
string(CONCAT opsplit_json_keys ${opsplit_json_keys})
set(opsplit_tiny "opsplit|--builtin|box|--resolution|4|--frames|3")
cholsim_app_test(tiny_json ARGS "${opsplit_tiny}|--out|${CMAKE_CURRENT_BINARY_DIR}/opsplit_tiny|--json"
  JSON_KEYS "${opsplit_json_keys}" STDOUT_REGEX "\"frames\": 3,.*\"vtu_files\": 4" STDERR_REGEX "frame 3/3")
set_tests_properties(apps.opsplit.tiny_json PROPERTIES FIXTURES_SETUP opsplit_tiny_frames)
add_test(NAME apps.opsplit.frames_read_back
  COMMAND cholsim_read_vtk_series ${CMAKE_CURRENT_BINARY_DIR}/opsplit_tiny/opsplit.pvd --frames 4
    --points 45 --cells 96 --point-array velocity:3 --cell-array volume_ratio:1)
set_tests_properties(apps.opsplit.frames_read_back PROPERTIES FIXTURES_REQUIRED opsplit_tiny_frames)

# The human report, and the options of the paper's sweeps.
cholsim_app_test(text_report
  ARGS "${opsplit_tiny}|--stiffness|1e7|--dt|0.033|--volume-iterations|5|--fixed|top:0.02|--solve-precision|double|--out|${CMAKE_CURRENT_BINARY_DIR}/opsplit_text"
  STDOUT_REGEX "mesh\n  source: +builtin box.*stored L precision: +double.*mean per-step time.*  solve \\(3 right-hand sides\\): ")

# Bad input exits 2 with a message and no report.
cholsim_app_test(bad_fixed ARGS "${opsplit_tiny}|--fixed|middle:0.1|--out|${CMAKE_CURRENT_BINARY_DIR}/opsplit_bad"
  EXPECT_EXIT 2 STDERR_REGEX "--fixed middle:0.1: expected top:F" STDOUT_EMPTY)
cholsim_app_test(bad_poisson ARGS "${opsplit_tiny}|--poisson|0.7|--out|${CMAKE_CURRENT_BINARY_DIR}/opsplit_bad"
  EXPECT_EXIT 2 STDERR_REGEX "error" STDOUT_EMPTY)
cholsim_app_test(bad_dt ARGS "${opsplit_tiny}|--dt|-1" EXPECT_EXIT 2 STDOUT_EMPTY)
cholsim_app_test(bad_solve_precision ARGS "${opsplit_tiny}|--solve-precision|half" EXPECT_EXIT 2 STDOUT_EMPTY)
cholsim_app_test(bad_element_precision ARGS "${opsplit_tiny}|--element-precision|half" EXPECT_EXIT 2 STDOUT_EMPTY)
# Single-precision element passes: the run completes and says so.
cholsim_app_test(single_element_precision
  ARGS "${opsplit_tiny}|--element-precision|single|--out|${CMAKE_CURRENT_BINARY_DIR}/opsplit_single"
  STDOUT_REGEX "element passes in: +single
.*status: +completed")
# Extrapolated APD warm starts: the run completes and says so; other values are refused.
cholsim_app_test(extrapolated_warm_start
  ARGS "${opsplit_tiny}|--rotation-warm-start|extrapolated|--out|${CMAKE_CURRENT_BINARY_DIR}/opsplit_extrapolated"
  STDOUT_REGEX "rotations warm-started at: +extrapolated
.*status: +completed")
cholsim_app_test(bad_rotation_warm_start ARGS "${opsplit_tiny}|--rotation-warm-start|next" EXPECT_EXIT 2 STDOUT_EMPTY)
cholsim_app_test(bad_device ARGS "${opsplit_tiny}|--device|tpu" EXPECT_EXIT 2 STDOUT_EMPTY)
# auto: the GPU solve where one is usable, else the CPU's; either way the run completes.
cholsim_app_test(device_auto ARGS "${opsplit_tiny}|--device|auto|--out|${CMAKE_CURRENT_BINARY_DIR}/opsplit_auto"
  STDOUT_REGEX "per-step solve on: +(cpu|gpu \\(.*\\))\n")
cholsim_app_test(missing_mesh ARGS "opsplit|--mesh|${CMAKE_CURRENT_BINARY_DIR}/no_such_mesh.node|--frames|1"
  EXPECT_EXIT 2 STDERR_REGEX "no_such_mesh" STDOUT_EMPTY)
