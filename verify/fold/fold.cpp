#include "fold.h"

#include <cmath>

#include "round.h"

namespace normcheck::fold {

void require_foldable(Placement placement, const std::string& what) {
  if (placement != Placement::post_ln) return;
  throw FoldError(what +
                  " is a Post-LN norm: its output is the residual stream itself, which the skip "
                  "connection adds to the next sublayer's output with no Linear to fold gamma/beta "
                  "into; folding them into the sublayer's Linears alone changes the model "
                  "(docs/folding.md, section Post-LN, gives a counterexample)");
}

namespace {

void check_sizes(const Linear& linear, const Vector& gamma, const Vector& beta) {
  if (linear.w.cols() != gamma.size())
    throw FoldError("gamma has " + std::to_string(gamma.size()) + " entries but the Linear reads " +
                    std::to_string(linear.w.cols()) + " features");
  if (beta.size() != 0 && beta.size() != gamma.size())
    throw FoldError("beta has " + std::to_string(beta.size()) + " entries, gamma " +
                    std::to_string(gamma.size()));
  if (linear.b.size() != 0 && linear.b.size() != linear.w.rows())
    throw FoldError("the bias has " + std::to_string(linear.b.size()) + " entries for " +
                    std::to_string(linear.w.rows()) + " outputs");
}

// b' = W beta + b, rounded once (b' = b when there is no beta).
Vector folded_bias(const Linear& linear, const Vector& beta, DType storage) {
  const long e = linear.w.rows(), d = linear.w.cols();
  if (beta.size() == 0) return linear.b;
  Vector out(e);
  for (long i = 0; i < e; ++i) {
    const DoubleDouble v = dot_dd(linear.w.row(i).data(), beta.data(), d, 1,
                                  linear.b.size() ? linear.b(i) : 0.0);
    out(i) = round_to_storage(storage, v.hi, v.lo);
  }
  return out;
}

}  // namespace

Linear fold_affine(const Linear& linear, const Vector& gamma, const Vector& beta, DType storage) {
  check_sizes(linear, gamma, beta);
  Linear out;
  out.w.resize(linear.w.rows(), linear.w.cols());
  for (long i = 0; i < linear.w.rows(); ++i)
    for (long j = 0; j < linear.w.cols(); ++j)
      out.w(i, j) = round_to_storage(storage, linear.w(i, j) * gamma(j));  // product exact in double
  out.b = folded_bias(linear, beta, storage);
  return out;
}

Linear fold_affine_wrong_side(const Linear& linear, const Vector& gamma, const Vector& beta,
                              DType storage) {
  check_sizes(linear, gamma, beta);
  Linear out;
  out.w.resize(linear.w.rows(), linear.w.cols());
  for (long i = 0; i < linear.w.rows(); ++i)
    for (long j = 0; j < linear.w.cols(); ++j)
      out.w(i, j) = round_to_storage(storage, gamma(i % gamma.size()) * linear.w(i, j));
  out.b = folded_bias(linear, beta, storage);
  return out;
}

// (M v)_i = v_i - mean(v): the mean as a double-double (dot with 1/d is not
// exact, so sum first: sum_j v_j * 1, then divide the double-double by d
// keeping hi and lo), and v_i - mean rounded once.
Linear centre_writer(const Linear& writer, Axis axis, DType storage) {
  auto centre = [storage](const Vector& v) {
    const long d = v.size();
    const Vector ones = Vector::Ones(d);
    const DoubleDouble s = dot_dd(v.data(), ones.data(), d, 1, 0.0);
    const double mean_hi = s.hi / d;
    // mean_lo: the remainder (s.hi - mean_hi d exactly via fma) plus s.lo, over d.
    const double mean_lo = (std::fma(-mean_hi, static_cast<double>(d), s.hi) + s.lo) / d;
    Vector out(d);
    for (long i = 0; i < d; ++i) {
      double hi, lo;
      two_sum(v(i), -mean_hi, hi, lo);
      lo -= mean_lo;
      two_sum(hi, lo, hi, lo);
      out(i) = round_to_storage(storage, hi, lo);
    }
    return out;
  };
  Linear out = writer;
  if (axis == Axis::rows) {
    for (long j = 0; j < writer.w.cols(); ++j) out.w.col(j) = centre(writer.w.col(j));
    if (writer.b.size() && writer.b.size() != writer.w.rows())
      throw FoldError("the bias has " + std::to_string(writer.b.size()) + " entries, the stream " +
                      std::to_string(writer.w.rows()));
    if (writer.b.size()) out.b = centre(writer.b);
  } else {
    for (long i = 0; i < writer.w.rows(); ++i) out.w.row(i) = centre(writer.w.row(i).transpose()).transpose();
    if (writer.b.size() && writer.b.size() != writer.w.cols())
      throw FoldError("the bias has " + std::to_string(writer.b.size()) + " entries, the stream " +
                      std::to_string(writer.w.cols()));
    if (writer.b.size()) out.b = centre(writer.b);
  }
  return out;
}

}  // namespace normcheck::fold
