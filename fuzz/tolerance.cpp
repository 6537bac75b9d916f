#include "tolerance.h"

#include "normcheck/bounds.h"

namespace normcheck::fuzz {
namespace {

double g_k = 1;

Bound k_ulp_bound(const RowCondition&) {
  const double t = g_k * kUnitRoundoff;
  Bound b;
  b.xhat_abs = t;
  b.affine_rel = t;
  b.mean_rel = t;
  b.stat_rel = t;
  b.dx_g = t;
  b.dx_mean_g = t;
  b.dx_proj_rel = t;
  b.dgamma_rel = t;
  b.dbeta_rel = t;
  b.underflow_abs = g_k * kUnderflowUnit;
  return b;
}

}  // namespace

BoundFn tolerance_bound(double k) {
  g_k = k;
  return &k_ulp_bound;
}

}  // namespace normcheck::fuzz
