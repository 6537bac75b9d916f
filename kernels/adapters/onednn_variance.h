// The statistic oneDNN's backward takes: the variance, where the table's
// backward saves rstd (see the top of onednn_layernorm_bwd.cpp). Shared by the
// adapter in libnormcheck_onednn.so, which converts, and its row in
// normcheck_kernels, which declines the rstd that cannot be converted; plain
// float arithmetic, no oneDNN.
#pragma once

#include <cmath>
#include <cstdio>
#include <string>

namespace normcheck::onednn {

// What oneDNN is given for a saved rstd: 1/rstd^2 in double, rounded to float once.
inline float variance_for(float rstd) {
  return static_cast<float>(1.0 / (static_cast<double>(rstd) * rstd));
}

// oneDNN's API takes the variance: a row whose variance 1/rstd^2 is not a
// normal float (overflow to inf for rstd < 2^-64, subnormal or 0 for rstd >
// 2^63) cannot be handed to it without changing the statistic by more than
// float's rounding, which every backward bound assumes (evaluate.h, row_checked).
inline std::string declines_rstd(float rstd) {
  const float variance = variance_for(rstd);
  if (std::isnormal(variance) || !std::isfinite(rstd) || rstd <= 0) return {};
  char reason[200];
  std::snprintf(reason, sizeof reason,
                "oneDNN takes the variance, and 1/rstd^2 = %.3g is %s in float: an input oneDNN's "
                "API cannot express",
                1.0 / (static_cast<double>(rstd) * rstd), std::isinf(variance) ? "beyond the range" : "subnormal");
  return reason;
}

}  // namespace normcheck::onednn
