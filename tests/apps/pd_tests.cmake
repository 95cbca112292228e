# Tests of `cholsim pd` (seed 004 projective dynamics with Schur-complement collisions).
set(cholsim_app_test_group pd)

cholsim_app_test(help ARGS "pd|--help"
  STDOUT_REGEX "--scene.*--tets.*--inner.*--outer.*--solver.*--device.*--schur-update.*--schur-precision.*--frames.*--integrator.*--dt.*--out.*--threads.*--json")

# A short run of the elbow at the smallest size: one JSON object with the partition, the
# per-phase times and the result; a timing line per frame on stderr; frames VTK reads back
# with the point and cell fields ParaView shows.
set(pd_json_keys
  "scene|nodes|tets|proxies|attachments|prone_elements|prone_nodes|prone_fraction|solver|nnz_L|fill_increase"
  "|analyze_s|factorize_s|local_s|detection_s|forward_s|schur_s|backward_s|frame_s|most_springs|deepest_mm|pvd|vtu_files")
string(CONCAT pd_json_keys ${pd_json_keys})
set(pd_tiny "pd|--tets|10k|--frames|3")
cholsim_app_test(tiny_json ARGS "${pd_tiny}|--out|${CMAKE_CURRENT_BINARY_DIR}/pd_tiny|--json"
  JSON_KEYS "${pd_json_keys}" STDOUT_REGEX "\"vtu_files\": 4" STDERR_REGEX "frame 3/3 .*forward .*schur .*backward")
set_tests_properties(apps.pd.tiny_json PROPERTIES FIXTURES_SETUP pd_tiny_frames)
add_test(NAME apps.pd.frames_read_back
  COMMAND cholsim_read_vtk_series ${CMAKE_CURRENT_BINARY_DIR}/pd_tiny/pd.pvd --frames 4
    --point-array displacement:3 --point-array collision_prone:1 --point-array proxy_depth:1
    --cell-array strain:1 --cell-array collision_prone:1)
set_tests_properties(apps.pd.frames_read_back PROPERTIES FIXTURES_REQUIRED pd_tiny_frames)

# The lips close on each other with every solver; the baselines report their solve.
cholsim_app_test(lips_full ARGS "pd|--scene|lips|--tets|10k|--frames|2|--solver|full|--out|${CMAKE_CURRENT_BINARY_DIR}/pd_full"
  STDOUT_REGEX "solver: +full.*whole polluted solve" STDERR_REGEX "frame 2/2 .*solve ")
cholsim_app_test(lips_pcg ARGS "pd|--scene|lips|--tets|10k|--frames|1|--solver|pcg|--out|${CMAKE_CURRENT_BINARY_DIR}/pd_pcg"
  STDERR_REGEX "frame 1/1 .*CG it")
cholsim_app_test(dense_updates ARGS "pd|--tets|10k|--frames|2|--schur-update|dense|--schur-precision|mixed|--out|${CMAKE_CURRENT_BINARY_DIR}/pd_dense"
  STDOUT_REGEX "inner solves by the Woodbury route: +0\n")
cholsim_app_test(gpu_falls_back ARGS "pd|--tets|10k|--frames|1|--device|gpu|--out|${CMAKE_CURRENT_BINARY_DIR}/pd_gpu"
  STDOUT_REGEX "solver: +schur")

# Bad input exits 2 with a message and no report.
cholsim_app_test(bad_tets ARGS "pd|--tets|5|--out|${CMAKE_CURRENT_BINARY_DIR}/pd_bad"
  EXPECT_EXIT 2 STDERR_REGEX "--tets 5: expected a count" STDOUT_EMPTY)
cholsim_app_test(bad_scene ARGS "pd|--scene|knee" EXPECT_EXIT 2 STDOUT_EMPTY)
cholsim_app_test(bad_solver ARGS "pd|--solver|lu" EXPECT_EXIT 2 STDOUT_EMPTY)

# The surgery scene cuts its mesh at frame 10: the run goes on with fewer tets, analysed and
# factored anew, the sutures among the springs, and health checks on the cut body.
cholsim_app_test(surgery_excision ARGS "pd|--scene|surgery|--tets|20k|--frames|11|--out|${CMAKE_CURRENT_BINARY_DIR}/pd_surgery"
  STDOUT_REGEX "scene: +surgery.*health: +ok" STDERR_REGEX "excision: [0-9,]+ tets remain; K assembled, analysed and factored again.*frame 11/11")
