# Nothing judged is never a pass (docs/cli.md): every door on a plugin whose
# cases are all declined (unjudged_norms.c). -DNORMCHECK= -DPLUGIN= -DWORK=
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(bias "unjudged.rmsnorm_bwd_bias")
set(acc "unjudged.rmsnorm_fwd_acc")
set(reason_bias "evaluate() judges no RMSNorm backward with 'bias'")
set(reason_acc "evaluate() judges no forward spec with 'acc='")

# Runs the normcheck command ARGN and requires exit RC and each of the texts
# in EXPECT (a list) in its stdout or stderr.
function(expect rc)
  cmake_parse_arguments(E "" "" "EXPECT" ${ARGN})
  execute_process(COMMAND ${NORMCHECK} ${E_UNPARSED_ARGUMENTS} RESULT_VARIABLE got OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT got EQUAL rc)
    message(FATAL_ERROR "normcheck ${E_UNPARSED_ARGUMENTS}: exit ${got}, expected ${rc}\nstdout:\n${out}\nstderr:\n${err}")
  endif()
  foreach(text IN LISTS E_EXPECT)
    string(FIND "${out}${err}" "${text}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "normcheck ${E_UNPARSED_ARGUMENTS}: no '${text}' in\nstdout:\n${out}\nstderr:\n${err}")
    endif()
  endforeach()
endfunction()

# list and the loader say it at load
expect(0 list --plugin ${PLUGIN}
  EXPECT "not judged: ${reason_bias}" "normcheck: warning: " "kernel '${bias}': ${reason_bias}")
# fuzz: both kernels, every case declined
expect(2 fuzz --plugin ${PLUGIN} --cases 40 --seed 1 --corpus ${WORK}/corpus
  EXPECT "normcheck: ${bias}: nothing judged: declined 40 of 40 cases: ${reason_bias}"
         "normcheck: ${acc}: nothing judged: declined 40 of 40 cases: ${reason_acc}")
expect(2 fuzz --plugin ${PLUGIN} --cases 40 --seed 1 --corpus ${WORK}/corpus --json
  EXPECT "\"declined\": 40" "\"judged\": 0")
# check on a row file: each plugin kernel
file(WRITE ${WORK}/rows.txt "1 2 3 4\n-0.5 0.25 8 1\n")
expect(2 check --input ${WORK}/rows.txt --plugin ${PLUGIN}
  EXPECT "normcheck: ${bias}: nothing judged: declined 2 of 2 rows: ${reason_bias}"
         "normcheck: ${acc}: nothing judged: declined 2 of 2 rows: ${reason_acc}")
# identify: a forward kernel whose every problem is declined
expect(2 identify --plugin ${PLUGIN} --kernel ${acc} --cases 6
  EXPECT "normcheck: ${acc}: nothing judged: declined 6 of 6 problems: ${reason_acc}")
