// ExactTensor: the only file of the semantic claims that instantiates
// Boost.Multiprecision (see exact_tensor.h).
#include "exact_tensor.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include <boost/multiprecision/mpfr.hpp>

namespace normcheck::claims {

using Real = boost::multiprecision::number<boost::multiprecision::mpfr_float_backend<kExactDigits>,
                                           boost::multiprecision::et_off>;

std::string describe(const NormForm& form) {
  std::string text = form.spread == Spread::sqrt_var_plus_eps ? "(x-mu)/sqrt(var+eps)"
                                                               : "(x-mu)/(std+eps)";
  text += form.correction == 0 ? ", biased var (/n)" : ", unbiased var (/(n-1))";
  return text;
}

struct ExactTensor::Impl {
  std::vector<int64_t> shape;
  std::vector<Real> values;
};

namespace {

int64_t element_count(const std::vector<int64_t>& shape) {
  return std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
}

std::vector<int64_t> row_major_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i) strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

template <typename T>
std::unique_ptr<ExactTensor::Impl> make_impl(std::vector<int64_t> shape, std::span<const T> values) {
  if (element_count(shape) != static_cast<int64_t>(values.size()))
    throw std::invalid_argument("ExactTensor: shape does not match the number of values");
  auto impl = std::make_unique<ExactTensor::Impl>();
  impl->shape = std::move(shape);
  impl->values.reserve(values.size());
  for (T v : values) impl->values.emplace_back(static_cast<double>(v));  // exact: float/double -> 332 bits
  return impl;
}

}  // namespace

ExactTensor::ExactTensor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ExactTensor::ExactTensor(std::vector<int64_t> shape, std::span<const double> values)
    : impl_(make_impl(std::move(shape), values)) {}
ExactTensor::ExactTensor(std::vector<int64_t> shape, std::span<const float> values)
    : impl_(make_impl(std::move(shape), values)) {}
ExactTensor::ExactTensor(const ExactTensor& other) : impl_(std::make_unique<Impl>(*other.impl_)) {}
ExactTensor::ExactTensor(ExactTensor&& other) noexcept = default;
ExactTensor& ExactTensor::operator=(const ExactTensor& other) {
  impl_ = std::make_unique<Impl>(*other.impl_);
  return *this;
}
ExactTensor& ExactTensor::operator=(ExactTensor&& other) noexcept = default;
ExactTensor::~ExactTensor() = default;

const std::vector<int64_t>& ExactTensor::shape() const { return impl_->shape; }
int64_t ExactTensor::size() const { return static_cast<int64_t>(impl_->values.size()); }

ExactTensor ExactTensor::reshaped(std::vector<int64_t> shape) const {
  if (element_count(shape) != size()) throw std::invalid_argument("ExactTensor::reshaped: element count differs");
  auto impl = std::make_unique<Impl>(*impl_);
  impl->shape = std::move(shape);
  return ExactTensor(std::move(impl));
}

ExactTensor ExactTensor::permuted(const std::vector<int>& order) const {
  const auto& in_shape = impl_->shape;
  const int rank = static_cast<int>(in_shape.size());
  std::vector<int> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int> identity(rank);
  std::iota(identity.begin(), identity.end(), 0);
  if (sorted != identity) throw std::invalid_argument("ExactTensor::permuted: not a permutation of the axes");

  std::vector<int64_t> out_shape(rank);
  for (int i = 0; i < rank; ++i) out_shape[i] = in_shape[order[i]];
  const auto in_strides = row_major_strides(in_shape);
  auto impl = std::make_unique<Impl>();
  impl->shape = out_shape;
  impl->values.resize(impl_->values.size());
  std::vector<int64_t> index(rank, 0);  // multi-index in the output
  for (std::size_t flat = 0; flat < impl->values.size(); ++flat) {
    int64_t source = 0;
    for (int i = 0; i < rank; ++i) source += index[i] * in_strides[order[i]];
    impl->values[flat] = impl_->values[source];
    for (int i = rank - 1; i >= 0 && ++index[i] == out_shape[i]; --i) index[i] = 0;
  }
  return ExactTensor(std::move(impl));
}

ExactTensor ExactTensor::normalized(const std::vector<int>& axes, double eps, NormForm form) const {
  const auto& shape = impl_->shape;
  const int rank = static_cast<int>(shape.size());
  std::vector<bool> reduced(rank, false);
  for (int a : axes) {
    if (a < 0 || a >= rank || reduced[a]) throw std::invalid_argument("ExactTensor::normalized: bad axes");
    reduced[a] = true;
  }
  // Group id of an element: its multi-index over the kept axes, row-major.
  const auto strides = row_major_strides(shape);
  std::vector<int64_t> group(impl_->values.size());
  int64_t groups = 1, group_size = 1;
  for (int i = 0; i < rank; ++i) (reduced[i] ? group_size : groups) *= shape[i];
  for (std::size_t flat = 0; flat < group.size(); ++flat) {
    int64_t id = 0;
    for (int i = 0; i < rank; ++i)
      if (!reduced[i]) id = id * shape[i] + (static_cast<int64_t>(flat) / strides[i]) % shape[i];
    group[flat] = id;
  }
  std::vector<Real> mean(groups, Real(0)), squares(groups, Real(0));
  for (std::size_t i = 0; i < group.size(); ++i) mean[group[i]] += impl_->values[i];
  for (auto& m : mean) m /= group_size;
  for (std::size_t i = 0; i < group.size(); ++i) {
    const Real deviation = impl_->values[i] - mean[group[i]];
    squares[group[i]] += deviation * deviation;
  }
  std::vector<Real> denominator(groups);
  const Real eps_exact(eps);
  for (int64_t g = 0; g < groups; ++g) {
    const Real variance = squares[g] / (group_size - form.correction);
    denominator[g] = form.spread == Spread::sqrt_var_plus_eps ? sqrt(variance + eps_exact)
                                                              : sqrt(variance) + eps_exact;
  }
  auto impl = std::make_unique<Impl>();
  impl->shape = shape;
  impl->values.resize(impl_->values.size());
  for (std::size_t i = 0; i < group.size(); ++i)
    impl->values[i] = (impl_->values[i] - mean[group[i]]) / denominator[group[i]];
  return ExactTensor(std::move(impl));
}

int64_t ExactTensor::argmax_abs_difference(const ExactTensor& other) const {
  if (other.impl_->shape != impl_->shape) throw std::invalid_argument("ExactTensor: shapes differ");
  int64_t worst = 0;
  Real worst_value(-1);
  for (std::size_t i = 0; i < impl_->values.size(); ++i) {
    const Real d = abs(impl_->values[i] - other.impl_->values[i]);
    if (d > worst_value) {
      worst_value = d;
      worst = static_cast<int64_t>(i);
    }
  }
  return worst;
}

double ExactTensor::max_abs_difference(const ExactTensor& other) const {
  const int64_t at = argmax_abs_difference(other);
  return static_cast<double>(abs(impl_->values[at] - other.impl_->values[at]));
}

double ExactTensor::max_abs() const {
  Real m(0);
  for (const Real& v : impl_->values) m = std::max(m, Real(abs(v)));
  return static_cast<double>(m);
}

std::vector<double> ExactTensor::to_double() const {
  std::vector<double> out;
  out.reserve(impl_->values.size());
  for (const Real& v : impl_->values) out.push_back(static_cast<double>(v));
  return out;
}

}  // namespace normcheck::claims
