# Runs one test of normcheck_add_kernel_test() (NormcheckKernelTest.cmake) and
# turns normcheck's exit code into the test's verdict, with a first line that
# says which it is:
#   0  pass;
#   1  a finding: the kernel broke its bound, crashed, hung, wrote out of bounds,
#      left an output unwritten, wrote its input or was nondeterministic; the
#      finding and the command that replays it are printed;
#   2  normcheck refused the run (bad usage, a refused plugin, an unreadable
#      corpus file): the reason is printed;
#   anything else: normcheck itself did not finish.
#   (MODE accuracy: 1 is a figure that got worse than the baseline's.)
# -DNORMCHECK=<binary> -DMODE=check|fuzz|accuracy -DARGS=<args joined by |>
# [-DINPUT=<file>] (check) [-DSEED=<s>] (fuzz; NORMCHECK_SEED in the environment wins)
# [-DDOMAIN=<text>] (both: --domain, the kernels' declared domain).
string(REPLACE "|" ";" args "${ARGS}")
if(DEFINED DOMAIN)
  list(APPEND args --domain "${DOMAIN}")
endif()
if(MODE STREQUAL "check")
  set(command "${NORMCHECK}" check --input "${INPUT}" ${args})
elseif(MODE STREQUAL "fuzz")
  set(command "${NORMCHECK}" fuzz ${args})
  if(NOT "${SEED}" STREQUAL "" AND "$ENV{NORMCHECK_SEED}" STREQUAL "")
    list(APPEND command --seed "${SEED}")
  endif()
elseif(MODE STREQUAL "accuracy")
  set(command "${NORMCHECK}" accuracy ${args})
else()
  message(FATAL_ERROR "NormcheckKernelTestRun.cmake: MODE must be check, fuzz or accuracy, got '${MODE}'")
endif()

list(JOIN command " " shown)
execute_process(COMMAND ${command} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
# The verdict first, then normcheck's own output verbatim (message() without a
# mode does not reflow it), then the test's end.
if(rc EQUAL 0)
  message("normcheck: pass\n  ${shown}\n${err}${out}")
  return()
elseif(rc EQUAL 1)
  if(MODE STREQUAL "accuracy")
    message("normcheck: the kernel's accuracy got worse than its baseline (exit 1)\n  ${shown}\n\n${err}${out}\n"
            "if the change is meant, rewrite the baseline: build the target <name>_update_baseline")
    message(FATAL_ERROR "normcheck: the kernel's accuracy got worse than its baseline (exit 1): see above")
  elseif(MODE STREQUAL "check")
    set(replay "replay: ${shown}")
  else()
    string(CONCAT replay "replay a finding with its `reproduce:` command; copy its input file into the "
                         "CORPUS directory to keep it as a regression test")
  endif()
  message("normcheck found a defect in the kernel (exit 1)\n  ${shown}\n\n${err}${out}\n${replay}\n")
  message(FATAL_ERROR "normcheck found a defect in the kernel (exit 1): see above")
elseif(rc EQUAL 2)
  message("normcheck refused the run (exit 2: bad usage or input, a refused plugin, or a kernel none of whose "
          "cases was judged)\n  ${shown}\n\n${err}${out}")
  message(FATAL_ERROR "normcheck refused the run (exit 2): see above")
else()
  message("normcheck did not finish (${rc})\n  ${shown}\n\n${err}${out}")
  message(FATAL_ERROR "normcheck did not finish (${rc}): see above")
endif()
