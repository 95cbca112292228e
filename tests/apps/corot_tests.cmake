# Tests of `cholsim corot` and of the VTK output every simulation command writes.
set(cholsim_app_test_group corot)

# Reading .pvd/.vtu back with VTK's own XML readers (what ParaView does), shared by the
# writer's unit test and the read_vtk_series checker below.
add_library(cholsim_vtk_series_reading STATIC ${CMAKE_CURRENT_SOURCE_DIR}/vtk_series_reading.cpp)
target_link_libraries(cholsim_vtk_series_reading
  PUBLIC VTK::CommonCore VTK::CommonDataModel VTK::IOXML VTK::IOXMLParser
  PRIVATE cholsim_warnings cholsim_sanitizers cholsim_thin_code)

# The writer and its output folder are compiled into the cholsim program, not a library; their
# tests compile them again.
add_executable(cholsim_vtk_series_writer_tests
  ${CMAKE_CURRENT_SOURCE_DIR}/vtk_series_writer_test.cpp ${CMAKE_CURRENT_SOURCE_DIR}/output_folder_test.cpp
  ${PROJECT_SOURCE_DIR}/apps/vtk_series_writer.cpp ${PROJECT_SOURCE_DIR}/apps/output_folder.cpp
  ${PROJECT_SOURCE_DIR}/apps/xml_text.cpp)
target_include_directories(cholsim_vtk_series_writer_tests PRIVATE ${PROJECT_SOURCE_DIR})
target_link_libraries(cholsim_vtk_series_writer_tests PRIVATE cholsim_vtk_series_reading cholsim::linalg
  GTest::gtest GTest::gtest_main cholsim_warnings cholsim_sanitizers cholsim_thin_code)
gtest_discover_tests(cholsim_vtk_series_writer_tests DISCOVERY_TIMEOUT 60 TEST_PREFIX "apps.vtk_series_writer.")

# read_vtk_series PVD --frames N [--points P] [--cells C] [--point-array NAME:COMPONENTS]...
#   [--cell-array NAME:COMPONENTS]...: exit 0 when the collection and every frame match.
add_executable(cholsim_read_vtk_series ${CMAKE_CURRENT_SOURCE_DIR}/read_vtk_series.cpp)
target_link_libraries(cholsim_read_vtk_series PRIVATE cholsim_vtk_series_reading CLI11::CLI11
  cholsim_warnings cholsim_sanitizers cholsim_thin_code)

# Input files for the failure paths, written at configure time beside the tests.
set(corot_data ${CMAKE_CURRENT_BINARY_DIR}/corot_data)
# A TetGen pair whose .node has a non-number on line 3.
file(WRITE ${corot_data}/corot_malformed.node "4 3 0 0\n0 0 0 0\n1 1 0 zero\n2 0 1 0\n3 0 0 1\n")
file(WRITE ${corot_data}/corot_malformed.ele "1 4 0\n0 0 1 2 3\n")
# A scene with a JSON syntax error on line 3, and one with a misspelt key.
file(WRITE ${corot_data}/corot_bad_syntax.json "{\n  \"frames\": 2,\n  \"dt\": 0.01,,\n}\n")
file(WRITE ${corot_data}/corot_unknown_key.json "{\"frames\": 2, \"material\": {\"young\": 1e6}}\n")
file(WRITE ${corot_data}/corot_bad_budget.json "{\"budget\": 2}\n")
file(WRITE ${corot_data}/corot_bad_obstacle.json "{\"obstacles\": [{\"type\": \"cone\"}]}\n")
# A scene exercising every obstacle kind, a material, a budget and a sphere.
file(WRITE ${corot_data}/corot_scene.json [[
{
  "builtin": "sphere", "resolution": 4,
  "material": {"youngs": 1e6, "poisson": 0.35, "density": 900},
  "rayleigh": {"alpha": 0.1, "beta": 0.001},
  "method": "wc", "tau": 0.01, "budget": 0.5,
  "frames": 2, "dt": 0.01, "drop_height": 0.05,
  "obstacles": [
    {"type": "sphere", "center": [0.5, 0.1, 0], "radius": 0.1},
    {"type": "cylinder", "end_a": [-1, 0.05, 1], "end_b": [1, 0.05, 1], "radius": 0.05},
    {"type": "piston", "center": [0, 1, 0], "half_extents": [0.3, 0.1, 0.3],
     "velocity": [0, -0.5, 0], "start_time": 0.0, "stop_time": 0.5}
  ]
}
]])

# Help names the flags.
cholsim_app_test(help ARGS "corot|--help"
  STDOUT_REGEX "--scene.*--mesh.*--builtin.*--method.*--tau.*--budget.*--frames.*--dt.*--out.*--json")

# A tiny run of each method: one JSON object with the Table II rows and the sizes; progress on
# stderr. The warp-canceling run is the fixture whose frames read_vtk_series opens below.
set(corot_json_keys
  "mesh_source|nodes|tets|method|frames|element_rotations_s|node_rotations_s|error_estimation_s"
  "|matrix_update_s|factor_update_s|rhs_s|solve_s|collisions_s|step_total_s|frame_s|updated_elements"
  "|updated_supernodes|cg_iterations|factor_bytes|retained_update_bytes|pvd|timings_csv|summary_json")
string(CONCAT corot_json_keys ${corot_json_keys})
set(corot_tiny "corot|--builtin|box|--resolution|4|--frames|3|--dt|0.01|--drop-height|0.02")
foreach(method wc exact cg warping)
  cholsim_app_test(tiny_${method}
    ARGS "${corot_tiny}|--method|${method}|--out|${CMAKE_CURRENT_BINARY_DIR}/corot_tiny_${method}|--json"
    JSON_KEYS "${corot_json_keys}" STDOUT_REGEX "\"method\": \"${method}\"" STDERR_REGEX "frame 3/3")
endforeach()
set_tests_properties(apps.corot.tiny_wc PROPERTIES FIXTURES_SETUP corot_tiny_frames)

# The frames open in VTK's own readers: 3 steps + the initial state, a 4x2x2-cell box of Kuhn
# tets (5*3*3 nodes, 6*16 tets), every array with its components.
add_test(NAME apps.corot.frames_read_back
  COMMAND cholsim_read_vtk_series ${CMAKE_CURRENT_BINARY_DIR}/corot_tiny_wc/corot.pvd --frames 4
    --points 45 --cells 96 --point-array velocity:3 --point-array displacement:3
    --cell-array stale_error:1 --cell-array badness:1 --cell-array updated:1)
set_tests_properties(apps.corot.frames_read_back PROPERTIES FIXTURES_REQUIRED corot_tiny_frames)
# The checker fails on a wrong frame count (so the test above can fail).
add_test(NAME apps.corot.frames_read_back_detects_mismatch
  COMMAND cholsim_read_vtk_series ${CMAKE_CURRENT_BINARY_DIR}/corot_tiny_wc/corot.pvd --frames 5)
set_tests_properties(apps.corot.frames_read_back_detects_mismatch PROPERTIES
  FIXTURES_REQUIRED corot_tiny_frames WILL_FAIL TRUE)
# The timing CSV beside the frames: the Table II columns and one row per frame.
add_test(NAME apps.corot.timings_csv
  COMMAND ${CMAKE_COMMAND} -DCSV=${CMAKE_CURRENT_BINARY_DIR}/corot_tiny_wc/timings.csv -DFRAMES=3
    -P ${CMAKE_CURRENT_SOURCE_DIR}/corot_check_csv.cmake)
set_tests_properties(apps.corot.timings_csv PROPERTIES FIXTURES_REQUIRED corot_tiny_frames)

# The text report and a scene file with every obstacle kind.
cholsim_app_test(text_report ARGS "${corot_tiny}|--out|${CMAKE_CURRENT_BINARY_DIR}/corot_text"
  STDOUT_REGEX "mesh\n  source: +builtin box.*mean per-frame time.*  Cholesky update: .*  solve: ")
cholsim_app_test(scene_file ARGS "corot|--scene|${corot_data}/corot_scene.json|--out|${CMAKE_CURRENT_BINARY_DIR}/corot_scene|--json"
  JSON_KEYS "${corot_json_keys}" STDOUT_REGEX "\"obstacles\": 4,.*\"budget_fraction\": 0.5")
# A flag overrides the scene file.
cholsim_app_test(flag_overrides_scene
  ARGS "corot|--scene|${corot_data}/corot_scene.json|--frames|1|--method|exact|--out|${CMAKE_CURRENT_BINARY_DIR}/corot_override|--json"
  JSON_KEYS "frames" STDOUT_REGEX "\"method\": \"exact\".*\"frames\": 1,")

# Failure paths: exit 2 naming the file and line or the flag; stdout stays empty.
cholsim_app_test(malformed_mesh ARGS "corot|--mesh|${corot_data}/corot_malformed.node|--frames|1"
  EXPECT_EXIT 2 STDERR_REGEX "corot_malformed\\.node:3:" STDOUT_EMPTY)
cholsim_app_test(missing_mesh ARGS "corot|--mesh|${corot_data}/does_not_exist.msh|--frames|1"
  EXPECT_EXIT 2 STDERR_REGEX "does_not_exist\\.msh" STDOUT_EMPTY)
cholsim_app_test(scene_syntax_error ARGS "corot|--scene|${corot_data}/corot_bad_syntax.json"
  EXPECT_EXIT 2 STDERR_REGEX "corot_bad_syntax\\.json:3: not valid JSON" STDOUT_EMPTY)
cholsim_app_test(scene_unknown_key ARGS "corot|--scene|${corot_data}/corot_unknown_key.json"
  EXPECT_EXIT 2 STDERR_REGEX "corot_unknown_key\\.json: material\\.young is not a known key" STDOUT_EMPTY)
cholsim_app_test(scene_bad_budget ARGS "corot|--scene|${corot_data}/corot_bad_budget.json"
  EXPECT_EXIT 2 STDERR_REGEX "corot_bad_budget\\.json: budget: '2' is not a budget" STDOUT_EMPTY)
cholsim_app_test(scene_bad_obstacle ARGS "corot|--scene|${corot_data}/corot_bad_obstacle.json"
  EXPECT_EXIT 2 STDERR_REGEX "obstacles\\[0\\]\\.type is 'cone'; expected plane, sphere, cylinder or piston" STDOUT_EMPTY)
cholsim_app_test(bad_method ARGS "corot|--method|fast" EXPECT_EXIT 2 STDOUT_EMPTY)
cholsim_app_test(bad_budget_fraction ARGS "corot|--budget|1.5"
  EXPECT_EXIT 2 STDERR_REGEX "--budget: '1.5' is not a budget" STDOUT_EMPTY)
cholsim_app_test(bad_budget_text ARGS "corot|--budget|fast"
  EXPECT_EXIT 2 STDERR_REGEX "--budget: 'fast' is not a budget" STDOUT_EMPTY)
cholsim_app_test(bad_frames ARGS "corot|--frames|0" EXPECT_EXIT 2 STDOUT_EMPTY)
cholsim_app_test(bad_builtin ARGS "corot|--builtin|cube" EXPECT_EXIT 2 STDOUT_EMPTY)
cholsim_app_test(bad_poisson ARGS "corot|--builtin|box|--resolution|2|--poisson|0.5|--out|${CMAKE_CURRENT_BINARY_DIR}/corot_bad"
  EXPECT_EXIT 2 STDERR_REGEX "Poisson ratio must be in" STDOUT_EMPTY)

# Every builtin shape sets up and steps (tiny resolutions).
foreach(shape torus sheet)
  cholsim_app_test(builtin_${shape}
    ARGS "corot|--builtin|${shape}|--resolution|6|--frames|1|--out|${CMAKE_CURRENT_BINARY_DIR}/corot_${shape}|--json"
    JSON_KEYS "nodes|tets" STDOUT_REGEX "builtin ${shape}")
endforeach()

# A closed surface is tetrahedralized by Debian's tetgen, and the command it ran is reported.
set(corot_surface ${PROJECT_SOURCE_DIR}/../shared/data/meshes/PositionBasedDynamics/torus.obj)
if(EXISTS /usr/bin/tetgen AND EXISTS ${corot_surface})
  cholsim_app_test(surface_via_tetgen
    ARGS "corot|--mesh|${corot_surface}|--scale|0.2|--frames|1|--out|${CMAKE_CURRENT_BINARY_DIR}/corot_surface|--json"
    JSON_KEYS "tetgen_command|nodes|tets" STDERR_REGEX "ran: /usr/bin/tetgen -pYq2 surface\\.off")
endif()

# Per-element materials from scene regions (seed 000 §5.1's 300× stiffness contrast): a box
# region over x ≥ 0 of the 4-cell bar holds exactly its two x ≥ 0 cells, 48 of the 96 tets.
file(WRITE ${corot_data}/corot_regions.json [[
{
  "builtin": "box", "resolution": 4, "frames": 1, "dt": 0.01, "drop_height": 0.02,
  "material": {"youngs": 1e6},
  "regions": [
    {"sphere": {"center": [-0.2, 0.1, 0], "radius": 0.01}, "material": {"youngs": 2e6}},
    {"box": {"min": [0, -1, -1], "max": [1, 1, 1]}, "material": {"youngs": 3e8, "density": 1200}}
  ]
}
]])
cholsim_app_test(scene_regions
  ARGS "corot|--scene|${corot_data}/corot_regions.json|--out|${CMAKE_CURRENT_BINARY_DIR}/corot_regions|--json"
  JSON_KEYS "material_regions|region_elements|stiffness_contrast"
  STDOUT_REGEX "\"material_regions\": 2,.*\"region_elements\": 48,.*\"stiffness_contrast\": 300\\.0")
file(WRITE ${corot_data}/corot_region_two_shapes.json
  "{\"regions\": [{\"sphere\": {\"center\": [0, 0, 0], \"radius\": 1}, \"box\": {\"min\": [0, 0, 0], \"max\": [1, 1, 1]}, \"material\": {}}]}\n")
cholsim_app_test(scene_region_two_shapes ARGS "corot|--scene|${corot_data}/corot_region_two_shapes.json"
  EXPECT_EXIT 2 STDERR_REGEX "regions\\[0\\]\\.sphere or \"box\": give exactly one of them" STDOUT_EMPTY)
file(WRITE ${corot_data}/corot_region_inside_out.json
  "{\"regions\": [{\"box\": {\"min\": [0, 2, 0], \"max\": [1, 1, 1]}, \"material\": {\"youngs\": 1e7}}]}\n")
cholsim_app_test(scene_region_inside_out ARGS "corot|--scene|${corot_data}/corot_region_inside_out.json"
  EXPECT_EXIT 2 STDERR_REGEX "regions\\[0\\]\\.box\\.min must not exceed max" STDOUT_EMPTY)
file(WRITE ${corot_data}/corot_region_bad_material.json
  "{\"builtin\": \"box\", \"resolution\": 2, \"regions\": [{\"box\": {\"min\": [0, 0, 0], \"max\": [1, 1, 1]}, \"material\": {\"poisson\": 0.7}}]}\n")
cholsim_app_test(scene_region_bad_material ARGS "corot|--scene|${corot_data}/corot_region_bad_material.json|--out|${CMAKE_CURRENT_BINARY_DIR}/corot_bad"
  EXPECT_EXIT 2 STDERR_REGEX "corot_region_bad_material\\.json: regions\\[0\\]\\.material\\.poisson must lie in \\(-1, 0\\.5\\)" STDOUT_EMPTY)
file(WRITE ${corot_data}/corot_piston_returns_early.json
  "{\"obstacles\": [{\"type\": \"piston\", \"center\": [0, 1, 0], \"half_extents\": [1, 0.1, 1], \"velocity\": [0, -1, 0], \"start_time\": 0, \"stop_time\": 1, \"return_time\": 0.5}]}\n")
cholsim_app_test(scene_piston_returns_early ARGS "corot|--scene|${corot_data}/corot_piston_returns_early.json"
  EXPECT_EXIT 2 STDERR_REGEX "obstacles\\[0\\]\\.return_time must not come before stop_time" STDOUT_EMPTY)

# Several steps per written frame: 2 frames of 3 steps of 10 ms end at t = 0.06 s.
cholsim_app_test(steps_per_frame
  ARGS "corot|--builtin|box|--resolution|4|--frames|2|--dt|0.01|--drop-height|0.02|--steps-per-frame|3|--out|${CMAKE_CURRENT_BINARY_DIR}/corot_substeps"
  STDOUT_REGEX "steps per frame: +3.*frames: +2.*final state \\(t = 0\\.060 s\\)")
cholsim_app_test(bad_steps_per_frame ARGS "corot|--steps-per-frame|0" EXPECT_EXIT 2 STDOUT_EMPTY)

# Implicit contact springs are reported; stiffness warping refuses them (its factor is fixed).
cholsim_app_test(implicit_contact ARGS "${corot_tiny}|--implicit-contact|--out|${CMAKE_CURRENT_BINARY_DIR}/corot_implicit"
  STDOUT_REGEX "contact springs: +implicit")
cholsim_app_test(implicit_contact_with_warping
  ARGS "${corot_tiny}|--implicit-contact|--method|warping|--out|${CMAKE_CURRENT_BINARY_DIR}/corot_bad"
  EXPECT_EXIT 2 STDERR_REGEX "stiffness warping never refactors" STDOUT_EMPTY)

# The bundled scenes in data/scenes run (two frames each): the §5.1 sheet draped over a sphere,
# a model with a 300× stiffness contrast, and Fig. 5's piston squashing a bar (explicit springs,
# 600 Hz) and the bunny (implicit springs, 60 Hz).
foreach(scene sheet_drape two_materials bar_squash bear_squash)
  cholsim_app_test(bundled_scene_${scene}
    ARGS "corot|--scene|${PROJECT_SOURCE_DIR}/data/scenes/${scene}.json|--frames|2|--out|${CMAKE_CURRENT_BINARY_DIR}/corot_${scene}|--json"
    JSON_KEYS "${corot_json_keys}|lowest_y_m|max_speed_m_s|inverted_elements" STDOUT_REGEX "\"frames\": 2,")
endforeach()
