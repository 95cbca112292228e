# Checks the per-frame timing CSV of `cholsim corot`: a header naming the Table II rows (seed
# 000 §5.2) and one line per simulated frame, each with as many fields as the header.
#
#   cmake -DCSV=<timings.csv> -DFRAMES=<n> -P corot_check_csv.cmake
cmake_minimum_required(VERSION 3.25)

file(STRINGS "${CSV}" lines)
list(LENGTH lines line_count)
math(EXPR expected_lines "${FRAMES} + 1")
if(NOT line_count EQUAL expected_lines)
  message(FATAL_ERROR "${CSV}: ${line_count} lines, expected a header and ${FRAMES} frames")
endif()

list(GET lines 0 header)
string(REPLACE "," ";" columns "${header}")
foreach(column frame time_s element_rotations_s node_rotations_s error_estimation_s matrix_update_s
        factor_update_s rhs_s solve_s collisions_s step_total_s frame_total_s updated_elements
        updated_supernodes cg_iterations)
  if(NOT column IN_LIST columns)
    message(FATAL_ERROR "${CSV}: the header has no column '${column}': ${header}")
  endif()
endforeach()

list(LENGTH columns column_count)
list(SUBLIST lines 1 -1 rows)
set(frame 1)
foreach(row IN LISTS rows)
  string(REPLACE "," ";" fields "${row}")
  list(LENGTH fields field_count)
  list(GET fields 0 first)
  if(NOT field_count EQUAL column_count OR NOT first EQUAL frame)
    message(FATAL_ERROR "${CSV}: row '${row}' is not frame ${frame} with ${column_count} fields")
  endif()
  math(EXPR frame "${frame} + 1")
endforeach()
