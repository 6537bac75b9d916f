// Dispatched like every kernel, so it reports the table entry the kernels use.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/target_info.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace normcheck::simd::HWY_NAMESPACE {
const char* TargetName() { return hwy::TargetName(HWY_TARGET); }
}  // namespace normcheck::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "simd/target_info.h"

namespace normcheck::simd {
HWY_EXPORT(TargetName);

const char* dispatched_target_name() { return HWY_DYNAMIC_DISPATCH(TargetName)(); }
}  // namespace normcheck::simd
#endif  // HWY_ONCE
