# What find_package(normcheck) gives a user's own test suite (docs/in-your-tests.md):
#   - normcheck_add_kernel_test() (NormcheckKernelTest.cmake, always);
#   - component gtest: normcheck::normcheck_gtest, the header-only GoogleTest
#     assertions <normcheck/gtest.h> (needs GTest, not RapidCheck);
#   - component generators: normcheck::normcheck_generators, the adversarial
#     RapidCheck generators <normcheck/rc/generators.h> (needs rapidcheck).
# Each component's targets sit in their own export file, loaded only when asked
# for, so find_package(normcheck) needs neither GTest nor RapidCheck.
set(normcheck_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/normcheck)

install(FILES ${PROJECT_SOURCE_DIR}/cmake/NormcheckKernelTest.cmake
              ${PROJECT_SOURCE_DIR}/cmake/NormcheckKernelTestRun.cmake
        DESTINATION ${normcheck_cmake_dir})

install(TARGETS normcheck_gtest EXPORT normcheckGTestTargets)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/testing/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT normcheckGTestTargets NAMESPACE normcheck:: DESTINATION ${normcheck_cmake_dir})

install(TARGETS normcheck_generators normcheck_row_families EXPORT normcheckGeneratorsTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${PROJECT_SOURCE_DIR}/properties/generators.h ${PROJECT_SOURCE_DIR}/properties/row_families.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/normcheck/rc)
install(EXPORT normcheckGeneratorsTargets NAMESPACE normcheck:: DESTINATION ${normcheck_cmake_dir})
