# normcheck_add_kernel_test(): a user's kernel, built as a normcheck plugin
# (normcheck/plugin.h), under normcheck's checks in the user's own ctest run.
# find_package(normcheck) includes this file (docs/in-your-tests.md).
#
#   normcheck_add_kernel_test(NAME <name> PLUGIN <target or path>
#     [CORPUS <dir>]                  every file at the top of <dir>: a row file or problem file
#     [FUZZ_CASES <n> | FUZZ_SECONDS <s>]  the campaign's budget (default: normcheck fuzz's, 10 s)
#     [SEED <s>]                      the campaign's seed when NORMCHECK_SEED is not set
#     [KERNELS <name>...]             only these kernels of the plugin (default: all of them)
#     [DOMAIN <text>]                 the kernels' declared domain, e.g. "eps>=1e-6 d=1..65536 |x|<=1e4"
#                                     (normcheck's text form, docs/plugins.md): problems outside it
#                                     are declined, limits rather than findings; its terms replace
#                                     those the plugin declares (normcheck_plugin_domain)
#     [TIMEOUT_MS <ms>]               a kernel call longer than this is a hang (normcheck's default 2000)
#     [BASELINE <file> [WORSE_BY <x>]] the kernels' accuracy baseline (`normcheck accuracy
#                                     --update-baseline <file>` writes it): a figure that grows
#                                     past <x> times its value there fails (default 1: any growth)
#     [EXTRA_ARGS <arg>...]           more options for both commands, e.g. --tolerance-ulp 4
#     [TIMEOUT <s>]                   ctest's timeout of each test
#     [LABELS <label>...])            besides the label `normcheck`
#
# It builds nothing. It registers, labelled `normcheck` and LABELS:
#   <name>.check.<file>  `normcheck check --plugin <lib> --input <file>` per corpus file
#   <name>.fuzz          `normcheck fuzz --plugin <lib> --cases/--seconds ...`, its
#                        findings saved under <build dir>/normcheck-findings/<name> and
#                        replayed first by the next run
#   <name>.accuracy      with BASELINE: `normcheck accuracy --plugin <lib> --check-baseline
#                        <file> --worse-by <x>`, each kernel's figures on every input
#                        class's realistic rows held to the file's
# and with BASELINE the build target <name>_update_baseline, which rewrites the
# file from the kernels as they are now (`cmake --build . --target <name>_update_baseline`).
# A test passes when normcheck exits 0, fails with the finding printed when it
# exits 1, and fails with the reason when it exits 2 (bad usage, a refused
# plugin). NORMCHECK_SEED, GTEST_SHARD_INDEX and GTEST_TOTAL_SHARDS pass
# through the environment to `normcheck fuzz`, which honours them.
#
# The normcheck binary: normcheck::normcheck (an imported executable the package
# defines), or NORMCHECK_EXECUTABLE when set.

set(_normcheck_kernel_test_runner "${CMAKE_CURRENT_LIST_DIR}/NormcheckKernelTestRun.cmake")

# One test `test`: the runner with -DNORMCHECK=<normcheck> and the definitions
# that follow, labelled `labels`, with ctest's TIMEOUT `timeout` unless empty.
function(_normcheck_kernel_test_add test normcheck labels timeout)
  add_test(NAME ${test}
    COMMAND ${CMAKE_COMMAND} "-DNORMCHECK=${normcheck}" ${ARGN} -P "${_normcheck_kernel_test_runner}")
  set_tests_properties(${test} PROPERTIES LABELS "${labels}")
  if(timeout)
    set_tests_properties(${test} PROPERTIES TIMEOUT ${timeout})
  endif()
endfunction()

function(normcheck_add_kernel_test)
  cmake_parse_arguments(NKT "" "NAME;PLUGIN;CORPUS;FUZZ_CASES;FUZZ_SECONDS;SEED;TIMEOUT_MS;TIMEOUT;DOMAIN;BASELINE;WORSE_BY"
                        "KERNELS;EXTRA_ARGS;LABELS" ${ARGN})
  if(NKT_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "normcheck_add_kernel_test: unknown arguments: ${NKT_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT NKT_NAME OR NOT NKT_PLUGIN)
    message(FATAL_ERROR "normcheck_add_kernel_test: NAME and PLUGIN are required")
  endif()
  if(DEFINED NKT_WORSE_BY AND NOT DEFINED NKT_BASELINE)
    message(FATAL_ERROR "normcheck_add_kernel_test(${NKT_NAME}): WORSE_BY is the factor of a BASELINE; give the BASELINE")
  endif()
  if(DEFINED NKT_FUZZ_CASES AND DEFINED NKT_FUZZ_SECONDS)
    message(FATAL_ERROR "normcheck_add_kernel_test(${NKT_NAME}): give FUZZ_CASES or FUZZ_SECONDS, not both")
  endif()

  if(NORMCHECK_EXECUTABLE)
    set(normcheck "${NORMCHECK_EXECUTABLE}")
  elseif(TARGET normcheck::normcheck)
    set(normcheck "$<TARGET_FILE:normcheck::normcheck>")
  else()
    message(FATAL_ERROR "normcheck_add_kernel_test: no normcheck::normcheck target; set NORMCHECK_EXECUTABLE")
  endif()

  if(TARGET ${NKT_PLUGIN})
    set(plugin "$<TARGET_FILE:${NKT_PLUGIN}>")
  else()
    get_filename_component(plugin "${NKT_PLUGIN}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
  endif()

  # Arguments both commands take (joined with `;`, passed whole to the runner).
  set(common --plugin "${plugin}")
  foreach(kernel IN LISTS NKT_KERNELS)
    list(APPEND common --kernel ${kernel})
  endforeach()
  if(DEFINED NKT_TIMEOUT_MS)
    list(APPEND common --timeout-ms ${NKT_TIMEOUT_MS})
  endif()
  list(APPEND common ${NKT_EXTRA_ARGS})

  # The domain goes to the runner on its own (-DDOMAIN): its text holds `|`,
  # which joins the other arguments below.
  if(DEFINED NKT_DOMAIN)
    if(NKT_DOMAIN MATCHES ";")
      message(FATAL_ERROR "normcheck_add_kernel_test(${NKT_NAME}): DOMAIN takes one text, e.g. \"eps>=1e-6 d=1..4096\"")
    endif()
    set(domain_arg "-DDOMAIN=${NKT_DOMAIN}")
  else()
    set(domain_arg "")
  endif()

  set(labels normcheck ${NKT_LABELS})
  # `;` separates list elements in a -D value too: pass the lists with `|`.
  string(REPLACE ";" "|" common_arg "${common}")

  # The corpus: one test per file, so a failing file is named by its test.
  if(NKT_CORPUS)
    get_filename_component(corpus "${NKT_CORPUS}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    if(NOT IS_DIRECTORY "${corpus}")
      message(FATAL_ERROR "normcheck_add_kernel_test(${NKT_NAME}): CORPUS ${corpus} is not a directory")
    endif()
    file(GLOB files LIST_DIRECTORIES false CONFIGURE_DEPENDS "${corpus}/*")
    list(SORT files)
    foreach(file IN LISTS files)
      get_filename_component(base "${file}" NAME)
      if(base MATCHES "^\\.")
        continue()
      endif()
      _normcheck_kernel_test_add(${NKT_NAME}.check.${base} "${normcheck}" "${labels}" "${NKT_TIMEOUT}"
        -DMODE=check "-DINPUT=${file}" "-DARGS=${common_arg}" ${domain_arg})
    endforeach()
  endif()

  # The campaign.
  set(fuzz_args ${common})
  if(DEFINED NKT_FUZZ_CASES)
    list(APPEND fuzz_args --cases ${NKT_FUZZ_CASES})
  elseif(DEFINED NKT_FUZZ_SECONDS)
    list(APPEND fuzz_args --seconds ${NKT_FUZZ_SECONDS})
  endif()
  list(APPEND fuzz_args --corpus "${CMAKE_CURRENT_BINARY_DIR}/normcheck-findings/${NKT_NAME}")
  string(REPLACE ";" "|" fuzz_arg "${fuzz_args}")
  set(timeout "${NKT_TIMEOUT}")
  if(NOT NKT_TIMEOUT AND NKT_FUZZ_SECONDS MATCHES "^[0-9]+$")
    # The campaign keeps to its budget, shrinking included; the margin covers
    # loading, the corpus replay and a slow machine.
    math(EXPR timeout "${NKT_FUZZ_SECONDS} * 2 + 120")
  endif()
  _normcheck_kernel_test_add(${NKT_NAME}.fuzz "${normcheck}" "${labels}" "${timeout}"
    -DMODE=fuzz "-DSEED=${NKT_SEED}" "-DARGS=${fuzz_arg}" ${domain_arg})

  # The accuracy baseline: held to in a test, rewritten by a target.
  if(DEFINED NKT_BASELINE)
    get_filename_component(baseline "${NKT_BASELINE}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    set(worse_by 1)
    if(DEFINED NKT_WORSE_BY)
      set(worse_by "${NKT_WORSE_BY}")
    endif()
    set(accuracy_args ${common} --check-baseline "${baseline}" --worse-by ${worse_by})
    string(REPLACE ";" "|" accuracy_arg "${accuracy_args}")
    _normcheck_kernel_test_add(${NKT_NAME}.accuracy "${normcheck}" "${labels}" "${NKT_TIMEOUT}"
      -DMODE=accuracy "-DARGS=${accuracy_arg}" ${domain_arg})
    set(update_command "${normcheck}" accuracy ${common} --update-baseline "${baseline}")
    if(DEFINED NKT_DOMAIN)
      list(APPEND update_command --domain "${NKT_DOMAIN}")
    endif()
    add_custom_target(${NKT_NAME}_update_baseline COMMAND ${update_command} VERBATIM
      COMMENT "normcheck: rewriting the accuracy baseline ${baseline}")
    if(TARGET ${NKT_PLUGIN})
      add_dependencies(${NKT_NAME}_update_baseline ${NKT_PLUGIN})
    endif()
  endif()
endfunction()
