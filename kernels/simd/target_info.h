// Which Highway target the SIMD kernels dispatch to right now ("AVX3",
// "AVX2", "SSE4", ...): for reports, benchmarks, and for tests that force each
// target in turn (hwy::SetSupportedTargetsForTest) and check the switch took.
#pragma once

namespace normcheck::simd {

const char* dispatched_target_name();

}  // namespace normcheck::simd
