// LayerNorm forward, Welford's one-pass moments with Chan's merge of blocks.
#include <cmath>
#include <cstdint>
#include <limits>

#include "bound_blocks.h"
#include "normcheck/kernel.h"
#include "forward_rows.h"
#include "welford_cascade.h"

namespace normcheck {

// Error of the moments computed by welford_cascade.h (docs/accuracy.md, "Welford").
// Units: everything times the exact r; X = max|x| r = max_kappa, s = eps r^2.
// A node of the tree holds the exact (n, m, M) of its elements and computed
// (m^, M^) with |m^ - m| <= e and |M^ - M| <= rho M + Q.
//
// Welford step (x joins a node of n - 1 elements; c = (n-1)/n, delta = x - m_a,
// exact increment t = (x - m_a)(x - m) = c delta^2 >= 0):
//   m^ = fl(m^_a + fl(fl(x - m^_a) / n)) gives
//   e <= (1+u)(e_a (1 - (1 - gamma_2)/n) + 2 gamma_2 X / n + 2^-150 r) + u X
//   (|x - m_a| <= 2X, |m| <= X; the old error shrinks by (n-1)/n: a convex combination);
//   t^ = fl(fl(x - m^_a) fl(x - m^)) = (delta - e_a)(c delta - e)(1 + theta_3) + eta:
//   |t^ - t| <= gamma_3 t + (1 + gamma_3)(|delta| (e + c e_a) + e_a e) + 2^-150 r^2;
//   M^ = fl(M^_a + t^): rho <- max((1+u) rho_a + u, (1+u) gamma_3 + u).
// Chan merge (w = n_b/n, c = n_a w, delta = m_b - m_a, eta = e_a + e_b, exact t = c delta^2):
//   e <= (1+u)((1-w) e_a + w e_b + w gamma_3 (2X + eta) + 2^-150 r) + u X;
//   t^ = fl(fl(delta^ delta^) fl(n_a w^)) = (delta + eta')^2 c (1 + theta_6) + underflow:
//   |t^ - t| <= gamma_6 t + (1 + gamma_6) c (2 |delta| eta + eta^2) + (c (1 + gamma_3) + 1) 2^-150 r^2;
//   M^ = fl(fl(M^_a + M^_b) + t^): rho <- max(max(rho_a, rho_b)(1+u)^2 + gamma_2, (1+u) gamma_6 + u).
// The terms with |delta| are summed with Cauchy-Schwarz: every node's t is
// c delta^2 and the t of all nodes add up to the row's M = d sigma^2 exactly, so
//   sum sqrt(c) |delta| beta <= sqrt(d (1 - s)) sqrt(sum beta^2)       (r units)
// with beta = (1 + gamma_3)(e + c e_a)/sqrt(c) (step) or 2 (1 + gamma_6) sqrt(c) eta
// (merge). Each absolute term is then multiplied by at most (1+u)^depth, depth
// counting the roundings of M on the longest path to the root. Finally
// var^ = fl(M^ / d) and w^ = fl(var^ + eps):
//   w^ / (sigma^2 + eps) in [(1 - lambda)(1 - u), (1 + lambda)(1 + u)],
//   lambda = (1 - s)((1 + rho)(1 + u) - 1) + (1 + u) Q / d + 2^-150 r^2.
// The mean error is linear in X and in 2^-150 r, so it is carried as those two
// coefficients; in units of mean|x| it is e_X max|x|/mean|x| <= e_X d.
// The bound walks the kernel's own tree, so it is as tight as this accounting
// allows for every d. The cascade keeps the mean's error small (36 u X at
// d = 1024 against two-pass's 1024 u mean|x|), but the variance's error is
// linear in u max_kappa (1.2e6 u at d = 1024, X = 1e4) where two-pass's grows
// with Delta^2 (docs/accuracy.md has the table and the command).
MomentsError welford_moments_error(const RowCondition& c) {
  constexpr double u = kUnitRoundoff;
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const double g2 = gamma_n(2), g3 = gamma_n(3), g6 = gamma_n(6);
  const bool usable = std::isfinite(c.max_kappa) && c.d <= (int64_t{1} << 24);
  const double X = usable ? c.max_kappa : 0;
  const double under1 = kUnderflowUnit * c.r, under2 = kUnderflowUnit * c.r * c.r;

  struct Node {
    double n = 0;
    double e_x = 0, e_under = 0;  // e = e_x X + e_under 2^-150 r
    double rho = 0;
    int depth = 0;
  };
  double sum_beta2 = 0, sum_alpha = 0, underflows = 0;
  auto error = [&](const Node& node) { return node.e_x * X + node.e_under * under1; };

  auto block = [&](int64_t begin, int64_t end) {
    Node node{1, 0, 0, 0, 0};  // the first element is its own mean, M2 = 0: exact
    for (int64_t i = begin + 1; i < end; ++i) {
      const double n = node.n + 1;
      const double shrink = 1 - (1 - g2) / n;
      Node next{n, (1 + u) * (node.e_x * shrink + 2 * g2 / n) + u,
                (1 + u) * (node.e_under * shrink + 1), 0, node.depth + 1};
      next.rho = std::max((1 + u) * node.rho + u, (1 + u) * g3 + u);
      const double cw = (n - 1) / n, e_a = error(node), e = error(next);
      const double beta = (1 + g3) * (e + cw * e_a) / std::sqrt(cw);
      sum_beta2 += beta * beta;
      sum_alpha += (1 + g3) * e_a * e;
      underflows += 1;
      node = next;
    }
    return node;
  };
  auto merge = [&](const Node& a, const Node& b) {
    const double n = a.n + b.n, w = b.n / n, cw = a.n * w;
    Node m{n,
           (1 + u) * ((1 - w) * a.e_x + w * b.e_x + w * g3 * (2 + a.e_x + b.e_x)) + u,
           (1 + u) * ((1 - w) * a.e_under + w * b.e_under + w * g3 * (a.e_under + b.e_under) + 1),
           std::max(std::max(a.rho, b.rho) * (1 + u) * (1 + u) + g2, (1 + u) * g6 + u),
           std::max(a.depth, b.depth) + 2};
    const double eta = error(a) + error(b);
    const double beta = 2 * (1 + g6) * std::sqrt(cw) * eta;
    sum_beta2 += beta * beta;
    sum_alpha += (1 + g6) * cw * eta * eta;
    underflows += cw * (1 + g3) + 1;
    return m;
  };
  const Node root = scalar::welford_cascade<Node>(c.d, block, merge);

  const double d = static_cast<double>(c.d);
  const double spread = c.kappa > 0 && std::isfinite(c.max_kappa / c.kappa) ? c.max_kappa / c.kappa : d;
  MomentsError m;
  m.mean_rel = root.e_x * spread;
  m.mean_underflow = root.e_under * kUnderflowUnit;
  m.mean_r = error(root);
  if (!usable) {
    m.var_eps = {1, kInf};
    return m;
  }
  const double sigma_share = 1 - c.eps_share;
  const double amplification = std::pow(1 + u, root.depth);
  const double q = amplification * (std::sqrt(d * sigma_share) * std::sqrt(sum_beta2) + sum_alpha +
                                    underflows * under2);
  const double lambda = sigma_share * ((1 + root.rho) * (1 + u) - 1) + (1 + u) * q / d + under2;
  m.var_eps = {1 - (1 - lambda) * (1 - u), (1 + lambda) * (1 + u) - 1};
  return m;
}

// y from these moments exactly as in two-pass: r^ = fl(1 / fl(sqrt(w^))),
// xhat^ = fl(fl(x - mu^) r^), y^ = fl(fl(gamma xhat^) + beta).
Bound welford_layernorm_fwd_bound(const RowCondition& c) {
  const MomentsError m = welford_moments_error(c);
  return subtract_then_scale_bound(m, rstd_error(m.var_eps, 2, c), 0);
}

namespace {

void welford_fwd(const float* x, const float* gamma, const float* beta, float* y, float* mean,
                 float* rstd, int64_t rows, int64_t cols, float eps) {
  for (int64_t row = 0; row < rows; ++row) {
    const float* xr = x + row * cols;
    float* yr = y + row * cols;
    const scalar::FloatMoments m = scalar::welford_moments(xr, cols);
    const float r = 1.0f / std::sqrt(m.m2 / m.n + eps);
    scalar::write_normalized_row(xr, gamma, beta, yr, cols, m.mean, r);
    if (mean) mean[row] = m.mean;
    if (rstd) rstd[row] = r;
  }
}

}  // namespace

extern const Kernel kLayerNormFwdWelford;
constinit const Kernel kLayerNormFwdWelford = {
    .name = "layernorm_fwd.welford",
    .op = Op::layernorm_fwd,
    .origin = Origin::ours,
    .dtype = DType::f32,
    .algorithm = "Welford updates in blocks of 16, blocks merged by Chan's formula in a cascade; "
                 "(x - mean) * rstd * gamma + beta",
    .fn = &welford_fwd,
    .bound = &welford_layernorm_fwd_bound,
    // Chan's delta^2 * n_a * w <= (2 max|x|)^2 d / 4 and M2 <= d (2 max|x|)^2 stay below FLT_MAX.
    .range = {.max_abs_x = 0x1p62, .sqrt_d_scaled = true},
};

}  // namespace normcheck
