#include "fold_file.h"

#include <cmath>
#include <random>

#include "normcheck/excerpt.h"
#include "round.h"

namespace normcheck::fold {
namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

Tensor& need(TensorFile& file, const std::string& name, const std::string& role) {
  Tensor* t = file.find(name);
  if (!t) throw FoldError(role + ": the file has no tensor '" + excerpt(name) + "'");
  DType dt;
  if (!float_dtype(t->dtype, dt)) throw FoldError(role + ": tensor '" + excerpt(name) + "' is " + t->dtype + ", not F32, BF16 or F16");
  return *t;
}

DType dtype_of(const Tensor& t) {
  DType dt = DType::f32;
  float_dtype(t.dtype, dt);
  return dt;
}

void need_shape(const Tensor& t, const std::vector<int64_t>& shape, const std::string& role) {
  if (t.shape != shape)
    throw FoldError(role + ": tensor '" + excerpt(t.name) + "' has shape " + shape_text(t.shape) + ", expected " + shape_text(shape));
}

// A tensor's values; a NaN or infinity is refused: the identities and the
// bounds are about finite weights, and a fold would only spread it.
std::vector<double> finite_values(const Tensor& t) {
  const auto v = tensor_values(t);
  for (std::size_t i = 0; i < v.size(); ++i)
    if (!std::isfinite(v[i]))
      throw FoldError("tensor '" + excerpt(t.name) + "' holds " + (std::isnan(v[i]) ? "a NaN" : "an infinity") +
                      " at flat index " + std::to_string(i) + ": nothing to fold");
  return v;
}

Vector to_vector(const Tensor& t) {
  const auto v = finite_values(t);
  return Eigen::Map<const Vector>(v.data(), static_cast<long>(v.size()));
}

Matrix to_matrix(const Tensor& t) {
  const auto v = finite_values(t);
  return Eigen::Map<const Matrix>(v.data(), t.shape[0], t.shape[1]);
}

std::vector<double> from(const Matrix& m) { return std::vector<double>(m.data(), m.data() + m.size()); }
std::vector<double> from(const Vector& v) { return std::vector<double>(v.data(), v.data() + v.size()); }

}  // namespace

bool FoldReport::ok() const {
  for (const auto& c : consumers)
    if (!c.check.within_bound()) return false;
  for (const auto& w : writers)
    if (w.sum_over_bound > 1 || w.entry_over_bound > 1 || w.overflowed) return false;
  return true;
}

FoldReport fold_file(TensorFile& file, const FoldSpec& spec, const FoldOptions& options) {
  FoldReport report;
  uint64_t stream = 0;
  for (const NormSpec& n : spec.norms) {
    require_foldable(n.placement, "norm '" + excerpt(n.name) + "'");
    const std::string role = "norm '" + excerpt(n.name) + "'";
    Tensor& gamma_t = need(file, n.weight, role);
    if (gamma_t.shape.size() != 1) throw FoldError(role + ": gamma '" + excerpt(n.weight) + "' has shape " + shape_text(gamma_t.shape) + ", expected [d]");
    const int64_t d = gamma_t.shape[0];
    const Vector gamma = to_vector(gamma_t);
    Vector beta;
    if (!n.bias.empty()) {
      Tensor& beta_t = need(file, n.bias, role);
      need_shape(beta_t, {d}, role);
      beta = to_vector(beta_t);
    }
    // Check every consumer before rewriting any.
    for (const ConsumerSpec& c : n.consumers) {
      const Tensor& w = need(file, c.weight, role);
      const int in_axis = c.in_out ? 0 : 1;
      if (w.shape.size() != 2 || w.shape[in_axis] != d)
        throw FoldError(role + ": consumer '" + excerpt(c.weight) + "' has shape " + shape_text(w.shape) + ", expected " +
                        (c.in_out ? "[" + std::to_string(d) + ", out] (layout in_out)" : "[out, " + std::to_string(d) + "]"));
      if (!c.bias.empty()) {
        const Tensor& b = need(file, c.bias, role);
        need_shape(b, {w.shape[1 - in_axis]}, role);
        if (b.dtype != w.dtype) throw FoldError(role + ": bias '" + excerpt(c.bias) + "' is " + b.dtype + " but its weight is " + w.dtype);
      }
      if (!c.new_bias.empty() && file.find(c.new_bias))
        throw FoldError(role + ": new_bias '" + excerpt(c.new_bias) + "' already exists in the file (name it as \"bias\")");
      if (beta.size() && c.bias.empty() && c.new_bias.empty() && beta.cwiseAbs().maxCoeff() != 0)
        throw FoldError(role + ": consumer '" + excerpt(c.weight) + "' has no bias to take W beta; name one with \"new_bias\"");
    }
    for (const ConsumerSpec& c : n.consumers) {
      Tensor& w_t = *file.find(c.weight);
      const DType storage = dtype_of(w_t);
      FoldCase fc;
      fc.gamma = gamma;
      fc.beta = beta;
      fc.storage = storage;
      fc.storage_activations = options.storage_activations;
      fc.original.w = c.in_out ? Matrix(to_matrix(w_t).transpose()) : to_matrix(w_t);
      if (!c.bias.empty()) fc.original.b = to_vector(*file.find(c.bias));
      fc.folded = options.wrong_side ? fold_affine_wrong_side(fc.original, gamma, beta, storage)
                                     : fold_affine(fc.original, gamma, beta, storage);
      std::mt19937_64 rng(options.seed + 0x9e3779b97f4a7c15ULL * ++stream);
      const auto rows = make_xhat_rows(n.kind, fc.folded.w, options.rows, rng);
      report.consumers.push_back({n.name, c.weight, w_t.dtype, static_cast<long>(d),
                                  static_cast<long>(fc.original.w.rows()), check_fold(fc, rows)});
      set_tensor_values(w_t, from(c.in_out ? Matrix(fc.folded.w.transpose()) : fc.folded.w));
      if (!c.bias.empty()) {
        set_tensor_values(*file.find(c.bias), from(fc.folded.b));
      } else if (!c.new_bias.empty() && fc.folded.b.size()) {
        Tensor nb{c.new_bias, w_t.dtype, {fc.original.w.rows()}, {}};
        set_tensor_values(nb, from(fc.folded.b));
        file.tensors.push_back(std::move(nb));
      }
    }
    set_tensor_values(*file.find(n.weight), std::vector<double>(d, 1.0));
    if (!n.bias.empty()) set_tensor_values(*file.find(n.bias), std::vector<double>(d, 0.0));
  }
  for (const WriterSpec& ws : spec.writers) {
    const std::string role = "centre_writers '" + excerpt(ws.weight) + "'";
    Tensor& w_t = need(file, ws.weight, role);
    if (w_t.shape.size() != 2) throw FoldError(role + ": shape " + shape_text(w_t.shape) + " is not 2-D");
    const DType storage = dtype_of(w_t);
    Linear writer{to_matrix(w_t), Vector()};
    if (!ws.bias.empty()) {
      Tensor& b_t = need(file, ws.bias, role);
      need_shape(b_t, {w_t.shape[ws.axis == Axis::rows ? 0 : 1]}, role);
      if (b_t.dtype != w_t.dtype) throw FoldError(role + ": bias '" + excerpt(ws.bias) + "' is " + b_t.dtype + " but the weight is " + w_t.dtype);
      writer.b = to_vector(b_t);
    }
    const Linear centred = centre_writer(writer, ws.axis, storage);
    WriterReport wr{ws.weight, w_t.dtype, 0, 0, 0};
    auto check = [&](const Vector& before, const Vector& after) {
      const CentringCheck c = check_centring(before, after, storage);
      wr.sum_over_bound = std::max(wr.sum_over_bound, c.sum_over_bound);
      wr.entry_over_bound = std::max(wr.entry_over_bound, c.entry_over_bound);
      wr.overflowed += c.overflowed;
    };
    if (ws.axis == Axis::rows) {
      for (long j = 0; j < writer.w.cols(); ++j) check(writer.w.col(j), centred.w.col(j));
      if (writer.b.size()) check(writer.b, centred.b);
    } else {
      for (long i = 0; i < writer.w.rows(); ++i) check(writer.w.row(i).transpose(), centred.w.row(i).transpose());
      if (writer.b.size()) check(writer.b, centred.b);
    }
    report.writers.push_back(wr);
    set_tensor_values(w_t, from(centred.w));
    if (!ws.bias.empty()) set_tensor_values(*file.find(ws.bias), from(centred.b));
  }
  return report;
}

}  // namespace normcheck::fold
