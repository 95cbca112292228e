# Tests of `cholsim conjac` (seed 002 ch. 4: CONJAC condensation dynamics).
set(cholsim_app_test_group conjac)

cholsim_app_test(help ARGS "conjac|--help"
  STDOUT_REGEX "--scene.*--method.*--dynamic-nodes.*--resolution.*--dt.*--beta.*--gamma.*--frames.*--out.*--threads.*--json")

# A few steps of TWIST with two dynamic nodes: a JSON summary with the phase split, a progress
# line per step, frames ParaView reads with the dynamic-node flag, a CSV.
cholsim_app_test(twist_json ARGS "conjac|--scene|twist|--dynamic-nodes|2|--frames|4|--out|${CMAKE_CURRENT_BINARY_DIR}/conjac_twist|--json"
  JSON_KEYS "scene|nodes|tets|free_dofs|method|dynamic_nodes|steps|fill_s|factor_s|solve_s|other_s|elastic_energy|kinetic_energy|vtu_files"
  STDOUT_REGEX "\"vtu_files\": 5" STDERR_REGEX "step 4/4 .*solves")
set_tests_properties(apps.conjac.twist_json PROPERTIES FIXTURES_SETUP conjac_twist_frames)
add_test(NAME apps.conjac.frames_read_back
  COMMAND cholsim_read_vtk_series ${CMAKE_CURRENT_BINARY_DIR}/conjac_twist/conjac.pvd --frames 5
    --point-array displacement:3 --point-array velocity:3 --point-array dynamic:1 --cell-array energy_density:1)
set_tests_properties(apps.conjac.frames_read_back PROPERTIES FIXTURES_REQUIRED conjac_twist_frames)

# The full model on the same scene; quasistatic motion with no dynamic node.
cholsim_app_test(twist_full ARGS "conjac|--scene|twist|--method|full|--frames|2|--out|${CMAKE_CURRENT_BINARY_DIR}/conjac_full"
  STDOUT_REGEX "method: +full")
cholsim_app_test(twist_quasistatic ARGS "conjac|--scene|twist|--dynamic-nodes|0|--frames|2|--out|${CMAKE_CURRENT_BINARY_DIR}/conjac_qs"
  STDOUT_REGEX "dynamic nodes: +0")

# Bad input: exit 2, nothing on stdout.
cholsim_app_test(bad_gamma ARGS "conjac|--gamma|2" EXPECT_EXIT 2 STDERR_REGEX "gamma" STDOUT_EMPTY)
cholsim_app_test(bad_scene ARGS "conjac|--scene|dragonfly" EXPECT_EXIT 2 STDERR_REGEX "dragonfly" STDOUT_EMPTY)
