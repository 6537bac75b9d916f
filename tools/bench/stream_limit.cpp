// The streaming passes, per Highway target (run-time dispatch picks the one
// the kernels use on this CPU).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "stream_limit.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/cache_control.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace normcheck::bench::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// out[i] = a[i] (b null) or bits(a[i]) | bits(b[i]), with non-temporal stores,
// and the same into out2[i] when out2 is not null (then b is not either).
// n is a multiple of the lane count (whole 4 KiB pages of floats).
void StreamPass(const float* HWY_RESTRICT a, const float* HWY_RESTRICT b, float* HWY_RESTRICT out,
                float* HWY_RESTRICT out2, size_t n) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  if (out2) {
    for (size_t i = 0; i < n; i += N) {
      const auto v = hn::Or(hn::Load(d, a + i), hn::Load(d, b + i));
      hn::Stream(v, d, out + i);
      hn::Stream(v, d, out2 + i);
    }
  } else if (b) {
    for (size_t i = 0; i < n; i += N) hn::Stream(hn::Or(hn::Load(d, a + i), hn::Load(d, b + i)), d, out + i);
  } else {
    for (size_t i = 0; i < n; i += N) hn::Stream(hn::Load(d, a + i), d, out + i);
  }
  hwy::FlushStream();
}

}  // namespace normcheck::bench::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "stream_limit.h"

#include <algorithm>

namespace normcheck::bench {
HWY_EXPORT(StreamPass);

StreamLimit::StreamLimit(int inputs, int outputs, std::size_t buffer_bytes, unsigned threads)
    : inputs_(inputs),
      outputs_(outputs),
      floats_(buffer_bytes / 4096 * 4096 / sizeof(float)),
      // Aligned (and shares are whole pages): every vector access is aligned.
      a_(hwy::AllocateAligned<float>(floats_)),
      b_(inputs == 2 ? hwy::AllocateAligned<float>(floats_) : nullptr),
      out_(hwy::AllocateAligned<float>(floats_)),
      out2_(outputs == 2 ? hwy::AllocateAligned<float>(floats_) : nullptr),
      team_(threads, [this](unsigned index, unsigned members) {
        const ByteRange share = page_share(floats_ * sizeof(float), index, members);
        const std::size_t begin = share.begin / sizeof(float), end = share.end / sizeof(float);
        HWY_DYNAMIC_DISPATCH(StreamPass)(a_.get() + begin, b_ ? b_.get() + begin : nullptr,
                                         out_.get() + begin, out2_ ? out2_.get() + begin : nullptr,
                                         end - begin);
      }) {
  // Written here, so the pages exist before timing.
  std::fill_n(a_.get(), floats_, 1.0f);
  if (b_) std::fill_n(b_.get(), floats_, 2.0f);
  std::fill_n(out_.get(), floats_, 0.0f);
  if (out2_) std::fill_n(out2_.get(), floats_, 0.0f);
}

double StreamLimit::measure_gbps() {
  const double bytes = static_cast<double>((inputs_ + outputs_) * floats_ * sizeof(float));
  return bytes / team_.run_seconds() * 1e-9;
}

}  // namespace normcheck::bench
#endif  // HWY_ONCE
