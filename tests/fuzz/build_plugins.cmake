# Installs the build tree to a scratch prefix and builds examples/plugin against
# it, as a user would; then removes the library that the
# refused_missing_dependency plugin needs, so that its dependency is missing.
file(REMOVE_RECURSE ${WORK_DIR})
include(${CMAKE_CURRENT_LIST_DIR}/../support/run_checked.cmake)
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} -S ${PLUGIN_SOURCE} -B ${WORK_DIR}/build -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
file(REMOVE ${WORK_DIR}/build/libvanishing_dependency.so)
