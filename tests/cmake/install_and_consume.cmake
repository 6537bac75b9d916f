# Installs the build tree to a scratch prefix, then configures, builds and runs
# tests/cmake/consumer against it with find_package(normcheck), and checks that
# the installed libraries export no internal symbols.
file(REMOVE_RECURSE ${WORK_DIR})
include(${CMAKE_CURRENT_LIST_DIR}/../support/run_checked.cmake)
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} -S ${CONSUMER_DIR} -B ${WORK_DIR}/build -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix
    "-DCMAKE_CXX_FLAGS=${CONSUMER_FLAGS}" "-DCMAKE_C_FLAGS=${CONSUMER_FLAGS}"
    "-DCMAKE_EXE_LINKER_FLAGS=${CONSUMER_FLAGS}")
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run(${WORK_DIR}/build/consumer)

# Internal namespaces stay inside the libraries: only include/normcheck/'s API
# is a contract. The pattern list is what the sources declare internal.
file(GLOB libraries ${WORK_DIR}/prefix/lib*/libnormcheck_*.so ${WORK_DIR}/prefix/lib*/*/libnormcheck_*.so)
if(NOT libraries)
  message(FATAL_ERROR "no installed libnormcheck_*.so under ${WORK_DIR}/prefix")
endif()
foreach(library IN LISTS libraries)
  execute_process(COMMAND nm -DC --defined-only ${library} OUTPUT_VARIABLE symbols RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "nm failed on ${library}")
  endif()
  string(REGEX MATCHALL "[^\n]*normcheck::(mp|fast)::[^\n]*" internal "${symbols}")
  if(internal)
    list(LENGTH internal count)
    list(GET internal 0 first)
    message(FATAL_ERROR "${library} exports ${count} internal symbols, e.g. ${first}")
  endif()
endforeach()
