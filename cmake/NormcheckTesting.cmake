# normcheck_add_test(NAME <target> SOURCES <files...> [LIBS <targets...>] LABELS <labels...>
#                    [TIMEOUT <seconds>])
# A GoogleTest binary whose tests ctest discovers one by one, with labels
# (unit, properties, claims, nightly). RC_PARAMS and NORMCHECK_SEED pass through
# the environment unchanged.
function(normcheck_add_test)
  cmake_parse_arguments(T "" "NAME;TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 600)
  endif()
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} GTest::gtest GTest::gtest_main)
  # tests/support: what tests share (seed, kernel rows, describing an evaluation, the CLI).
  target_include_directories(${T_NAME} PRIVATE ${PROJECT_SOURCE_DIR}/tests/support)
  gtest_discover_tests(${T_NAME}
    PROPERTIES LABELS "${T_LABELS}" TIMEOUT ${T_TIMEOUT}
    DISCOVERY_TIMEOUT 120)
endfunction()

# normcheck_uses_cli(<test target>): the test runs build/bin/normcheck end to end
# through tests/support/normcheck_cli.h.
function(normcheck_uses_cli target)
  target_compile_definitions(${target} PRIVATE NORMCHECK_BINARY="$<TARGET_FILE:normcheck>")
  add_dependencies(${target} normcheck)
endfunction()
