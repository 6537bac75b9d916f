# normcheck_add_kernel_test (cmake/NormcheckKernelTest.cmake) on a version-2
# plugin: configures kernel_test_v2/ against this build's normcheck, runs its
# ctest, and checks that
#   v2.fuzz          (examples/plugin/v2_norms.c, every kernel by its spec) passes;
#   v2_broken.fuzz   (its Llama RMSNorm twin that rounds once, declaring the
#                    original's spec) fails with its policy_mismatch finding.
# -DNORMCHECK -DPLUGIN -DBROKEN -DSOURCE_DIR (the project) -DCMAKE_DIR (cmake/) -DWORK_DIR -DCTEST
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/../support/run_checked.cmake)  # run_fuzz_tests, expect_in

run_fuzz_tests(NAMES v2 v2_broken
               ARGS -DNORMCHECK_EXECUTABLE=${NORMCHECK} -DNORMCHECK_CMAKE_DIR=${CMAKE_DIR} -DPLUGIN=${PLUGIN} -DBROKEN=${BROKEN})
if(NOT rc_v2 EQUAL 0)
  message(FATAL_ERROR "the version-2 example plugin was flagged")
endif()
expect_in("${out_v2}" "normcheck: pass")
if(rc_v2_broken EQUAL 0)
  message(FATAL_ERROR "the broken twin passed: the test cannot tell the two apart")
endif()
expect_in("${out_v2_broken}" "normcheck found a defect in the kernel (exit 1)")
expect_in("${out_v2_broken}" "broken.llama_rounds_once: policy_mismatch")
