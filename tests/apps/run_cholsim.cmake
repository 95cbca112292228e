# Runs the cholsim binary once and checks its exit code, stdout and stderr.
#
#   cmake -DCHOLSIM=<path> -DARGS="factor|--builtin|bogus" [-DEXPECT_EXIT=2]
#         [-DSTDOUT_REGEX=...] [-DSTDERR_REGEX=...] [-DSTDOUT_EMPTY=ON]
#         [-DJSON_KEYS="n|nnz_L|..."] [-DMAX_RESIDUAL=1e-10] [-DJSON_RANGE="key|low|high"]
#         [-DABSENT_PATH=<path>] -P run_cholsim.cmake
#
# ARGS and JSON_KEYS are '|'-separated (a ';' would be split by add_test before we see it).
# With JSON_KEYS, stdout must be exactly one JSON object holding every key; with MAX_RESIDUAL
# its `residual` must be below that bound; with JSON_RANGE its number `key` must lie in
# [low, high]. ABSENT_PATH must not exist after the run (removed before it, so that an earlier
# run's leftovers do not count): bad input creates no output folder. CTest's PASS_REGULAR_EXPRESSION cannot be used for
# these checks because it ignores the exit code.
cmake_minimum_required(VERSION 3.25)

if(NOT DEFINED CHOLSIM OR NOT DEFINED ARGS)
  message(FATAL_ERROR "run_cholsim.cmake needs -DCHOLSIM=<binary> and -DARGS=<a|b|c>")
endif()
if(NOT DEFINED EXPECT_EXIT)
  set(EXPECT_EXIT 0)
endif()

if(DEFINED ABSENT_PATH)
  file(REMOVE_RECURSE "${ABSENT_PATH}")
endif()
string(REPLACE "|" ";" arguments "${ARGS}")
execute_process(COMMAND "${CHOLSIM}" ${arguments}
  RESULT_VARIABLE exit_code OUTPUT_VARIABLE out ERROR_VARIABLE err)

set(failures "")
macro(fail what)
  string(APPEND failures "  - ${what}\n")
endmacro()

if(NOT "${exit_code}" STREQUAL "${EXPECT_EXIT}")
  fail("exit code ${exit_code}, expected ${EXPECT_EXIT}")
endif()
if(DEFINED STDOUT_REGEX AND NOT out MATCHES "${STDOUT_REGEX}")
  fail("stdout does not match '${STDOUT_REGEX}'")
endif()
if(DEFINED STDERR_REGEX AND NOT err MATCHES "${STDERR_REGEX}")
  fail("stderr does not match '${STDERR_REGEX}'")
endif()
if(STDOUT_EMPTY AND NOT out STREQUAL "")
  fail("stdout is not empty")
endif()
if(DEFINED ABSENT_PATH AND EXISTS "${ABSENT_PATH}")
  fail("${ABSENT_PATH} exists; expected no output")
endif()

if(DEFINED JSON_KEYS)
  string(STRIP "${out}" json)
  # string(JSON) ignores text after the first value, so check the object spans all of stdout.
  if(NOT json MATCHES "^{.*}$")
    fail("stdout is not exactly one JSON object")
  endif()
  string(JSON json_type ERROR_VARIABLE json_error TYPE "${json}")
  if(json_error OR NOT json_type STREQUAL "OBJECT")
    fail("stdout does not parse as a JSON object: ${json_error}")
  else()
    string(REPLACE "|" ";" keys "${JSON_KEYS}")
    foreach(key IN LISTS keys)
      string(JSON value ERROR_VARIABLE key_error GET "${json}" "${key}")
      if(key_error)
        fail("JSON has no key '${key}'")
      endif()
    endforeach()
    if(DEFINED MAX_RESIDUAL)
      string(JSON residual ERROR_VARIABLE residual_error GET "${json}" residual)
      if(residual_error)
        fail("JSON has no residual")
      elseif(NOT residual LESS MAX_RESIDUAL)
        fail("residual ${residual} is not below ${MAX_RESIDUAL}")
      else()
        message(STATUS "residual ${residual} < ${MAX_RESIDUAL}")
      endif()
    endif()
    if(DEFINED JSON_RANGE)
      string(REPLACE "|" ";" range "${JSON_RANGE}")
      list(GET range 0 range_key)
      list(GET range 1 range_low)
      list(GET range 2 range_high)
      string(JSON range_type ERROR_VARIABLE range_error TYPE "${json}" "${range_key}")
      if(range_error OR NOT range_type STREQUAL "NUMBER")
        fail("JSON has no number '${range_key}'")
      else()
        string(JSON range_value GET "${json}" "${range_key}")
        if(range_value LESS range_low OR range_value GREATER range_high)
          fail("${range_key} = ${range_value} is not in [${range_low}, ${range_high}]")
        else()
          message(STATUS "${range_key} = ${range_value} in [${range_low}, ${range_high}]")
        endif()
      endif()
    endif()
  endif()
endif()

if(failures)
  message(FATAL_ERROR "cholsim ${ARGS}\n${failures}--- stdout ---\n${out}--- stderr ---\n${err}")
endif()
