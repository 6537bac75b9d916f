// The problems the quantized evaluation tests draw (test_evaluate_quant.cpp,
// test_evaluate_quant_nonfinite.cpp): 3 rows of bf16 values, 3 N(0, 1), with a
// bf16 gamma in [0.5, 1.5). |x r| rarely passes 3.5 there and |x r gamma|
// 5.25, so a static scale of 5.25 / qmax times 0.3 .. 1.1 saturates some rows
// and not others (its reciprocal under scale_apply=multiply, which multiplies).
// `pow2`: that scale rounded to a power of two, whose inverse is exact, so
// that a bf16 y at |t| >= 64 (a multiple of 0.5 there) lands on int8's ties.
// `nan_row`: row 1 has a NaN x. Half the problems have a row stride of cols + 3.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>

#include "normcheck/evaluate.h"
#include "normcheck/float_format.h"
#include "normcheck/op_spec.h"

namespace normcheck::test {

inline float bf16_value(float v) { return float_from_bf16(bf16_from_float(v)); }

inline Problem quant_problem(std::mt19937_64& rng, const OpSpec& spec, bool pow2 = false, bool nan_row = false) {
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> unit(0, 1);
  Problem p;
  p.rows = 3;
  p.cols = 8 + static_cast<int64_t>(rng() % 120);
  p.eps = 1e-6f;
  for (int i = 0; i < p.rows * p.cols; ++i) p.x.push_back(bf16_value(static_cast<float>(3 * normal(rng))));
  for (int i = 0; i < p.cols; ++i) p.gamma.push_back(bf16_value(static_cast<float>(0.5 + unit(rng))));
  if (nan_row) p.x[static_cast<std::size_t>(p.cols + static_cast<int64_t>(rng() % static_cast<uint64_t>(p.cols)))] = NAN;
  if (!spec.quant->dynamic()) {
    const double s = 5.25 / quant_max(spec.quant->cast.format) * (0.3 + 0.8 * unit(rng));
    const double dequantizing = pow2 ? std::exp2(std::round(std::log2(s))) : s;
    p.scale = static_cast<float>(spec.quant->apply == ScaleApply::multiply ? 1 / dequantizing : dequantizing);
  }
  if (rng() % 2) p.row_stride = p.cols + 3;
  return p;
}

}  // namespace normcheck::test
