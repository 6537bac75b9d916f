# S1-S5, A1-A3 (seeds 001, 002, 004): one claim per s*/a* file, the exact tensor
# they share (the one Boost.Multiprecision unit of the group besides S4/S5) and
# the kernel-form measurement.
set(NORMCHECK_CLAIMS_SEMANTICS_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/exact_tensor.cpp
  ${CMAKE_CURRENT_LIST_DIR}/kernel_forms.cpp
  ${CMAKE_CURRENT_LIST_DIR}/semantics_ops.cpp
  ${CMAKE_CURRENT_LIST_DIR}/s1_normalized_shape.cpp
  ${CMAKE_CURRENT_LIST_DIR}/s2_std_plus_eps.cpp
  ${CMAKE_CURRENT_LIST_DIR}/s3_biased_variance.cpp
  ${CMAKE_CURRENT_LIST_DIR}/s4_forward_rewrite.cpp
  ${CMAKE_CURRENT_LIST_DIR}/s5_backward_formula.cpp
  ${CMAKE_CURRENT_LIST_DIR}/a1_layernorm_as_instancenorm.cpp
  ${CMAKE_CURRENT_LIST_DIR}/a2_layernorm_axes.cpp
  ${CMAKE_CURRENT_LIST_DIR}/a3_manual_vs_library.cpp
  ${CMAKE_CURRENT_LIST_DIR}/a3_seed002_input.cpp)
# A3 regenerates seed 002's input with libtorch when the build has it, through
# the torch adapter module loaded on first use (CMakeLists.txt links its loader).
if(NORMCHECK_WITH_TORCH)
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/a3_seed002_input.cpp
    PROPERTIES COMPILE_DEFINITIONS NORMCHECK_HAVE_TORCH=1)
endif()
