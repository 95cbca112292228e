# Issue 23 defects D1-D3: bad scene, matrix and mesh files exit 2 with a message naming the
# file (and line), quickly and without allocating by the sizes they announce. The TIMEOUT of
# a few seconds is the "fast" bound: before the fixes these ran for 20 s into "out of memory".
set(cholsim_app_test_group bad_input)
set(bad_input_data ${CMAKE_CURRENT_BINARY_DIR}/bad_input_data)

# cholsim_bad_input_test(NAME ARGS <a|b|c> STDERR_REGEX re): exit 2, empty stdout, 10 s at most.
function(cholsim_bad_input_test name)
  cmake_parse_arguments(ARG "" "ARGS;STDERR_REGEX" "" ${ARGN})
  cholsim_app_test(${name} ARGS "${ARG_ARGS}" EXPECT_EXIT 2 STDERR_REGEX "${ARG_STDERR_REGEX}" STDOUT_EMPTY)
  set_tests_properties(apps.${cholsim_app_test_group}.${name} PROPERTIES TIMEOUT 10)
endfunction()

# D1: scene JSON. A number beyond double range (the parser knows the line), a piston without
# its required half_extents, a wrong type, and negative values where none make sense.
file(WRITE ${bad_input_data}/dt_overflow.json "{\"builtin\":\"box\",\"dt\":1e309}")
cholsim_bad_input_test(scene_number_overflow ARGS "corot|--scene|${bad_input_data}/dt_overflow.json"
  STDERR_REGEX "dt_overflow\\.json:1: the number 1e309 is outside the range of a double")
file(WRITE ${bad_input_data}/piston_no_half_extents.json
  "{\"builtin\": \"box\",\n \"obstacles\": [{\"type\": \"piston\", \"center\": [0, 1, 0]}]}\n")
cholsim_bad_input_test(scene_missing_key ARGS "corot|--scene|${bad_input_data}/piston_no_half_extents.json"
  STDERR_REGEX "piston_no_half_extents\\.json: obstacles\\[0\\]\\.half_extents is missing; it is required")
file(WRITE ${bad_input_data}/frames_text.json "{\"frames\": \"ten\"}\n")
cholsim_bad_input_test(scene_wrong_type ARGS "corot|--scene|${bad_input_data}/frames_text.json"
  STDERR_REGEX "frames_text\\.json: frames is not a positive integer")
file(WRITE ${bad_input_data}/negative_friction.json "{\"friction\": -0.5}\n")
cholsim_bad_input_test(scene_negative_value ARGS "corot|--scene|${bad_input_data}/negative_friction.json"
  STDERR_REGEX "negative_friction\\.json: friction must not be negative")

# D2: the 3-line n = 2e9 file and the n = 1e8 one-entry file; and one announcing more entries
# than its bytes hold.
file(WRITE ${bad_input_data}/n_2e9.mtx
  "%%MatrixMarket matrix coordinate real symmetric\n2000000000 2000000000 1\n1 1 1.0\n")
cholsim_bad_input_test(matrix_n_2e9 ARGS "factor|${bad_input_data}/n_2e9.mtx"
  STDERR_REGEX "n_2e9\\.mtx:2: the size line announces a 2000000000x2000000000 matrix with only 1 stored entries")
file(WRITE ${bad_input_data}/n_1e8.mtx
  "%%MatrixMarket matrix coordinate real symmetric\n100000000 100000000 1\n1 1 1.0\n")
cholsim_bad_input_test(matrix_n_1e8 ARGS "factor|${bad_input_data}/n_1e8.mtx"
  STDERR_REGEX "n_1e8\\.mtx:2: .*fewer than its 100000000 diagonal entries.*not positive definite")
# `cholsim factor` may refuse it earlier by its memory estimate from the header (a machine with
# less memory than 10^9 entries need); either refusal names the file. The reader's own message
# is checked in tests/linalg/test_matrix_market.cpp (EntriesBeyondTheFile).
file(WRITE ${bad_input_data}/entries_1e9.mtx
  "%%MatrixMarket matrix coordinate real symmetric\n4 4 1000000000\n1 1 1.0\n")
cholsim_bad_input_test(matrix_entries_beyond_file ARGS "factor|${bad_input_data}/entries_1e9.mtx"
  STDERR_REGEX "entries_1e9\\.mtx(:2: the file ends early: the size line announces 1000000000 entries| needs .* but the memory limit)")

# D3: a few-line mesh announcing 5e8 points, in each format the issue names.
file(WRITE ${bad_input_data}/huge.node "500000000 3 0 0\n1 0 0 0\n2 1 0 0\n")
file(WRITE ${bad_input_data}/huge.ele "1 4 0\n1 1 2 3 4\n")
cholsim_bad_input_test(mesh_node_5e8 ARGS "corot|--mesh|${bad_input_data}/huge.node|--frames|1"
  STDERR_REGEX "huge\\.node:1: the file ends early: it announces 500000000 point lines")
file(WRITE ${bad_input_data}/huge.mesh "MeshVersionFormatted 2\nDimension 3\nVertices\n500000000\n0 0 0 1\nEnd\n")
cholsim_bad_input_test(mesh_medit_5e8 ARGS "corot|--mesh|${bad_input_data}/huge.mesh|--frames|1"
  STDERR_REGEX "huge\\.mesh:4: the file ends early: it announces 500000000 vertex lines")
file(WRITE ${bad_input_data}/huge.off "OFF\n500000000 1 0\n0 0 0\n3 0 1 2\n")
cholsim_bad_input_test(mesh_off_5e8 ARGS "corot|--mesh|${bad_input_data}/huge.off|--frames|1"
  STDERR_REGEX "huge\\.off:2: the file ends early: it announces 500000000 vertex lines")
