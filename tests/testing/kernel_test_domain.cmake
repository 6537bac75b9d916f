# normcheck_add_kernel_test(... DOMAIN <text>) (cmake/NormcheckKernelTest.cmake):
# configures kernel_test_domain/ against this build's normcheck and the
# flushed-squares plugin, runs its ctest, and checks that
#   declared.fuzz    (DOMAIN "eps>=1e-6 ...") passes: the kernel breaks only at eps = 0;
#   undeclared.fuzz  (no DOMAIN, the same kernel and cases) fails with a finding;
#   malformed.fuzz   (DOMAIN "eps>=-1") fails with normcheck's refusal (exit 2).
# -DNORMCHECK -DPLUGIN -DSOURCE_DIR (the project) -DCMAKE_DIR (cmake/) -DWORK_DIR -DCTEST
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/../support/run_checked.cmake)  # run_fuzz_tests, expect_in

run_fuzz_tests(NAMES declared undeclared malformed
               ARGS -DNORMCHECK_EXECUTABLE=${NORMCHECK} -DNORMCHECK_CMAKE_DIR=${CMAKE_DIR} -DPLUGIN=${PLUGIN})
if(NOT rc_declared EQUAL 0)
  message(FATAL_ERROR "the kernel that declares eps>=1e-6 was flagged")
endif()
expect_in("${out_declared}" "normcheck: pass")
expect_in("${out_declared}" "--domain eps>=1e-6 |x|<=2^62/sqrt(d)")
if(rc_undeclared EQUAL 0)
  message(FATAL_ERROR "the same kernel without DOMAIN passed: the test cannot tell the two apart")
endif()
expect_in("${out_undeclared}" "normcheck found a defect in the kernel (exit 1)")
if(rc_malformed EQUAL 0)
  message(FATAL_ERROR "a malformed DOMAIN passed")
endif()
expect_in("${out_malformed}" "normcheck refused the run (exit 2")
expect_in("${out_malformed}" "'eps>=-1'")
