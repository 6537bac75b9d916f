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

# expect_in(<text> <what>): fails the script, showing <text>, unless <what> is in it.
function(expect_in text what)
  string(FIND "${text}" "${what}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "expected '${what}' in:\n${text}")
  endif()
endfunction()
