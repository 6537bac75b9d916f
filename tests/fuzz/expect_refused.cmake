# `normcheck list --plugin PLUGIN` must refuse the library: exit 2, nothing on
# stdout, and REASON in the message on stderr.
execute_process(COMMAND ${NORMCHECK} list --plugin ${PLUGIN}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "expected exit 2, got ${rc}\n${err}")
endif()
if(NOT out STREQUAL "")
  message(FATAL_ERROR "expected nothing on stdout, got:\n${out}")
endif()
string(FIND "${err}" "${REASON}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "stderr does not give the reason '${REASON}':\n${err}")
endif()
