# A finding of `normcheck judge` replays on the kernel it came from: gen
# writes Llama's bf16 problems, HARNESS (judge_harness_broken: the C kernel of
# libv2_broken_llama_rounds_once.so run on the files) writes the outputs,
# judge finds a case (exit 1) and saves it as a problem file; `check` of that
# file with the plugin BROKEN gives the same finding, its worst element the
# same bits, and the correct plugin GOOD passes it.
set(spec "rmsnorm fwd dtype=bf16 gamma=bf16 round=xhat:bf16")
file(REMOVE_RECURSE ${WORK})
execute_process(COMMAND ${NORMCHECK} gen --spec ${spec} --cases 24 --seed 7 --out ${WORK} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gen: exit ${rc}")
endif()
execute_process(COMMAND ${HARNESS} ${WORK} broken.llama_rounds_once BF16 RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the harness: exit ${rc}")
endif()
execute_process(COMMAND ${NORMCHECK} judge ${WORK} --json RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message(STATUS "judge:\n${out}${err}")
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "judge: exit ${rc}, expected 1 (a finding)")
endif()
string(JSON n LENGTH "${out}" cases)
math(EXPR last "${n} - 1")
set(problem_file "")
foreach(i RANGE ${last})
  string(JSON verdict GET "${out}" cases ${i} verdict)
  if(verdict STREQUAL "fail" AND problem_file STREQUAL "")
    string(JSON problem_file GET "${out}" cases ${i} problem_file)
    string(JSON label GET "${out}" cases ${i} label)
    string(JSON computed GET "${out}" cases ${i} worst computed)
  endif()
endforeach()

execute_process(COMMAND ${NORMCHECK} check --input ${problem_file} --plugin ${BROKEN} --json
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message(STATUS "check with the broken plugin:\n${out}${err}")
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "check of ${problem_file} with ${BROKEN}: exit ${rc}, expected 1")
endif()
string(JSON check_label GET "${out}" kernels 0 label)
string(JSON check_computed GET "${out}" kernels 0 worst computed)
if(NOT check_label STREQUAL label OR NOT check_computed STREQUAL computed)
  message(FATAL_ERROR "judge found ${label} at ${computed}, check of its problem file ${check_label} at ${check_computed}")
endif()

execute_process(COMMAND ${NORMCHECK} check --input ${problem_file} --plugin ${GOOD} --kernel rmsnorm.llama
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "check of ${problem_file} with rmsnorm.llama: exit ${rc}, expected 0\n${out}${err}")
endif()
