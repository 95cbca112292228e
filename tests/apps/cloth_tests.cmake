# Tests of `cholsim cloth` (seed 002 ch. 2: EOL and Lagrangian cloth, each step a QP).
set(cholsim_app_test_group cloth)

cholsim_app_test(help ARGS "cloth|--help"
  STDOUT_REGEX "--scene.*--method.*--cells.*--cone.*--consistent-mass.*--friction.*--dt.*--frames.*--every.*--qp-backend.*--out.*--max-output.*--json.*--strict")

# A few steps of a coarse EDGE with EOL vertices: the Table 2.1 columns in the JSON summary,
# progress, cloth and obstacle frames ParaView reads with their fields.
set(cloth_json_keys
  "scene|method|dt|steps|max_faces|max_eol_percent|min_gap_m|released|collision_percent|remesh_percent"
  "|fill_percent|qp_percent|ms_per_step|qp_iterations|max_schur_size|status|health|pvd|obstacles_pvd|vtu_files")
string(CONCAT cloth_json_keys ${cloth_json_keys})
cholsim_app_test(edge_json ARGS "cloth|--scene|lo-res|--frames|40|--every|10|--out|${CMAKE_CURRENT_BINARY_DIR}/cloth_edge|--json"
  JSON_KEYS "${cloth_json_keys}" STDOUT_REGEX "\"status\": \"ok\".*\"health\": \"ok\".*\"vtu_files\": 5"
  STDERR_REGEX "step 40/40 .*faces.*EOL")
set_tests_properties(apps.cloth.edge_json PROPERTIES FIXTURES_SETUP cloth_edge_frames)
add_test(NAME apps.cloth.frames_read_back
  COMMAND cholsim_read_vtk_series ${CMAKE_CURRENT_BINARY_DIR}/cloth_edge/cloth.pvd --frames 5 --triangles --remeshed
    --point-array velocity:3 --point-array eol_vertex:1 --point-array material_coordinates:3
    --point-array contact_force:3)
set_tests_properties(apps.cloth.frames_read_back PROPERTIES FIXTURES_REQUIRED cloth_edge_frames)
add_test(NAME apps.cloth.obstacles_read_back
  COMMAND cholsim_read_vtk_series ${CMAKE_CURRENT_BINARY_DIR}/cloth_edge/obstacles.pvd --frames 5 --triangles)
set_tests_properties(apps.cloth.obstacles_read_back PROPERTIES FIXTURES_REQUIRED cloth_edge_frames)

# The other methods and the sparse QP back end run.
cholsim_app_test(conformal_cone ARGS "cloth|--scene|lo-res|--method|lagrangian-conformal|--cone|--frames|30|--out|${CMAKE_CURRENT_BINARY_DIR}/cloth_cone"
  STDOUT_REGEX "method: +lagrangian-conformal.*status: +ok")
cholsim_app_test(regular_sparse ARGS "cloth|--scene|wire|--cells|8|--method|lagrangian-regular|--qp-backend|sparse|--frames|30|--out|${CMAKE_CURRENT_BINARY_DIR}/cloth_sparse"
  STDOUT_REGEX "status: +ok")

# Bad input exits 2 with a message and no report.
cholsim_app_test(bad_scene ARGS "cloth|--scene|sail" EXPECT_EXIT 2 STDOUT_EMPTY)
cholsim_app_test(bad_method ARGS "cloth|--method|arcsim" EXPECT_EXIT 2 STDOUT_EMPTY)
cholsim_app_test(bad_cells ARGS "cloth|--cells|0" EXPECT_EXIT 2 STDOUT_EMPTY)
cholsim_app_test(bad_dt ARGS "cloth|--dt|-1" EXPECT_EXIT 2 STDOUT_EMPTY)
