# STAGE=build: installs BUILD_DIR to WORK_DIR/prefix and builds EXAMPLE_DIR
# against it (with -DMY_NORMS_WITH_BROKEN=ON). STAGE=run: runs the example's
# ctest (CTEST: the ctest binary) and checks what a user sees.
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/../support/run_checked.cmake)

set(example_build ${WORK_DIR}/build)
if(STAGE STREQUAL "build")
  file(REMOVE_RECURSE ${WORK_DIR})
  run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix)
  run(${CMAKE_COMMAND} -S ${EXAMPLE_DIR} -B ${example_build} -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix
      -DMY_NORMS_WITH_BROKEN=ON "-DCMAKE_CXX_FLAGS=${EXAMPLE_FLAGS}" "-DCMAKE_C_FLAGS=${EXAMPLE_FLAGS}"
      "-DCMAKE_EXE_LINKER_FLAGS=${EXAMPLE_FLAGS}" "-DCMAKE_MODULE_LINKER_FLAGS=${EXAMPLE_FLAGS}")
  run(${CMAKE_COMMAND} --build ${example_build})
  return()
endif()

# Seeds are fixed by the example (SEED 7, RapidCheck's own default) unless the
# caller sets them; the nested ctest must not inherit a shard of ours.
set(ENV{NORMCHECK_REPLAY_DIR} ${WORK_DIR}/replay)
unset(ENV{GTEST_SHARD_INDEX})
unset(ENV{GTEST_TOTAL_SHARDS})
file(REMOVE_RECURSE ${WORK_DIR}/replay ${example_build}/normcheck-findings)

# 1. The correct kernel: every test that is not `broken` passes, and they are
#    the ones the example registers (not zero tests passing vacuously).
execute_process(COMMAND ${CTEST} -LE broken --output-on-failure WORKING_DIRECTORY ${example_build}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the correct kernel's tests failed (ctest exit ${rc})")
endif()
foreach(test my_norms.check.shifted_rows.txt my_norms.fuzz my_norms.accuracy MyNorms.CentredRows MyNorms.ShiftedRows
             MyNorms.AffineAndOddWidth MyNormsProperty.WithinBoundOnAdversarialRows)
  expect_in("${out}" " ${test} ")
endforeach()
expect_in("${out}" "100% tests passed, 0 tests failed out of 7")

# 2. `ctest -L normcheck` selects the normcheck_add_kernel_test cases, and the
#    seed and the shard pass through the environment to `normcheck fuzz`.
execute_process(COMMAND ${CMAKE_COMMAND} -E env NORMCHECK_SEED=123 GTEST_SHARD_INDEX=1 GTEST_TOTAL_SHARDS=2
                        ${CTEST} -L normcheck -LE broken -V
                WORKING_DIRECTORY ${example_build} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "ctest -L normcheck failed (exit ${rc}):\n${out}${err}")
endif()
expect_in("${out}" "fuzz: seed 123 (--seed or NORMCHECK_SEED)")
expect_in("${out}" "shard 1/2")
expect_in("${out}" "100% tests passed, 0 tests failed out of 3")
# The accuracy baseline's rows are its seed's, whatever NORMCHECK_SEED says.
expect_in("${out}" "baseline: no figure got worse than ")
# `check --plugin` without --kernel runs the plugin's kernel, not ours.
expect_in("${out}" "my.layernorm_fwd ")
string(FIND "${out}" "layernorm_fwd.twopass" ours)
if(NOT ours EQUAL -1)
  message(FATAL_ERROR "check --plugin ran normcheck's own kernels too:\n${out}")
endif()

# 3. The broken kernel: each test fails, with a message a user can act on.
execute_process(COMMAND ${CTEST} -L broken --output-on-failure WORKING_DIRECTORY ${example_build}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(rc EQUAL 0)
  message(FATAL_ERROR "the broken kernel's tests passed")
endif()
string(REGEX MATCH "The following tests FAILED:.*" failed "${out}")
foreach(test my_norms_broken.check.shifted_rows.txt my_norms_broken.fuzz my_norms_broken.accuracy
             MyNorms.ShiftedRows.broken MyNormsProperty.WithinBoundOnAdversarialRows.broken)
  expect_in("${failed}" " - ${test} (Failed)")
endforeach()
# The broken kernel held to the correct one's accuracy baseline: the classes
# where the one-pass variance cancels got worse, and fail their bound.
expect_in("${out}" "the kernel's accuracy got worse than its baseline (exit 1)")
expect_in("${out}" "my.layernorm_fwd mean_sigma_10_1e3 rstd: error/bound ")
expect_in("${out}" "my.layernorm_fwd mean_sigma_10_1e3: ")
# normcheck_add_kernel_test: the exit code said in words, the finding, the replay.
expect_in("${out}" "normcheck found a defect in the kernel (exit 1)")
expect_in("${out}" "my.layernorm_fwd: accuracy")
expect_in("${out}" "reproduce: ")
expect_in("${out}" "replay: ")
# The GoogleTest assertion: the element, hex floats, the allowance, the replay.
expect_in("${out}" "my_layernorm_fwd_onepass (layernorm_fwd) on shifted(2, 1024, 1e4f)")
expect_in("${out}" "worst element: output ")
foreach(field "computed  0x" "exact     0x" "allowance 0x" "replay: the problem is saved in ")
  expect_in("${out}" "${field}")
endforeach()

# 4. The replay the assertion prints reproduces the failure: `normcheck check`
#    on the saved file with the broken plugin exits 1, with the correct one 0.
string(REGEX MATCH "normcheck check --input ([^\n ]+ShiftedRows[^\n ]+)" line "${out}")
set(file "${CMAKE_MATCH_1}")
if(NOT EXISTS "${file}")
  message(FATAL_ERROR "the assertion's replay file '${file}' does not exist")
endif()
set(normcheck ${WORK_DIR}/prefix/bin/normcheck)
execute_process(COMMAND ${normcheck} check --input ${file} --plugin ${example_build}/libmy_norms_broken_plugin.so
                RESULT_VARIABLE rc OUTPUT_VARIABLE replay_out ERROR_VARIABLE replay_err)
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "replaying ${file} on the broken plugin: expected exit 1, got ${rc}\n${replay_out}${replay_err}")
endif()
execute_process(COMMAND ${normcheck} check --input ${file} --plugin ${example_build}/libmy_norms_plugin.so
                RESULT_VARIABLE rc OUTPUT_VARIABLE replay_out ERROR_VARIABLE replay_err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "replaying ${file} on the correct plugin: expected exit 0, got ${rc}\n${replay_out}${replay_err}")
endif()

# 5. Exit 2 is reported as a refusal, not as a finding: a library that is not a plugin.
file(GLOB_RECURSE runner ${WORK_DIR}/prefix/*/NormcheckKernelTestRun.cmake)
execute_process(COMMAND ${CMAKE_COMMAND} -DNORMCHECK=${normcheck} -DMODE=check
                        -DINPUT=${EXAMPLE_DIR}/corpus/shifted_rows.txt "-DARGS=--plugin|${example_build}/libmy_norms.a"
                        -P ${runner}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "a refused plugin passed")
endif()
expect_in("${err}" "normcheck refused the run (exit 2")
expect_in("${err}" "plugin refused")
