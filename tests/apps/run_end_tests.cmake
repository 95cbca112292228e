# How simulation runs end (issue 23, D5 and D6): health warnings and --strict, signals, a
# full disk, unwritable output and --max-output, for `cholsim corot` and `cholsim opsplit`.
set(cholsim_app_test_group run_end)
set(run_end_dir ${CMAKE_CURRENT_BINARY_DIR}/run_end)
set(run_end_box "--builtin|box|--resolution|4")

# D5: the blown-up runs of the issue, small. Each warns on stderr and lists the issue in the
# JSON (exit 0); --strict makes it exit 3 after writing the summary.
# E = 1e15 under stiffness warping: 4.9e32 m and 410 of 768 tets inverted after 20 frames.
cholsim_app_test(corot_stiff_warping
  ARGS "corot|--builtin|box|--resolution|8|--frames|20|--youngs|1e15|--method|warping|--out|${run_end_dir}/stiff|--json"
  JSON_KEYS "health_warnings|status|exit_code"
  STDERR_REGEX "warning: [0-9]+ elements inverted \\(det F <= 0\\) in frame .*warning: a node moved [0-9.e+]+ m from rest"
  STDOUT_REGEX "\"health\": \"warnings\".*\"issue\": \"inverted_elements\".*\"exit_code\": 0")
cholsim_app_test(corot_stiff_warping_strict
  ARGS "corot|--builtin|box|--resolution|8|--frames|20|--youngs|1e15|--method|warping|--strict|--out|${run_end_dir}/stiff_strict|--json"
  EXPECT_EXIT 3 STDOUT_REGEX "\"issue\": \"runaway_displacement\".*\"exit_code\": 3")
# Run on until the state is no longer finite: exit 3, and still a summary of the frames before.
cholsim_app_test(corot_stiff_warping_fails
  ARGS "corot|--builtin|box|--resolution|8|--frames|60|--youngs|1e15|--method|warping|--out|${run_end_dir}/stiff_fails|--json"
  EXPECT_EXIT 3 STDERR_REGEX "error: failed in frame [0-9]+: .*not finite"
  STDOUT_REGEX "\"vtu_files\": [0-9]+,.*\"status\": \"failed in frame [0-9]+: .*\"exit_code\": 3")
# A 10 s implicit step drops the box 981 m through the ground, then launches it km up.
cholsim_app_test(corot_huge_step
  ARGS "corot|${run_end_box}|--frames|3|--dt|10|--strict|--out|${run_end_dir}/huge_step|--json"
  EXPECT_EXIT 3
  STDERR_REGEX "warning: a node is [0-9.e+]+ m deep inside an obstacle.*warning: kinetic \\+ gravitational energy grew"
  STDOUT_REGEX "\"issue\": \"obstacle_penetration\".*\"issue\": \"energy_growth\"")
# Operator splitting with a 10 s step turns elements inside out (det F < 0).
cholsim_app_test(opsplit_huge_step
  ARGS "opsplit|${run_end_box}|--frames|3|--dt|10|--strict|--out|${run_end_dir}/opsplit_huge_step|--json"
  EXPECT_EXIT 3 STDERR_REGEX "warning: [0-9]+ elements inverted \\(det F <= 0\\)"
  STDOUT_REGEX "\"min_volume_ratio\": -.*\"issue\": \"inverted_elements\"")
# The thresholds stay silent on ordinary runs: every method, and the default opsplit scene,
# pass --strict.
foreach(method wc exact cg warping)
  cholsim_app_test(corot_${method}_healthy
    ARGS "corot|${run_end_box}|--frames|30|--method|${method}|--strict|--out|${run_end_dir}/healthy_${method}|--json"
    STDOUT_REGEX "\"status\": \"completed\",.*\"health\": \"ok\",.*\"health_warnings\": \\[\\],.*\"exit_code\": 0")
endforeach()
cholsim_app_test(opsplit_healthy
  ARGS "opsplit|${run_end_box}|--frames|30|--strict|--out|${run_end_dir}/healthy_opsplit|--json"
  STDOUT_REGEX "\"health\": \"ok\",.*\"exit_code\": 0")

# D6: stopped runs leave a valid series and no temporary files (tests/apps/stopped_run.sh).
function(run_end_stopped_test name mode base)
  add_test(NAME apps.run_end.${name}
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/stopped_run.sh ${mode} $<TARGET_FILE:cholsim>
      $<TARGET_FILE:cholsim_read_vtk_series> ${run_end_dir}/${name} ${base} ${ARGN})
  set_tests_properties(apps.run_end.${name} PROPERTIES
    ENVIRONMENT "OPENBLAS_NUM_THREADS=1" TIMEOUT 120 SKIP_RETURN_CODE 77)
endfunction()
set(run_end_long_corot corot --builtin box --resolution 4 --frames 5000 --dt 0.001)
set(run_end_long_opsplit opsplit --builtin box --resolution 4 --frames 5000 --dt 0.001)
run_end_stopped_test(corot_sigint INT corot ${run_end_long_corot})
run_end_stopped_test(corot_sigterm TERM corot ${run_end_long_corot})
run_end_stopped_test(opsplit_sigint INT opsplit ${run_end_long_opsplit})
run_end_stopped_test(corot_disk_full diskfull corot ${run_end_long_corot})
run_end_stopped_test(opsplit_disk_full diskfull opsplit ${run_end_long_opsplit})
run_end_stopped_test(corot_permission_denied denied corot corot --builtin box --resolution 2 --frames 1)

# An --out below a regular file: exit 2 naming the folder and the reason, before the setup.
file(WRITE ${run_end_dir}/a_file "not a folder\n")
cholsim_app_test(corot_out_below_a_file
  ARGS "corot|${run_end_box}|--frames|1|--out|${run_end_dir}/a_file/run"
  EXPECT_EXIT 2 STDERR_REGEX "cannot create the output folder .*a_file/run: Not a directory" STDOUT_EMPTY)
cholsim_app_test(opsplit_out_below_a_file
  ARGS "opsplit|${run_end_box}|--frames|1|--out|${run_end_dir}/a_file/run"
  EXPECT_EXIT 2 STDERR_REGEX "cannot create the output folder .*a_file/run: Not a directory" STDOUT_EMPTY)

# --max-output: the run stops before the frame that would pass the limit, with a warning, a
# valid .pvd (checked by the test after it) and exit 0; a size it cannot read exits 2.
cholsim_app_test(corot_max_output
  ARGS "corot|${run_end_box}|--frames|200|--max-output|48k|--out|${run_end_dir}/max_output|--json"
  STDERR_REGEX "warning: the next frame would take the output past --max-output \\(49,152"
  STDOUT_REGEX "\"vtu_files\": [0-9],.*\"status\": \"stopped at the output limit\"")
set_tests_properties(apps.run_end.corot_max_output PROPERTIES FIXTURES_SETUP run_end_max_output)
add_test(NAME apps.run_end.corot_max_output_series
  COMMAND ${CMAKE_COMMAND} -DDIR=${run_end_dir}/max_output -DBASE=corot -DMAX_BYTES=49152
    -DREADER=$<TARGET_FILE:cholsim_read_vtk_series> -P ${CMAKE_CURRENT_SOURCE_DIR}/check_bounded_series.cmake)
set_tests_properties(apps.run_end.corot_max_output_series PROPERTIES FIXTURES_REQUIRED run_end_max_output)
cholsim_app_test(bad_max_output ARGS "opsplit|${run_end_box}|--max-output|lots|--out|${run_end_dir}/bad"
  EXPECT_EXIT 2 STDERR_REGEX "--max-output: 'lots' is not a size" STDOUT_EMPTY)
