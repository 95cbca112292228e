# Tests of `cholsim octree` (seed 001: flesh on a surface-refined octree, MGPCG).
set(cholsim_app_test_group octree)

cholsim_app_test(help ARGS "octree|--help"
  STDOUT_REGEX "--mesh.*--cells.*--uniform.*--solver.*--frames.*--levels.*--newton-steps.*--solver-iterations.*--out.*--threads.*--json")

# A few frames of the bundled armadillo on a coarse octree: a JSON summary with the octree's
# statistics, a progress line per frame, the octree and surface series ParaView reads, a CSV.
cholsim_app_test(armadillo_json ARGS "octree|--cells|24|--frames|3|--out|${CMAKE_CURRENT_BINARY_DIR}/octree_armadillo|--json"
  JSON_KEYS "scene|solver|elements|nodes|elements_with_hanging_nodes|levels|memory_bytes|bytes_per_element|frames|mean_newton_steps|mean_solver_iterations|elastic_energy|kinetic_energy"
  STDOUT_REGEX "\"frames\": 3" STDERR_REGEX "3/3 ")
set_tests_properties(apps.octree.armadillo_json PROPERTIES FIXTURES_SETUP octree_armadillo_frames)
add_test(NAME apps.octree.volume_frames_read_back
  COMMAND cholsim_read_vtk_series ${CMAKE_CURRENT_BINARY_DIR}/octree_armadillo/octree.pvd --frames 4 --hexahedra
    --point-array displacement:3 --cell-array level:1 --cell-array hanging_nodes:1 --cell-array strain:1)
add_test(NAME apps.octree.surface_frames_read_back
  COMMAND cholsim_read_vtk_series ${CMAKE_CURRENT_BINARY_DIR}/octree_armadillo/surface.pvd --frames 4 --triangles
    --point-array displacement:3)
set_tests_properties(apps.octree.volume_frames_read_back apps.octree.surface_frames_read_back
  PROPERTIES FIXTURES_REQUIRED octree_armadillo_frames)

# The uniform-grid baseline and the direct solver on the same scene.
cholsim_app_test(uniform_direct ARGS "octree|--cells|12|--uniform|--solver|direct|--frames|1|--out|${CMAKE_CURRENT_BINARY_DIR}/octree_uniform"
  STDOUT_REGEX "linear solver: +direct.*uniform grid")

# The K-cycle instead of the default V-cycle.
cholsim_app_test(k_cycle ARGS "octree|--cells|24|--frames|2|--cycle|k|--out|${CMAKE_CURRENT_BINARY_DIR}/octree_k_cycle|--json"
  STDOUT_REGEX "\"cycle\": \"k-cycle\".*\"frames\": 2")
cholsim_app_test(merged_coarse ARGS "octree|--cells|24|--frames|2|--coarse|merged|--out|${CMAKE_CURRENT_BINARY_DIR}/octree_merged|--json"
  STDOUT_REGEX "\"coarse_elements\": \"merged from their children\".*\"frames\": 2")

# Bad input: exit 2, nothing on stdout.
cholsim_app_test(bad_cycle ARGS "octree|--cycle|x" EXPECT_EXIT 2 STDERR_REGEX "cycle" STDOUT_EMPTY)
cholsim_app_test(bad_coarse ARGS "octree|--coarse|galerkin" EXPECT_EXIT 2 STDERR_REGEX "coarse" STDOUT_EMPTY)
cholsim_app_test(bad_solver ARGS "octree|--solver|lu" EXPECT_EXIT 2 STDERR_REGEX "lu" STDOUT_EMPTY)
cholsim_app_test(missing_mesh ARGS "octree|--mesh|/nonexistent/mesh.obj" EXPECT_EXIT 2 STDERR_REGEX "mesh" STDOUT_EMPTY)
cholsim_app_test(open_mesh ARGS "octree|--mesh|${CMAKE_CURRENT_SOURCE_DIR}/data/open_cube.obj|--out|${CMAKE_CURRENT_BINARY_DIR}/octree_open"
  EXPECT_EXIT 2 STDERR_REGEX "edge" STDOUT_EMPTY)
