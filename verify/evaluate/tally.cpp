#include "tally.h"

#include <cmath>
#include <limits>

#include "normcheck/metrics.h"
#include "normcheck/storage16.h"

namespace normcheck::evaluation {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Position of a non-negative value on f16's ordinal line (consecutive f16
// values are consecutive integers; 2^-24 is the subnormal spacing, each binade
// above 2^-14 holds 1024 values; past 65504 the top binade's spacing goes on,
// so +inf sits at 65536 like one more value).
double f16_position(double a) {
  if (a < 0x1p-14) return a / 0x1p-24;
  const int e = std::min(std::ilogb(a), 15);
  return 1024.0 * (e + 15) + (a / std::ldexp(1.0, e) - 1) * 1024.0;
}

// ULP distance in the kernel's dtype. bf16 shares float's exponent range, so
// one bf16 ulp is exactly 2^16 float ulps everywhere, overflow included.
double ulp_in(DType t, float computed, double exact) {
  switch (t) {
    case DType::f32: return ulp_error(computed, exact);
    case DType::bf16: return ulp_error(computed, exact) / 0x1p16;
    case DType::f16: break;
  }
  if (std::isnan(computed) || std::isnan(exact))
    return std::isnan(computed) && std::isnan(exact) ? 0 : kInf;
  if (std::isinf(exact)) return static_cast<double>(computed) == exact ? 0 : kInf;
  auto signed_position = [](double v) {
    const double p = std::isinf(v) ? f16_position(65536.0) : f16_position(std::fabs(v));
    return std::signbit(v) ? -p : p;
  };
  return std::fabs(signed_position(computed) - signed_position(exact));
}

}  // namespace

void Tally::element(const char* output, int64_t row, int64_t col, float computed, double exact,
                    double allowed, bool main, DType dtype) {
  const double ulp = main ? ulp_in(dtype, computed, exact) : 0;
  ev_.max_ulp = std::max(ev_.max_ulp, ulp);
  double ratio = 0;
  if (allowed == kInf) {
    // the bound promises nothing for this element (evaluate.h)
  } else if (std::isnan(exact)) {
    if (!std::isnan(computed)) mismatch(ratio);
  } else if (std::isinf(exact)) {
    if (static_cast<double>(computed) != exact) mismatch(ratio);
  } else if (std::isnan(allowed)) {
    // an infinite scale, which only a non-finite input makes (exact non-finite above)
  } else if (std::isinf(computed)) {
    // The bound is derived without overflow: a computation within the
    // allowance of the exact value may go beyond the output format's
    // largest finite value on the side where exact +- allowance does, and
    // round to that infinity (allowance 0: an exact value beyond the range;
    // f16's ends at 65504, so a large gamma or a large dx overflows it).
    const double largest = largest_finite(dtype);
    if (!(computed > 0 ? exact + allowed > largest : exact - allowed < -largest)) mismatch(ratio);
  } else if (!std::isfinite(computed)) {
    mismatch(ratio);
  } else {
    const double error = std::fabs(static_cast<double>(computed) - exact);
    ratio = error == 0 ? 0 : error / allowed;  // x / 0 = +inf
  }
  OutputError& out = output_entry(output);
  if (ulp > out.max_ulp) {
    out.max_ulp = ulp;
    out.max_ulp_exact = exact;
  }
  if (ratio > out.max_error_over_bound) {
    out.max_error_over_bound = ratio;
    out.row = row;
    out.col = col;
  }
  if (ratio > ev_.max_error_over_bound || ev_.worst.output.empty()) {
    ev_.max_error_over_bound = ratio;
    ev_.worst = {output, row, col, computed, exact, allowed};
  }
}

OutputError& Tally::output_entry(const char* output) {
  for (OutputError& o : ev_.outputs)
    if (o.output == output) return o;
  ev_.outputs.push_back({output});
  return ev_.outputs.back();
}

void Tally::mismatch(double& ratio) {
  ev_.nonfinite_mismatch = true;
  ratio = kInf;
}

void merge_tally(Evaluation& ev, const Evaluation& part) {
  ev.max_ulp = std::max(ev.max_ulp, part.max_ulp);
  ev.nonfinite_mismatch = ev.nonfinite_mismatch || part.nonfinite_mismatch;
  if (part.worst.output.empty()) return;  // no element in the chunk
  if (part.max_error_over_bound > ev.max_error_over_bound || ev.worst.output.empty()) {
    ev.max_error_over_bound = part.max_error_over_bound;
    ev.worst = part.worst;
  }
}

}  // namespace normcheck::evaluation
