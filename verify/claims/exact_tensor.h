// A tensor of exact values for the semantic claims (S*, A*): the values live at
// kExactDigits decimal digits (Boost.Multiprecision over MPFR, in
// exact_tensor.cpp only, so including this header is cheap). Reshape and
// permute move the data for real, and normalize() reduces over any set of axes,
// so "LayerNorm over these axes" and "that other op over those axes" are two
// honest computations whose difference is measured at full precision.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace normcheck::claims {

// 100 decimal digits (~332 bits): an exact identity shows up as a difference
// below ~1e-95 relative, far under the 1e-60 the verdicts ask for.
inline constexpr int kExactDigits = 100;

// A difference below this (relative to the values' scale) counts as "equal" for
// HOLDS: 35 orders of magnitude above the arithmetic's own rounding, and 45
// below any float effect.
inline constexpr double kExactTolerance = 1e-60;

// How eps and the variance enter the denominator.
enum class Spread {
  sqrt_var_plus_eps,  // (x - mu) / sqrt(var + eps): nn.LayerNorm's definition
  std_plus_eps,       // (x - mu) / (sqrt(var) + eps): seed 001's hand-written check
};

struct NormForm {
  Spread spread = Spread::sqrt_var_plus_eps;
  int correction = 0;  // variance divides by n - correction: 0 biased (LayerNorm), 1 unbiased
};

std::string describe(const NormForm& form);  // e.g. "sqrt(var+eps), biased (/n)"

class ExactTensor {
 public:
  ExactTensor(std::vector<int64_t> shape, std::span<const double> values);
  ExactTensor(std::vector<int64_t> shape, std::span<const float> values);
  ExactTensor(const ExactTensor& other);
  ExactTensor(ExactTensor&& other) noexcept;
  ExactTensor& operator=(const ExactTensor& other);
  ExactTensor& operator=(ExactTensor&& other) noexcept;
  ~ExactTensor();

  const std::vector<int64_t>& shape() const;
  int64_t size() const;

  // Same values in row-major order, new shape (the element count must match).
  ExactTensor reshaped(std::vector<int64_t> shape) const;
  // torch.permute: result axis i is this tensor's axis order[i]; data is moved.
  ExactTensor permuted(const std::vector<int>& order) const;
  // For every index of the axes not listed, normalizes the elements spanned by
  // `axes` with `form` and this eps (eps is used exactly as the double given).
  ExactTensor normalized(const std::vector<int>& axes, double eps, NormForm form = {}) const;

  // max |this - other| computed at full precision, then rounded to double (a
  // double holds 1e-90 without trouble). Shapes must match.
  double max_abs_difference(const ExactTensor& other) const;
  // Position (row-major) of that maximum, for counterexamples.
  int64_t argmax_abs_difference(const ExactTensor& other) const;
  double max_abs() const;

  std::vector<double> to_double() const;

  struct Impl;  // the multiprecision values (exact_tensor.cpp)

 private:
  explicit ExactTensor(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace normcheck::claims
