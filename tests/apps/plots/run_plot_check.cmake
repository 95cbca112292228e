# Runs `cholsim ARGS --plot DIR --json` into a fresh DIR, then check_plot_files on DIR and the
# JSON report. With CORRUPT=<file>, that picture is cut short after cholsim ran and the
# checker must reject the folder naming it (the check can fail).
#
#   cmake -DCHOLSIM=<path> -DCHECKER=<path> -DARGS="factor|--builtin|…" -DDIR=<folder>
#         [-DCORRUPT=spy_L.svg] -P run_plot_check.cmake
cmake_minimum_required(VERSION 3.25)

foreach(required CHOLSIM CHECKER ARGS DIR)
  if(NOT DEFINED ${required})
    message(FATAL_ERROR "run_plot_check.cmake needs -D${required}=...")
  endif()
endforeach()

file(REMOVE_RECURSE "${DIR}")
string(REPLACE "|" ";" arguments "${ARGS}")
set(report "${DIR}.report.json")
execute_process(COMMAND "${CHOLSIM}" ${arguments} --plot "${DIR}" --json
  RESULT_VARIABLE exit_code OUTPUT_FILE "${report}" ERROR_VARIABLE err)
if(NOT exit_code EQUAL 0)
  message(FATAL_ERROR "cholsim ${ARGS} --plot ${DIR} exited ${exit_code}\n${err}")
endif()

if(DEFINED CORRUPT)
  file(READ "${DIR}/${CORRUPT}" picture)
  string(LENGTH "${picture}" length)
  math(EXPR kept "${length} - 20")
  string(SUBSTRING "${picture}" 0 ${kept} picture)
  file(WRITE "${DIR}/${CORRUPT}" "${picture}")
endif()

execute_process(COMMAND "${CHECKER}" "${DIR}" "${report}" RESULT_VARIABLE check_code OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(DEFINED CORRUPT)
  if(check_code EQUAL 0 OR NOT out MATCHES "${CORRUPT} is not well-formed")
    message(FATAL_ERROR "check_plot_files accepted a cut-short ${CORRUPT} (exit ${check_code}):\n${out}")
  endif()
elseif(NOT check_code EQUAL 0)
  message(FATAL_ERROR "check_plot_files ${DIR} failed:\n${out}")
endif()
message(STATUS "${out}")
