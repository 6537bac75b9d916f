// The normwise error and the scaled ULP error (contracts in metrics.h).
#include "normcheck/metrics.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "simd/vector_clones.h"

namespace normcheck {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Both finite, without a branch (a NaN compares false).
inline bool both_finite(double c, double e) {
  constexpr double kLargest = std::numeric_limits<double>::max();
  return (std::fabs(c) <= kLargest) & (std::fabs(e) <= kLargest);
}

}  // namespace

// ||c - e||_2 / ||e||_2 with both norms scaled near their largest entry, so
// neither squares overflow (exact values reach ~2^400 in dx) nor underflow:
// each by 2^-k, k the exponent of its largest entry (kept within double's
// normal exponents), so that the scaling is a multiplication, exact wherever
// the scaled entry is normal (a subnormal one is below 2^-1022 of the
// largest, and its square is lost to the sum's rounding anyway).
// Both passes are branch-free loops that the vector clones take in vectors:
//   - the largest entries are maxima of non-negative doubles, taken on their
//     bits (the order of non-negative doubles is that of their bit patterns,
//     so the maximum is exact, and integer maxima vectorize where a double's,
//     with its NaN and signed-zero cases, does not);
//   - the sums of squares are kLanes partial sums, element i into sum
//     i mod kLanes, added in lane order at the end: one order on every
//     machine and in every clone. Each of n terms lies in [0, 4); either
//     order errs by at most about n u of the sum, far below what a normwise
//     figure is read at.
NORMCHECK_VECTOR_CLONES
double normwise_error(std::span<const float> computed, std::span<const double> exact) {
  if (computed.size() != exact.size())
    throw std::invalid_argument("normwise_error: computed and exact differ in length");
  const std::size_t n = exact.size();
  const float* c_of = computed.data();
  const double* e_of = exact.data();
  // An element where one side is non-finite counts only as the same
  // infinity, or as NaN against NaN; any other makes the error infinite.
  // (The maxima as signed 64-bit integers: a non-negative double's sign bit
  // is clear, and GCC vectorizes these where it does not the unsigned ones.)
  int64_t max_diff_bits = 0, max_exact_bits = 0, infinite = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double c = c_of[i], e = e_of[i], diff = std::fabs(c - e), magnitude = std::fabs(e);
    const bool finite = both_finite(c, e);
    const bool alike = (c == e) | ((c != c) & (e != e));  // equal, or both NaN
    infinite += (!finite & !alike) ? 1 : 0;
    const int64_t diff_bits = std::bit_cast<int64_t>(finite ? diff : 0.0);
    const int64_t exact_bits = std::bit_cast<int64_t>(finite ? magnitude : 0.0);
    max_diff_bits = std::max(max_diff_bits, diff_bits);
    max_exact_bits = std::max(max_exact_bits, exact_bits);
  }
  if (infinite) return kInf;
  const double max_diff = std::bit_cast<double>(max_diff_bits), max_exact = std::bit_cast<double>(max_exact_bits);
  if (max_diff == 0) return 0;  // includes 0/0
  if (max_exact == 0) return kInf;
  // The partial sums as one vector of kLanes doubles (GCC's vector
  // extension: AVX-512 registers in the x86-64-v4 clone, pairs or quadruples
  // of them or scalars in the others, with the same operations lane by lane).
  // A non-finite pair adds 0 (x - x is 0 exactly when x is finite).
  const int diff_exponent = std::clamp(std::ilogb(max_diff), -1022, 1022);
  const int exact_exponent = std::clamp(std::ilogb(max_exact), -1022, 1022);
  const double diff_scale = std::ldexp(1.0, -diff_exponent), exact_scale = std::ldexp(1.0, -exact_exponent);
  constexpr std::size_t kLanes = 8;
  using Lanes = double __attribute__((vector_size(kLanes * sizeof(double))));
  using FloatLanes = float __attribute__((vector_size(kLanes * sizeof(float))));
  Lanes sum_diff = {}, sum_exact = {};
  const auto add = [&](const Lanes& c, const Lanes& e) {
    const auto finite = ((c - c) == 0) & ((e - e) == 0);
    const Lanes dd = finite ? (c - e) * diff_scale : Lanes{}, de = finite ? e * exact_scale : Lanes{};
    sum_diff += dd * dd;
    sum_exact += de * de;
  };
  std::size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    FloatLanes c;
    Lanes e;
    std::memcpy(&c, c_of + i, sizeof c);
    std::memcpy(&e, e_of + i, sizeof e);
    add(__builtin_convertvector(c, Lanes), e);
  }
  if (i < n) {  // the tail in the first lanes, zeros beside it (a zero pair adds 0)
    Lanes c = {}, e = {};
    for (std::size_t lane = 0; i + lane < n; ++lane) {
      c[lane] = c_of[i + lane];
      e[lane] = e_of[i + lane];
    }
    add(c, e);
  }
  double total_diff = 0, total_exact = 0;
  for (std::size_t lane = 0; lane < kLanes; ++lane) {
    total_diff += sum_diff[lane];
    total_exact += sum_exact[lane];
  }
  return std::ldexp(std::sqrt(total_diff / total_exact), diff_exponent - exact_exponent);
}

}  // namespace normcheck
