# The example plugin project (examples/plugin) built against an installed tree,
# then `normcheck fuzz` / `check` / `list` end to end on it:
#   fuzz_plugins_build           install + configure + build the plugins (fixture)
#   fuzz_example_clean           the correct example plugin: no finding, exit 0
#   fuzz_broken_<defect>         a broken plugin: the expected label, exit 1, and
#                                the printed reproduce command replays it (the
#                                one-pass variance: its classes and severity too)
#   fuzz_refused_<defect>        a library the loader refuses: exit 2, the reason
#   fuzz_fused_clean             the table's fused add + norm kernels: no finding
set(plugin_work ${CMAKE_CURRENT_BINARY_DIR}/plugins)
set(plugin_dir ${plugin_work}/build)
add_test(NAME fuzz_plugins_build
  COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${PROJECT_BINARY_DIR} -DWORK_DIR=${plugin_work}
    -DPLUGIN_SOURCE=${PROJECT_SOURCE_DIR}/examples/plugin -P ${CMAKE_CURRENT_SOURCE_DIR}/build_plugins.cmake)
set_tests_properties(fuzz_plugins_build PROPERTIES LABELS unit TIMEOUT 600 FIXTURES_SETUP fuzz_plugins)

# One fuzz run: PLUGIN, the LABEL expected among the findings ("" for none).
# Cases rather than seconds, with a fixed seed, so that the run is the same on
# any machine; 400 cases reach every defect's shapes (the generator's sizes
# cycle through d up to 2^16, and d > 100 odd or d = 0 mod 5 occur early).
# An optional fourth argument sets the cases (the hang plugin: every hanging
# case costs a timeout, and the first comes within 150 cases).
function(fuzz_test name plugin label)
  set(cases 400)
  if(ARGC GREATER 3)
    set(cases ${ARGV3})
  endif()
  add_test(NAME ${name}
    COMMAND ${CMAKE_COMMAND} -DNORMCHECK=$<TARGET_FILE:normcheck> -DPLUGIN=${plugin_dir}/${plugin}
      -DLABEL=${label} -DCASES=${cases} -DCORPUS=${CMAKE_CURRENT_BINARY_DIR}/corpus/${name}
      -P ${CMAKE_CURRENT_SOURCE_DIR}/expect_fuzz.cmake)
  set_tests_properties(${name} PROPERTIES LABELS unit TIMEOUT 300 FIXTURES_REQUIRED fuzz_plugins)
endfunction()

# fuzz_twins(PLUGIN LABEL [CASES n] DEFECT...): a fuzz_test, fuzz_<PLUGIN>_<DEFECT>,
# of each twin lib<PLUGIN>_<DEFECT>.so (examples/plugin/CMakeLists.txt,
# add_twins), each expecting LABEL.
# A twin whose defect is in its arithmetic (every label but the host's faults)
# also carries the label `twin`: it runs the same normcheck code as the clean
# plugin's run with other numbers, so the sanitizer pass of scripts/test.sh
# leaves it out. The faults (a write out of bounds, a crash, a hang, an
# unwritten output, a written input) exercise the kernel host's own paths and
# run under the sanitizer too.
set(host_fault_labels out_of_bounds unwritten_output crash hang writes_input)
function(fuzz_twins plugin label)
  cmake_parse_arguments(FT "" "CASES" "" ${ARGN})
  foreach(defect IN LISTS FT_UNPARSED_ARGUMENTS)
    fuzz_test(fuzz_${plugin}_${defect} lib${plugin}_${defect}.so "${label}" ${FT_CASES})
    if(NOT label IN_LIST host_fault_labels)
      set_property(TEST fuzz_${plugin}_${defect} APPEND PROPERTY LABELS twin)
    endif()
  endforeach()
endfunction()

fuzz_test(fuzz_example_clean libexample_norms.so "")
fuzz_twins(broken accuracy wrong_statistics tail_bug wrong_variance)
# The one-pass variance E[x^2] - mean^2: findings in two input classes or more,
# and on the |mean|/sigma 10-1e3 class's realistic rows at d = 768 hundreds of
# times its bound (docs/plugins.md, "Findings": tests/fuzz/test_campaign.cpp
# derives the 100). The example's two-pass kernel (fuzz_example_clean) has no
# finding, so no severity: the negative control.
add_test(NAME fuzz_broken_onepass_variance
  COMMAND ${CMAKE_COMMAND} -DNORMCHECK=$<TARGET_FILE:normcheck> -DPLUGIN=${plugin_dir}/libbroken_onepass_variance.so
    -DLABEL=accuracy -DCASES=400 -DCORPUS=${CMAKE_CURRENT_BINARY_DIR}/corpus/fuzz_broken_onepass_variance
    -DMIN_CLASSES=2 -DSEVERITY_CLASS=mean_sigma_10_1e3 "-DSEVERITY_ROW=d = 768, " -DSEVERITY_AT_LEAST=100
    -P ${CMAKE_CURRENT_SOURCE_DIR}/expect_fuzz.cmake)
set_tests_properties(fuzz_broken_onepass_variance PROPERTIES LABELS unit TIMEOUT 300 FIXTURES_REQUIRED fuzz_plugins)
fuzz_twins(broken out_of_bounds oob_write)
fuzz_twins(broken unwritten_output unwritten_row)
fuzz_twins(broken crash crash_on_shape)
fuzz_twins(broken hang CASES 150 hang)
fuzz_twins(broken nondeterministic nondeterministic)
fuzz_twins(broken writes_input writes_input)
fuzz_twins(broken batch_variant batch_variant)
# Caught within 30 cases (seed 7: three input classes), before the first
# many-rows batch, whose finding (shrunk, with its severity rows) costs about
# 30 s; the nightly run fuzzes 400 cases.
fuzz_twins(broken accuracy CASES 30 bwd_wrong_projection)
fuzz_test(fuzz_broken_bwd_wrong_projection_nightly libbroken_bwd_wrong_projection.so accuracy)
set_tests_properties(fuzz_broken_bwd_wrong_projection_nightly PROPERTIES LABELS nightly TIMEOUT 600)
fuzz_twins(broken unwritten_output bwd_skips_dbeta)

# The loader's refusals: `normcheck list --plugin X` exits 2 with the reason.
function(refused_test name plugin reason)
  add_test(NAME ${name}
    COMMAND ${CMAKE_COMMAND} -DNORMCHECK=$<TARGET_FILE:normcheck> -DPLUGIN=${plugin} -DREASON=${reason}
      -P ${CMAKE_CURRENT_SOURCE_DIR}/expect_refused.cmake)
  set_tests_properties(${name} PROPERTIES LABELS unit TIMEOUT 60 FIXTURES_REQUIRED fuzz_plugins)
endfunction()
refused_test(fuzz_refused_not_a_library ${PROJECT_SOURCE_DIR}/examples/plugin/example_norms.c "not a shared library")
refused_test(fuzz_refused_missing_file ${plugin_dir}/no_such_plugin.so "no such file")
refused_test(fuzz_refused_abi_version ${plugin_dir}/librefused_abi_version.so "ABI version 3, normcheck supports 1 and 2")
refused_test(fuzz_refused_missing_symbol ${plugin_dir}/librefused_missing_symbol.so "missing symbol normcheck_plugin_abi")
refused_test(fuzz_refused_no_kernels ${plugin_dir}/librefused_no_kernels.so "lists no kernels")
refused_test(fuzz_refused_duplicate ${plugin_dir}/librefused_duplicate.so "duplicate kernel name")
refused_test(fuzz_refused_null_fn ${plugin_dir}/librefused_null_fn.so "null function")
refused_test(fuzz_refused_unknown_op ${plugin_dir}/librefused_unknown_op.so "unknown op 42")
refused_test(fuzz_refused_missing_dependency ${plugin_dir}/librefused_missing_dependency.so
  "a library it depends on is missing")

# Version-2 plugins (examples/plugin/v2_norms.c: kernels by op spec, docs/ops.md).
# Each kernel is held to its declared rounding policy; the broken twins
# (broken/v2_broken.c) each round elsewhere or break a stage, and must be
# caught with the label that names it: policy_mismatch where another policy
# admits the outputs, accuracy (or a memory label) where none does.
fuzz_test(fuzz_v2_clean libv2_norms.so "")
fuzz_twins(v2_broken policy_mismatch
  stored_sum_reads_float_sum float_sum_reads_stored llama_rounds_once gemma_rounded_weight)
fuzz_twins(v2_broken accuracy skip_onepass_variance mixed_rounds_y)
fuzz_twins(v2_broken out_of_bounds stride_ignored)
# The defects of a fused add + norm written with vectors (normcheck's own:
# kernels/simd/fused_add_*; fuzz_fused_clean below is their negative
# control), each on the spec of SkipLayerNorm or of layernorm_fwd.hwy_add_bf16.
fuzz_twins(v2_broken accuracy tail_lanes_in_variance)
fuzz_twins(v2_broken batch_variant batch_variant_variance)
fuzz_twins(v2_broken policy_mismatch rounds_xhat)
fuzz_twins(v2_broken out_of_bounds residual_stride_ignored)
# A backward from y (Apex's memory_efficient): beta not subtracted, and
# Apex's own clamp of gamma to at least eps in magnitude.
fuzz_twins(v2_broken accuracy from_y_ignores_beta from_y_clamps_weight)
# Version-2 plugins whose y is quantized (examples/plugin/v2_quant_norms.c:
# vLLM's fused RMSNorm + fp8 / int8 kernels, docs/plugins.md "Quantized
# outputs"), and their twins (broken/v2_quant_broken.c), each declaring its
# original's spec: the bf16 rounding of y left out before the cast is
# policy_mismatch (the spec with y=f32 admits its codes); a scale, a division
# or a cast other than the declared one is quantization.
# Cases (seed 7; the smallest of 5, 10, 20, 40, ... at which the label
# appears, measured at seeds 1-5 and 7 with --cases at each): fp8_skips_y_rounding 20
# (5-40 over the seeds), fp8_amax_unrounded 80 (20-80), int8_ties_away 20
# (5-80), int8_clamps_at_127 5 (5); 400 cases, five times or more. The
# divided twin needs a t within a float ulp of a half-integer where y / s
# and y * fl32(1 / s) part: 160 at seed 7 (80-1280 over seeds 1-10), so 640.
# The clean plugin: no finding at 2000 cases on seeds 1-12.
fuzz_test(fuzz_v2_quant_clean libv2_quant_norms.so "")
fuzz_twins(v2_quant_broken policy_mismatch fp8_skips_y_rounding)
fuzz_twins(v2_quant_broken quantization fp8_amax_unrounded int8_ties_away int8_clamps_at_127)
fuzz_twins(v2_quant_broken quantization CASES 640 int8_divides)
# TransformerEngine's convention (rmsnorm_fp8.te_static: scale_apply=multiply,
# scale_inv and amax written): its scale read as a dequantizing one is
# quantization. A finite code or amax where a y is NaN hides the fault
# (docs/semantics.md, "Quantized outputs on a non-finite row"): vLLM's clamp
# writing 448 for a NaN without nan=clamp, and TE's fmaxf amax, are nan.
# Each is found within 5 cases at seeds 1-5 and 7. The clean plugin, with
# rmsnorm_fp8.te_static: no finding at 2000 cases on seeds 1-12.
fuzz_twins(v2_quant_broken quantization te_divides)
fuzz_twins(v2_quant_broken nan fp8_nan_clamped te_amax_skips_nan)
# Version-2 training backwards (examples/plugin/v2_train_norms.c: Liger-Kernel's
# llama mode, Apex's two-stage dgamma, flash-attention's fused add, Gemma's
# 1 + gamma; docs/plugins.md "Training backwards") and their twins
# (broken/v2_train_broken.c), each declaring its original's spec. Seed 7: the
# clean plugin has no finding at 100 cases (every case judged, about six of
# each kernel's a batch of 256-65536 rows: one in kManyRowsOneIn = 16,
# fuzz/case_gen.h); the statistics, dresidual and 1 + gamma twins are caught
# as accuracy within 30 cases (in 3 or 4 input classes), before the first
# batch. dgamma kept in one bf16 sum over the rows is caught only on a batch
# (the many_rows class) and is found within 60 cases; shrinking the batch and
# running its severity rows (N = 4096 and 32768 at d = 768) take about 30 s of
# that test. A many-rows finding costs each twin as much, so the CI runs stop
# before the first batch where they can; the nightly runs fuzz 400 cases of
# each (findings in up to a dozen classes, up to 140 s each on 2 loaded cores).
fuzz_test(fuzz_v2_train_clean libv2_train_norms.so "" 100)
fuzz_twins(v2_train_broken accuracy CASES 30 stats_in_bf16 forgets_dresidual forgets_one_plus)
# dgamma summed in bf16 over the rows stagnates once the sum's bf16 spacing
# passes its terms: the many-rows finding's severity row at N = 32768 must
# itself fail its bound (at least 1x), which a call timed out as a hang (the
# watchdog's limit grows with the call's elements) or a pass would not give.
add_test(NAME fuzz_v2_train_broken_dgamma_summed_in_bf16
  COMMAND ${CMAKE_COMMAND} -DNORMCHECK=$<TARGET_FILE:normcheck>
    -DPLUGIN=${plugin_dir}/libv2_train_broken_dgamma_summed_in_bf16.so -DLABEL=accuracy -DCASES=60
    -DCORPUS=${CMAKE_CURRENT_BINARY_DIR}/corpus/fuzz_v2_train_broken_dgamma_summed_in_bf16
    -DSEVERITY_CLASS=many_rows "-DSEVERITY_ROW=N = 32768, " -DSEVERITY_AT_LEAST=1
    -P ${CMAKE_CURRENT_SOURCE_DIR}/expect_fuzz.cmake)
set_tests_properties(fuzz_v2_train_broken_dgamma_summed_in_bf16 PROPERTIES LABELS unit TIMEOUT 300
  FIXTURES_REQUIRED fuzz_plugins)
fuzz_test(fuzz_v2_train_clean_nightly libv2_train_norms.so "")
set(train_nightly fuzz_v2_train_clean_nightly)
foreach(defect stats_in_bf16 forgets_dresidual forgets_one_plus dgamma_summed_in_bf16)
  fuzz_test(fuzz_v2_train_broken_${defect}_nightly libv2_train_broken_${defect}.so accuracy)
  list(APPEND train_nightly fuzz_v2_train_broken_${defect}_nightly)
endforeach()
set_tests_properties(${train_nightly} PROPERTIES LABELS nightly TIMEOUT 600)
set(fused_kernels "")
foreach(norm rmsnorm layernorm)
  foreach(variant add add_1pg)
    foreach(storage "" _bf16 _f16)
      list(APPEND fused_kernels ${norm}_fwd.hwy_${variant}${storage})
    endforeach()
  endforeach()
endforeach()
add_test(NAME fuzz_fused_clean
  COMMAND ${CMAKE_COMMAND} -DNORMCHECK=$<TARGET_FILE:normcheck> "-DKERNELS=${fused_kernels}" -DLABEL= -DCASES=400
    -DCORPUS=${CMAKE_CURRENT_BINARY_DIR}/corpus/fuzz_fused_clean -P ${CMAKE_CURRENT_SOURCE_DIR}/expect_fuzz.cmake)
set_tests_properties(fuzz_fused_clean PROPERTIES LABELS unit TIMEOUT 300)

# `normcheck identify`: the policy each example kernel follows, by name, and
# a twin that declares one policy and follows another.
# identify_test(NAME PLUGIN CASES KERNEL=PASS=NAME... [SPLITS KERNEL|found|TEXT...]):
# PLUGIN "" for the table's rows.
function(identify_test name plugin cases)
  cmake_parse_arguments(IT "" "" "SPLITS" ${ARGN})
  set(plugin_path "")
  if(plugin)
    set(plugin_path ${plugin_dir}/${plugin})
  endif()
  add_test(NAME ${name}
    COMMAND ${CMAKE_COMMAND} -DNORMCHECK=$<TARGET_FILE:normcheck> -DPLUGIN=${plugin_path} -DCASES=${cases}
      "-DEXPECT=${IT_UNPARSED_ARGUMENTS}" "-DSPLITS=${IT_SPLITS}" -P ${CMAKE_CURRENT_SOURCE_DIR}/expect_identify.cmake)
  set_tests_properties(${name} PROPERTIES LABELS unit TIMEOUT 300 FIXTURES_REQUIRED fuzz_plugins)
endfunction()
identify_test(identify_v2_norms libv2_norms.so 24
  "fused_add_rmsnorm.stored_sum=1=vLLM" "fused_add_rmsnorm.float_sum=1=FlashInfer" "rmsnorm.llama=1=LlamaRMSNorm"
  "rmsnorm.gemma=1=Gemma")
# the quantized kernels: each admitted by its declared policy, and consistent
# with one known policy, vLLM's (x r and y rounded to bf16, then cast; fused:
# the stored or the float32 sum). 48 problems leave each kernel its declared
# policy alone but for the fused dynamic one (the sum's rounding, under the
# coarse codes; at 32 two or three policies fit each), so 96.
identify_test(identify_v2_quant_norms libv2_quant_norms.so 96
  "rmsnorm_fp8.static=1=vLLM's quantizing" "fused_add_rmsnorm_fp8.static=1=vLLM's quantizing"
  "rmsnorm_int8.dynamic_token=1=vLLM's quantizing" "rmsnorm_fp8.dynamic_token=1=vLLM's quantizing"
  "rmsnorm_fp8.dynamic_token_ub=1=vLLM's quantizing" "fused_add_rmsnorm_fp8.dynamic_token=1=vLLM's quantizing"
  "rmsnorm_int8.static=1=vLLM's quantizing" "rmsnorm_fp8.te_static=1=TransformerEngine"
  # the casts told apart where a problem can split them: the other way of
  # applying the scale, by a static scale placed on a tie, or for a scale the
  # kernel computes by a row of 4096; a lowest code of -127 or -128 never
  # shows under a dynamic scale, which keeps |y / s| <= 127
  SPLITS "rmsnorm_int8.static|found|quant=int8 scale=static" "rmsnorm_int8.dynamic_token|found|scale_apply=divide"
  "rmsnorm_int8.dynamic_token|cannot|qmin=-127")
# the twins whose cast differs from the declared one only on a tie or where
# y / s and y fl32(1 / s) part: told apart by the problems drawn to split
# the casts (at 64 problems none of the drawn ones does)
identify_test(identify_v2_quant_broken_int8_divides libv2_quant_broken_int8_divides.so 64
  "broken.int8_divides=0=-" SPLITS "broken.int8_divides|found|scale_apply=divide")
# its twin that casts the float32 value: not admitted by its declared policy
# (the only one consistent is the same with y=f32, which has no known name)
identify_test(identify_v2_quant_skips_y_rounding libv2_quant_broken_fp8_skips_y_rounding.so 96
  "broken.fp8_skips_y_rounding=0=-")
identify_test(identify_v2_llama_rounds_once libv2_broken_llama_rounds_once.so 24 "broken.llama_rounds_once=0=one rounding")
# the training backwards: each consistent with its declared policy, the one
# known policy among the candidates that admit its outputs (the other
# candidates that admit them have no name).
identify_test(identify_v2_train_norms libv2_train_norms.so 24
  "rmsnorm_bwd.liger_llama=1=Liger-Kernel RMSNorm backward, llama mode" "layernorm_bwd.apex_two_stage=1=Apex"
  "rmsnorm_bwd.fused_add=1=flash-attention" "rmsnorm_bwd.gemma=1=gemma mode")
# Its twins (broken/v2_train_broken.c) break their bounds, not a policy: not
# their declared policy, and no known one (no candidate admits them at seed
# 11; the bf16 running sum shows on the one batch of many rows, case 5, among
# the 24 problems).
foreach(twin "stats_in_bf16=layernorm_bwd.apex_two_stage" "forgets_dresidual=rmsnorm_bwd.fused_add"
             "forgets_one_plus=rmsnorm_bwd.gemma" "dgamma_summed_in_bf16=rmsnorm_bwd.liger_llama")
  string(REPLACE "=" ";" parts "${twin}")
  list(GET parts 0 defect)
  list(GET parts 1 kernel)
  identify_test(identify_v2_train_broken_${defect} libv2_train_broken_${defect}.so 24 "${kernel}=0=-")
endforeach()
# the table's 16-bit rows: their op and dtype name one rounding at the output
# (64 problems: at 24, f16 LayerNorm's outputs also fit Apex's policy, whose
# xhat and gamma xhat roundings to f16's 11 bits a few rows tell apart). With
# libtorch, its bf16 backward is a row too: it sums dbeta in bf16 over the rows
# (docs/accuracy_backward.md), which no candidate policy admits, and identify
# exits 1 for it.
set(table_16bit "layernorm_fwd.hwy_bf16=1=one rounding" "layernorm_fwd.hwy_f16=1=one rounding"
  "rmsnorm_fwd.hwy_bf16=1=one rounding" "rmsnorm_fwd.hwy_f16=1=one rounding")
if(NORMCHECK_WITH_TORCH)
  list(APPEND table_16bit "layernorm_bwd.torch_bf16=0=-")
endif()
identify_test(identify_table_16bit "" 64 ${table_16bit})

# `normcheck judge`'s finding on a harness's files replays with `check` on the
# plugin whose C kernel the harness ran (tests/tools/normcheck/judge_harness.cpp).
add_test(NAME judge_finding_replays
  COMMAND ${CMAKE_COMMAND} -DNORMCHECK=$<TARGET_FILE:normcheck> -DHARNESS=$<TARGET_FILE:judge_harness_broken>
    -DBROKEN=${plugin_dir}/libv2_broken_llama_rounds_once.so -DGOOD=${plugin_dir}/libv2_norms.so
    -DWORK=${CMAKE_CURRENT_BINARY_DIR}/judge_replay -P ${CMAKE_CURRENT_SOURCE_DIR}/expect_judge_replay.cmake)
set_tests_properties(judge_finding_replays PROPERTIES LABELS unit TIMEOUT 300 FIXTURES_REQUIRED fuzz_plugins)
