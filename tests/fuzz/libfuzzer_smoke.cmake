# Builds the libFuzzer target with scripts/oss_fuzz_build.sh (clang,
# -fsanitize=fuzzer, OSS-Fuzz's variables), runs it on our kernels for a
# bounded time (no finding expected), then on a broken plugin (the tail bug),
# where it must stop with that kernel's failure: the negative control; and the
# readers' entry point for the same time, with no failure expected.
file(REMOVE_RECURSE ${WORK_DIR})
set(ENV{CC} clang)
set(ENV{CXX} clang++)
set(ENV{CFLAGS} "-O1 -g -fsanitize=fuzzer-no-link")
set(ENV{CXXFLAGS} "-O1 -g -fsanitize=fuzzer-no-link")
set(ENV{LIB_FUZZING_ENGINE} "-fsanitize=fuzzer")
set(ENV{OUT} ${WORK_DIR}/out)
execute_process(COMMAND ${SOURCE_DIR}/scripts/oss_fuzz_build.sh RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "oss_fuzz_build.sh failed (${rc}):\n${out}\n${err}")
endif()
set(fuzzer ${WORK_DIR}/out/normcheck_fuzzer)

# Runs the entry point `name` for SECONDS on a corpus of its own; any failure
# it finds fails the test (`what` says what it ran on).
function(run_expecting_no_failure name what)
  file(MAKE_DIRECTORY ${WORK_DIR}/corpus_${name})
  execute_process(COMMAND ${WORK_DIR}/out/${name} -max_total_time=${SECONDS} -seed=1 -rss_limit_mb=4096
                    ${WORK_DIR}/corpus_${name}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${name} found a failure in ${what} (exit ${rc}):\n${err}")
  endif()
  string(REGEX MATCH "Done [0-9]+ runs" done "${err}")
  message(STATUS "${what}: ${done} in ${SECONDS} s")
endfunction()
run_expecting_no_failure(normcheck_fuzzer "our kernels")
# The readers' entry point (fuzz/libfuzzer/readers.h): every input read or refused.
run_expecting_no_failure(normcheck_readers_fuzzer "the readers")

set(ENV{NORMCHECK_FUZZ_PLUGIN} ${PLUGIN})
execute_process(COMMAND ${fuzzer} -max_total_time=${SECONDS} -seed=1 -artifact_prefix=${WORK_DIR}/
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(FIND "${err}" "normcheck_fuzzer: broken.tail_bug fails" at)
if(rc EQUAL 0 OR at EQUAL -1)
  message(FATAL_ERROR "the fuzzer did not catch the tail bug (exit ${rc}):\n${err}")
endif()
