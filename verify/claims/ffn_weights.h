// The FFN sublayer weights of seed 003, section 5.1 (J3-J5): z = alpha x +
// ReLU(x W) V with W (d x m) ~ N(0, 2 w^2/d) and V (m x d) ~ N(0, v^2/m).
// Included only by the J* sources that already use Eigen.
#pragma once

#include <Eigen/Dense>
#include <cmath>
#include <random>

namespace normcheck::claims_jacobian {

struct FfnWeights {
  Eigen::MatrixXd w, v;
};

// W, then V, element by element from the caller's `normal` stream (so a
// check's draws do not depend on where this helper sits in its loop).
inline FfnWeights draw_ffn_weights(double v, double w, int d, int m,
                                   std::normal_distribution<double>& normal, std::mt19937_64& rng) {
  FfnWeights f{Eigen::MatrixXd(d, m), Eigen::MatrixXd(m, d)};
  for (Eigen::Index i = 0; i < f.w.size(); ++i) f.w.data()[i] = normal(rng) * w * std::sqrt(2.0 / d);
  for (Eigen::Index i = 0; i < f.v.size(); ++i) f.v.data()[i] = normal(rng) * v / std::sqrt(m);
  return f;
}

// One sample of the whole setting: x ~ N(0, I) first, then W and V, all from
// the caller's `normal` stream.
struct FfnDraw : FfnWeights {
  Eigen::RowVectorXd x;
};

inline FfnDraw draw_ffn_sample(double v, double w, int d, int m, std::normal_distribution<double>& normal,
                               std::mt19937_64& rng) {
  Eigen::RowVectorXd x(d);
  for (int i = 0; i < d; ++i) x(i) = normal(rng);
  return {draw_ffn_weights(v, w, d, m, normal, rng), x};
}

// The sublayer's output z = alpha x + ReLU(x W) V.
inline Eigen::RowVectorXd ffn_output(const FfnDraw& f, double alpha) {
  return alpha * f.x + (f.x * f.w).cwiseMax(0.0) * f.v;
}

}  // namespace normcheck::claims_jacobian
