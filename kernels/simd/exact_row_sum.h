// The exact sum S of a row of finite floats, and d x_i - S for one of its
// elements rounded once to a double: how the accurate LayerNorm forward
// computes the few elements so near the mean that its float64 pass cannot
// promise 1 ULP (layernorm_fwd_accurate-inl.h, docs/accuracy_accurate.md).
//
// Every finite float is an integer multiple of 2^-149 below 2^128, so the row
// sum is an integer (in units of 2^-149) of at most 277 + log2(d) bits: held
// here in 32-bit limbs with int64 headroom, no rounding anywhere. The kernel
// usually adds two doubles (exact partial sums of the row, also multiples of
// 2^-149), and every element only when those cannot be formed.
#pragma once

#include <array>
#include <cstdint>

namespace normcheck::simd {

class ExactRowSum {
 public:
  // Adds v exactly: a finite float, or any double that is an integer
  // multiple of 2^-149 below 2^250 in magnitude.
  void add(double v);

  // count * x - S (x a finite float, 1 <= count < 2^40, at most 2^40 values
  // added), within a relative 2^-51.99
  // (one rounding of the top 96 bits and the bits below them; proof at the
  // definition). Exactly 0 when count * x == S.
  double scaled_deviation(float x, int64_t count) const;

 private:
  // Limb k weighs 2^(32 k - 149). Values below 2^250 have their lowest bit at
  // most 398 places above 2^-149, so add_shifted reaches limb 398/32 + 3 =
  // 15; 2^40 of them sum below 2^290, bit 439: 16 limbs hold every sum with
  // room for the sign in the top one.
  static constexpr int kLimbs = 16;
  using Limbs = std::array<int64_t, kLimbs>;

  // Moves each limb's carries up so limbs 0..kLimbs-2 lie in [0, 2^32).
  static void propagate_carries(Limbs& limbs);

  Limbs limbs_ = {};
  int adds_since_carry_ = 0;
};

}  // namespace normcheck::simd
