# Helpers of the `cmake -P` test scripts.
#
# run(<command> [args...]): runs a command from a `cmake -P` test script and
# fails the script with the command, its exit code and its output when it does
# not exit 0. Shared by the scripts that install normcheck and build a project
# against it (tests/cmake, tests/fuzz, tests/testing).
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
endfunction()

# run_json(<what> <key> <command> [args...]): runs a command that prints one
# JSON document (normcheck's <what> --json), shows its stderr and stdout, and
# fails the script unless the document has the array <key>. Sets rc (the exit
# code), out (stdout) and n_<key> (the array's length) in the caller.
macro(run_json what key)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message(STATUS "stderr:\n${err}")
  message(STATUS "stdout:\n${out}")
  string(JSON n_${key} ERROR_VARIABLE json_error LENGTH "${out}" ${key})
  if(json_error)
    message(FATAL_ERROR "${what} did not print JSON with ${key} (exit ${rc}): ${json_error}")
  endif()
endmacro()

# expect_in(<text> <what>): fails the script, showing <text>, unless <what> is in it.
function(expect_in text what)
  string(FIND "${text}" "${what}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "expected '${what}' in:\n${text}")
  endif()
endfunction()

# run_fuzz_tests(NAMES <name>... ARGS <configure arg>...): configures the
# project SOURCE_DIR afresh in WORK_DIR with the ARGS (a user's project of
# normcheck_add_kernel_test calls, tests/testing/kernel_test_*), then runs its
# <name>.fuzz tests one by one without the seed and sharding variables of the
# environment (each test's SEED holds), printing each. Sets rc_<name> and
# out_<name> (stdout and stderr) in the caller.
macro(run_fuzz_tests)
  cmake_parse_arguments(RFT "" "" "NAMES;ARGS" ${ARGN})
  file(REMOVE_RECURSE ${WORK_DIR})
  run(${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR} ${RFT_ARGS})
  unset(ENV{NORMCHECK_SEED})
  unset(ENV{GTEST_SHARD_INDEX})
  unset(ENV{GTEST_TOTAL_SHARDS})
  foreach(name IN LISTS RFT_NAMES)
    execute_process(COMMAND ${CTEST} -R "^${name}\\.fuzz$" -V WORKING_DIRECTORY ${WORK_DIR}
                    RESULT_VARIABLE rc_${name} OUTPUT_VARIABLE out_${name} ERROR_VARIABLE err_${name})
    string(APPEND out_${name} "${err_${name}}")
    message("${name}:\n${out_${name}}")
  endforeach()
endmacro()
