# Tests of `cholsim dynamics` (seed 002 ch. 5: Newton / quasi-Newton with fresh, frozen,
# extrapolated and incrementally refactorized factors).
set(cholsim_app_test_group dynamics)

cholsim_app_test(help ARGS "dynamics|--help"
  STDOUT_REGEX "--scene.*--resolution.*--solver.*--integrator.*--material.*--youngs.*--poisson.*--damping.*--dt.*--frames.*--out.*--threads.*--json")

# A few steps of a small bar with the default solver: a JSON summary with the solver work and
# the time split, a progress line per step, frames ParaView reads with their fields, a CSV.
set(dynamics_json_keys
  "scene|nodes|tets|solver|integrator|steps|solves|unconverged_solves|iterations|quasi_newton_iterations"
  "|newton_iterations|pcg_iterations|factorizations|refactorizations|refactorized_flop_fraction"
  "|factor_s|solve_s|assembly_s|evaluation_s|pvd|vtu_files|steps_csv")
string(CONCAT dynamics_json_keys ${dynamics_json_keys})
cholsim_app_test(bar_json ARGS "dynamics|--resolution|0.15|--frames|4|--out|${CMAKE_CURRENT_BINARY_DIR}/dynamics_bar|--json"
  JSON_KEYS "${dynamics_json_keys}" STDOUT_REGEX "\"vtu_files\": 5.*\"unconverged_solves\": 0|\"unconverged_solves\": 0.*\"vtu_files\": 5"
  STDERR_REGEX "step 4/4 .*iterations")
set_tests_properties(apps.dynamics.bar_json PROPERTIES FIXTURES_SETUP dynamics_bar_frames)
add_test(NAME apps.dynamics.frames_read_back
  COMMAND cholsim_read_vtk_series ${CMAKE_CURRENT_BINARY_DIR}/dynamics_bar/dynamics.pvd --frames 5
    --point-array displacement:3 --point-array velocity:3 --cell-array energy_density:1 --cell-array clamped_eigenvalues:1)
set_tests_properties(apps.dynamics.frames_read_back PROPERTIES FIXTURES_REQUIRED dynamics_bar_frames)

# Every solver family runs; a dynamic integrator with damping; the anisotropic variant.
cholsim_app_test(bar_newton_d ARGS "dynamics|--resolution|0.15|--frames|2|--solver|newton-d|--out|${CMAKE_CURRENT_BINARY_DIR}/dynamics_d"
  STDOUT_REGEX "solver: +newton-d.*solves not converged: +0")
cholsim_app_test(bar_hybrid_l1 ARGS "dynamics|--resolution|0.15|--frames|2|--solver|hybrid-l1|--anisotropic|--out|${CMAKE_CURRENT_BINARY_DIR}/dynamics_l1"
  STDOUT_REGEX "with Ldot: +[1-9]")
cholsim_app_test(bar_bdf2 ARGS "dynamics|--resolution|0.15|--frames|3|--integrator|bdf2|--dt|0.01|--damping|0.01|--solver|newton-l0|--out|${CMAKE_CURRENT_BINARY_DIR}/dynamics_bdf2"
  STDOUT_REGEX "integrator: +bdf2")

cholsim_app_test(bar_analytic_rate ARGS "dynamics|--resolution|0.15|--frames|2|--solver|newton-l1|--analytic-rate|--out|${CMAKE_CURRENT_BINARY_DIR}/dynamics_rate"
  STDOUT_REGEX "with Ldot: +[1-9].*solves not converged: +0|solves not converged: +0.*with Ldot: +[1-9]")
# Contact scenes: balls into a bowl, SDIRK2's two solves a step.
cholsim_app_test(bodies ARGS "dynamics|--scene|bodies|--bodies|4|--resolution|0.3|--frames|3|--out|${CMAKE_CURRENT_BINARY_DIR}/dynamics_bodies"
  STDOUT_REGEX "bodies: .*4 balls.*sdirk2.*nonlinear solves: +6" STDERR_REGEX "step 3/3")

# Bad input exits 2 with a message and no report.
cholsim_app_test(bad_solver ARGS "dynamics|--solver|newton-x|--out|${CMAKE_CURRENT_BINARY_DIR}/dynamics_bad"
  EXPECT_EXIT 2 STDERR_REGEX "newton-x" STDOUT_EMPTY)
cholsim_app_test(bad_poisson ARGS "dynamics|--poisson|0.5|--out|${CMAKE_CURRENT_BINARY_DIR}/dynamics_bad"
  EXPECT_EXIT 2 STDERR_REGEX "Poisson" STDOUT_EMPTY)
cholsim_app_test(bad_youngs ARGS "dynamics|--youngs|-3" EXPECT_EXIT 2 STDOUT_EMPTY)
cholsim_app_test(bad_scene ARGS "dynamics|--scene|ducks" EXPECT_EXIT 2 STDOUT_EMPTY)
cholsim_app_test(bad_integrator ARGS "dynamics|--integrator|rk4|--out|${CMAKE_CURRENT_BINARY_DIR}/dynamics_bad"
  EXPECT_EXIT 2 STDERR_REGEX "rk4" STDOUT_EMPTY)
