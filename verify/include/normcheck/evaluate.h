// Runs a kernel from the table on a problem and holds it to its bound.
//
// This is the one place that turns (kernel, inputs) into a verdict; `normcheck
// check`, the property suites, the fuzz driver and the reports all call it.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "normcheck/float_format.h"
#include "normcheck/kernel.h"
#include "normcheck/reference.h"
#include "normcheck/reference_linear.h"

namespace normcheck {

// A problem: row-major rows x cols. gamma/beta/dy empty when unused.
struct Problem {
  int64_t rows = 0, cols = 0;
  std::vector<float> x, gamma, beta, dy;
  float eps = 1e-5f;
  // The kernel sees every array starting this many floats past a 64-byte
  // boundary, so SIMD kernels meet misaligned rows.
  int misalign_floats = 0;
  // A norm followed by a Linear (is_norm_linear(op), kernel.h): W is
  // out_features x cols, row-major; bias holds out_features values or is
  // empty (no bias). Empty and 0 for the other ops.
  std::vector<float> weight, bias;
  int64_t out_features = 0;
  // A kernel whose spec adds a residual (op_spec.h, `add`): rows x cols,
  // added to x in front of the norm. Empty for the other kernels.
  std::vector<float> residual;
  // The kernel sees the rows of x, residual, y and residual_out this many
  // elements apart (0: cols, contiguous); the elements between rows are
  // padding it must neither read into its results nor write. Only a kernel
  // that takes strided rows (Kernel::takes_row_stride) is given a stride:
  // evaluate() declines the problem for the others.
  int64_t row_stride = 0;
  // A kernel whose spec quantizes y with a static scale (op_spec.h,
  // Quantization, scale=static): the scale y is divided by, a positive
  // finite float. 0 for the others (a dynamic scale is the kernel's output).
  float scale = 0;
};

// How evaluate() judges the outputs of a row with a non-finite input (x, or
// dy for a backward), docs/semantics.md "Rows with a non-finite input".
enum class NonFinite {
  // Either convention, element by element: the row-NaN convention (what the
  // reference gives: y, dx, z and rstd/rrms NaN) or the IEEE evaluation of the
  // op's formula. A finding only where the output hides the fault (finite
  // where every convention is non-finite) or where a finite value is not the
  // one the IEEE evaluation gives; NaN against an infinity, or the sign of an
  // infinity, is not.
  // Under both rules the mean of such a row is the extended-real mean, held
  // to be non-finite (NaN or either infinity, by the summation), and
  // dgamma/dbeta are the extended-real column sums, held like every exact
  // value (docs/semantics.md, "Rows with a non-finite input").
  row_nan_or_ieee,
  // The row-NaN convention alone: y, dx, z and rstd/rrms of the row NaN.
  row_nan_only,
};

// Which convention a kernel's outputs follow on the rows with a non-finite
// input, over the elements where the two can differ (y, dx, z, rstd, rrms).
// combine() folds the verdicts of several elements, rows or problems.
enum class NonFiniteConvention {
  none,     // no such element was judged
  both,     // every element is what both conventions give (NaN where the IEEE evaluation is non-finite)
  row_nan,  // NaN everywhere, where the IEEE evaluation gives a finite value somewhere
  ieee,     // the IEEE evaluation everywhere, an infinity or its finite value where row-NaN gives NaN
  mixed,    // accepted element by element, but neither convention throughout
  neither,  // an element neither convention admits: a finite value where both are non-finite, or a
            // finite value that is not the IEEE one
};
NonFiniteConvention combine(NonFiniteConvention a, NonFiniteConvention b);
std::string_view to_string(NonFiniteConvention c);  // "none", "both", "row-NaN", "IEEE", "mixed", "neither"

// Which output broke its bound (or showed the worst ratio), for reports.
struct Worst {
  std::string output;  // "y", "mean", "rstd", "rrms", "dx", "dgamma", "dbeta", "z"
  int64_t row = -1, col = -1;
  float computed = 0;
  double exact = 0;
  double allowed = 0;  // the bound's allowance for this element
};

// The worst error of one output over the problem.
struct OutputError {
  std::string output;              // as in Worst::output
  double max_ulp = 0;              // main outputs only (y or dx, dgamma, dbeta, z), scaled_ulp_error; 0 for the others
  double max_ulp_exact = 0;        // the exact value where max_ulp is
  double max_ulp_elementwise = 0;  // main outputs only: ulp_error in the output's format (Evaluation)
  double max_error_over_bound = 0; // +inf: a NaN/inf mismatch
  int64_t row = -1, col = -1;      // where the ratio's maximum is (-1: every ratio 0)
};

// One element of the main output (y forward, dx backward) as evaluate()
// judged it (EvaluateOptions::keep_main_elements).
struct MainElement {
  float computed = 0;  // the kernel's value (widened from 16 bits if need be)
  double exact = 0;    // the reference's
  double xhat = 0;     // the exact normalized value of its input (x - mu) r or x r
  // The allowance evaluate() held it to (y_allowance, dx_allowance): +inf where
  // nothing is promised (a coefficient is +inf, or row_checked() is false), 0
  // on a row with a non-finite input (held to EvaluateOptions::nonfinite, not
  // to an allowance), NaN where a non-finite input makes a scale infinite.
  double allowed = 0;
};

struct Evaluation {
  std::string kernel;
  Op op{};
  std::string declined;            // non-empty: the kernel declined; nothing ran
  // Two ULP figures over the main outputs (y or dx, dgamma, dbeta, z), on
  // the elements held to an allowance whose computed and exact values are
  // both finite (docs/semantics.md, "Metrics"):
  //   max_ulp: in ULPs of the row's scale (scaled_ulp_error, metrics.h): the
  //     element's error counted in ULPs of the magnitude it is computed from,
  //     what a kernel's arithmetic answers for;
  //   max_ulp_elementwise: in ULPs of the output's format at the element
  //     (ulp_error, float_format.h): the distance a float comparison sees,
  //     large on an element that cancels to a tiny value.
  // Neither counts a NaN or inf, which is judged by the ratio: beside
  // nonfinite_mismatch the doors print them as NaN, never as 0.
  double max_ulp = 0;
  double max_ulp_elementwise = 0;
  double max_error_over_bound = 0; // max over every output of error / allowance
  double normwise = 0;             // normwise error of the main output
  // NaN/inf where the reference is finite, or a finite value where the
  // non-finite rule (EvaluateOptions::nonfinite) wants a non-finite one
  bool nonfinite_mismatch = false;
  // The convention of the outputs on rows with a non-finite input, whichever
  // EvaluateOptions::nonfinite held them to.
  NonFiniteConvention nonfinite_convention = NonFiniteConvention::none;
  bool out_of_bounds_write = false;// a guard zone around an output changed
  bool unwritten_output = false;   // an output element kept the sentinel it was filled with
  bool wrote_input = false;        // an input array changed
  bool pass = true;                // ratio <= 1 and none of the above
  Worst worst;
  std::vector<OutputError> outputs;  // every output checked, in the order first met
  // A hash of the bits of every output (y, mean, rstd / rrms; dx, dgamma,
  // dbeta), so that two runs of one problem can be compared bit for bit.
  uint64_t output_digest = 0;
  // Per row, a hash of the bits of the row's own outputs (y, dx or z, its
  // statistics, residual_out; not dgamma and dbeta, sums over the rows), so
  // that a row run alone or at another place in a batch can be compared bit
  // for bit with itself in this problem (batch invariance, fuzz/isolation.h).
  std::vector<uint64_t> row_digests;
  // With EvaluateOptions::keep_main_elements: every element of the main
  // output, rows x cols, row-major (empty when declined or outputs_only).
  std::vector<MainElement> main_elements;
  // A kernel with a spec of its own (Kernel::spec, a forward spec) is held
  // to its spec's rounding policy: every output within the range of values
  // the policy admits (spec_policy.h; max_error_over_bound and worst measure
  // against that range, worst.exact being its middle). Beside it, against
  // exact math (the op with no rounding point):
  std::string spec;                // the spec's text form; empty for the table's ops
  // A spec that quantizes y (op_spec.h, Quantization): the codes' format. Its
  // y elements are codes (Worst: the code's value, the exact y over the
  // scale, the range's reach in codes), exact_math_ulp and
  // policy_exact_math_ulp are distances in codes, normwise those of the
  // dequantized y; a dynamic scale is the output "scale", and
  // scale_apply=multiply's and the word amax's are "scale_inv" and "amax".
  std::optional<QuantCast> quantized;
  // A quantized y outside its declared cast's codes: the variants of the
  // declared cast (spec_policy.h, cast_variants: the other int8 tie or clamp,
  // the other ways to apply the scale, fp8 saturation) its outputs are
  // consistent with, as spec texts. A kernel's departure in the cast itself
  // is a `quantization` finding that names the cast it follows, before any
  // other rounding policy is tried.
  std::vector<std::string> consistent_casts;
  double exact_math_ulp = 0;       // y's largest scaled ULP error against exact math (= max_ulp; a backward's: its main outputs')
  double policy_exact_math_ulp = 0;// the same figure for the policy's own correctly rounded y
  // When the outputs break the declared policy: the other policies
  // (candidate_policies(), op_spec text) they are consistent with on this
  // problem; empty when none is (an accuracy defect, not another policy).
  std::vector<std::string> consistent_policies;
  // With EvaluateOptions::identify: every candidate policy of the spec
  // (candidate_policies(), spec_policy.h) against the outputs. A forward
  // policy is held to its admissible range (spec_policy.h); a backward one
  // to the allowances its words give (evaluate/backward_spec.h), by the
  // checks that judge the declared spec.
  struct PolicyFit {
    std::string spec;           // the policy, in the text form
    int64_t outside = 0;        // output elements outside its admissible range (0: consistent)
    // Its own correctly rounded y against exact math, as exact_math_ulp; NaN
    // for a backward policy, which has no result of its own (its allowances
    // are around exact math).
    double exact_math_ulp = 0;
  };
  std::vector<PolicyFit> policy_fits;
  // The tight standard (docs/accuracy.md, "The tight standard"), held beside
  // the bound on the realistic rows (realistic_row) of a kernel whose bound
  // has one (tight_bound, bounds.h: the default forward bounds): every
  // output of such a row within the range the probabilistic bound admits.
  // `pass` is false when an output is beyond it. The ratio is taken as the
  // bound's (Tally::range_element); 0 where no row was held to it.
  int64_t tight_rows = 0;           // rows held to the tight standard
  double max_error_over_tight = 0;  // the largest ratio over them
  Worst tight_worst;                // where it is; allowed: the tight range's reach
};

// Whether `ev`'s outputs are within the bound and beyond the tight standard:
// the finding is then reported at tight_worst, with both figures.
inline bool beyond_tight_only(const Evaluation& ev) {
  return ev.max_error_over_bound <= 1 && ev.max_error_over_tight > 1;
}

// A ULP figure of `ev` (max_ulp, max_ulp_elementwise, exact_math_ulp) as the
// doors print it: NaN beside a NaN/inf mismatch, which the figures do not
// count, so that no door prints 0 for an output that is NaN.
inline double ulp_figure(const Evaluation& ev, double figure) {
  return ev.nonfinite_mismatch ? std::numeric_limits<double>::quiet_NaN() : figure;
}

// The exact reference of one problem for one kernel's op and dtype (a 16-bit
// kernel is held to the reference of its inputs rounded to that dtype),
// computed once by exact_reference() and handed to evaluate() with
// EvaluateOptions::reference, so that callers that need the exact values
// themselves do not compute them again. Only the op's members are filled.
struct ExactReference {
  Op op{};
  DType dtype{};
  int64_t rows = 0, cols = 0;
  LayerNormFwdReference layernorm_fwd;  // layernorm_fwd; layernorm_bwd: the saved mean and rstd alone (layernorm_bwd's)
  LayerNormBwdReference layernorm_bwd;  // layernorm_bwd
  RmsNormFwdReference rmsnorm_fwd;      // rmsnorm_fwd; rmsnorm_bwd: the saved rrms alone (rmsnorm_bwd's)
  RmsNormBwdReference rmsnorm_bwd;      // rmsnorm_bwd
  NormLinearReference norm_linear;      // layernorm_linear_fwd, rmsnorm_linear_fwd
  // The op's exact normalized values and main output (rows x cols; z of a
  // norm followed by a Linear is rows x out_features).
  const std::vector<double>& xhat() const;
  const std::vector<double>& main_exact() const;
};

// The reference evaluate(kernel, problem) compares with. Validates the problem
// as evaluate() does (std::invalid_argument).
ExactReference exact_reference(const Kernel& kernel, const Problem& problem);

// How evaluate() runs the kernel, beyond the defaults.
struct EvaluateOptions {
  // Replaces the kernel's own bound (used for plugins that ask for a tolerance).
  std::optional<BoundFn> bound_override;
  // Every array in a PageGuardedBlock (guard_pages.h) with its end flush
  // against the trailing guard page, so a read or write past the end faults;
  // the canary zone before the start stays (the problem's misalignment is not
  // used: the end's placement decides the start's). For kernels that run in a
  // child process: a fault there ends the process.
  bool guard_pages = false;
  // Run the kernel and fill the memory verdicts and output_digest only: no
  // reference, no accuracy verdict (max_ulp, the ratio and pass say nothing).
  // A second run for comparing outputs bit for bit costs the kernel alone.
  bool outputs_only = false;
  // Called with true just before the kernel's function is called and with
  // false just after it returns (a watchdog times the call alone).
  void (*around_call)(bool entering, void* context) = nullptr;
  void* context = nullptr;
  // The problem's reference from exact_reference(kernel, problem), or null:
  // evaluate() computes it. evaluate() throws std::invalid_argument when its
  // op, dtype or shape is not the kernel's and the problem's. A backward op and
  // a norm followed by a Linear use it; a forward norm, judged by its spec's
  // reference (spec_reference.h, whose fast phase costs what the float
  // reference costs), only checks that it fits.
  const ExactReference* reference = nullptr;
  // Fill Evaluation::main_elements: each element's value, exact value and
  // allowance, for suites that derive their own tolerances from the bound.
  // Not for a norm followed by a Linear (its z has no one xhat): evaluate()
  // throws std::invalid_argument then.
  bool keep_main_elements = false;
  // The rule for rows with a non-finite input (NonFinite above).
  NonFinite nonfinite = NonFinite::row_nan_or_ieee;
  // A kernel with a spec of its own: fill Evaluation::policy_fits.
  bool identify = false;
};

// How many of a kernel's cases were judged and how many it declined, with
// the reason of the first decline: every door (check, fuzz, identify, judge,
// the Python module, the test-suite CMake function) counts with it, so that a
// kernel none of whose cases was judged is never read as a pass
// (docs/cli.md, "Nothing judged is never a pass").
struct JudgedTally {
  int64_t judged = 0, declined = 0;
  std::string first_decline;  // evaluate()'s reason for the first case declined
  void add(const Evaluation& ev);     // judged, or declined with its reason
  void add_judged() { ++judged; }     // a case that ended without an evaluation (a crash, a hang)
  void add(const JudgedTally& other);
  bool nothing_judged() const { return judged == 0; }
  // "declined 1000 of 1000 cases: <reason>", or empty when none was declined.
  std::string declined_text(std::string_view unit = "cases") const;
};

// Why evaluate() judges no kernel of `spec` at all (a spec word whose policy
// it does not model yet), or empty: what `list` and the plugin loader warn
// about at load, and the reason evaluate() declines every problem of such a
// kernel with.
std::string spec_not_judged(const OpSpec& spec);

// Runs `kernel` on `problem` and compares with the exact reference.
// `bound_override`, when set, replaces the kernel's own bound (used for plugins
// that ask for a tolerance).
Evaluation evaluate(const Kernel& kernel, const Problem& problem,
                    std::optional<BoundFn> bound_override = std::nullopt);
Evaluation evaluate(const Kernel& kernel, const Problem& problem, const EvaluateOptions& options);

// The pieces evaluate() uses, for suites that derive tolerances from a bound
// (kernel.h states the formulas; each includes Bound::underflow_abs).
// The condition a row's bound is taken at: the reference's, with rows = 1 and
// r set.
RowCondition row_condition(const RowStats& stats);

// Whether evaluate() checks the row outputs (y or dx, rstd or rrms) of a row
// of a problem of `op` at all (docs/semantics.md, "What evaluate() promises").
// It does not when
//   - sigma^2 + eps = 0 (r = +inf): the row is ill-posed, its exact y is 0 * inf
//     while any rounding of the mean makes a kernel's finite;
//   - the op is a backward and the saved statistic fl(r) (rstd or rrms) may be
//     off r by more than u = 2^-24 relative. Every backward bound takes
//     fl(r) = r (1 + rho), |rho| <= u, which holds for r in [2^-126, 2^128 - 2^103):
//     float's normal range, and above FLT_MAX up to the overflow threshold, where
//     fl(r) = FLT_MAX is off by less than 2^103 / 2^128 = 2^-25. Outside it fl(r)
//     is +inf (r >= 2^128 - 2^103: e.g. x = [0 0x1p-149], eps = 0, r = 2^150, and
//     every kernel's dx is inf * 0 = NaN where the exact dx is 0) or subnormal or
//     0 (r < 2^-126, sigma > 2^126): no kernel can do better from that statistic.
//     The backward kernels' InputRange |x| <= 2^124 keeps r > 2^-126 (sigma <= 2^125,
//     eps < 2^128), so inside their range only the first case occurs.
// A row with a non-finite input is checked, by the rule of
// EvaluateOptions::nonfinite rather than by the bound.
bool row_checked(Op op, const RowStats& stats);

// Whether the tight standard holds a forward row of d values beside the bound
// (docs/accuracy.md, "The tight standard"): a realistic row. `centred` is the
// centred scale of the norm's input s as the kernel sees it (row_scale.h:
// row_scales(Op::layernorm_fwd, ...) of x, or of the stored x + residual of
// an `add` spec; for RMSNorm too: its sigma and |mean|/sigma). It is when
//   - every value is finite;
//   - its scale is of float32's normal range: sigma >= 2^-63 (its standard
//     deviation), so that the squares of its deviations are normal floats,
//     the realistic domain's floor (kernel.h, kRealisticDomain); a constant
//     row is not realistic;
//   - its values are spread across the sums' roundings: |mean| <= sigma 2^20 / d.
//     The rounding of S + s_k is decided by the bits of s_k below the ulp of
//     the partial sum S, |S| <= d max|s|; it behaves as a random variable of
//     mean zero (Higham and Mary's model, which gamma_tilde rests on) when s
//     varies over many such ulps, sigma >= 8 ulp(d |mean|) ~ d |mean| 2^-20.
//     On rows whose values are nearly alike (a constant row, |mean|/sigma of
//     2^20 / d and more) sequential summation errs in one direction at every
//     step and its error grows as d u, not sqrt(d) u;
//   - its bulk is spread too: the median absolute deviation from the median
//     of `s` is at least sigma / 8 (a normal row's is 0.67 sigma). A row whose
//     sigma comes from a few large values while most values are nearly alike
//     (a heavy tail over many binades: most x tiny, a few near 2^56) sums its
//     bulk as a constant row does, between the few terms that move the sum.
// RowScale's figures are the exact ones correctly rounded to double, the
// median's in double: a row within a few units of 2^-53 of a threshold may
// fall on either side.
bool realistic_row(const RowScale& centred, std::span<const float> s);

// The allowance of output i of a row of a norm followed by a Linear
// (kernel.h, Bound: the z formula): w_row is row i of W; gamma/beta are the
// norm's (empty: 1, 0); xhat the row's exact normalized values; t, s, c_abs
// and exact_error the reference's scales and own error for this output
// (reference_linear.h). +inf where a coefficient is +inf; the formula's sums
// are raised by the relative gamma_(2d+2)(2^-53) a float64 sum of
// non-negative terms can lose, and exact_error is added.
double z_allowance(const Bound& b, std::span<const float> w_row, std::span<const float> gamma,
                   std::span<const float> beta, std::span<const double> xhat, double t, double s,
                   double c_abs, double exact_error);

// Why evaluate() declines a problem of a norm followed by a Linear: no W
// (out_features 0: a problem made for a plain norm), or a non-finite
// parameter; empty when it takes it. Throws std::invalid_argument on sizes
// that do not fit.
std::string norm_linear_problem_declined(const Kernel& kernel, const Problem& problem);

// The problem with only the rows in `order`, in that order (x, dy and the
// residual; the per-column arrays and W, b as they are).
Problem with_rows(const Problem& problem, std::span<const int64_t> order);

// The problem as a request to `kernel` (kernel.h): its shape, x, dy when
// the kernel's op is a backward, and the rows' scales (row_scale.h) when its
// domain has a row term. declines(kernel, request_for(kernel, problem))
// is what evaluate() asks before it runs anything; for a backward op it then
// asks again with the saved statistics it computed.
Request request_for(const Kernel& kernel, const Problem& problem);

// kernel.h: a coefficient of +inf promises nothing for that output on that row.
// The allowances below are +inf exactly then (never inf * 0 = NaN), and
// evaluate() checks nothing of such an element: not its value, not whether it
// is finite, not its NaN/inf placement (an intermediate that overflows can turn
// an exact inf into NaN). Where every coefficient is finite, an exact NaN must
// be met by NaN and an exact inf by the same inf; the allowance is NaN, not
// +inf, where an input is non-finite and makes a scale infinite.
// gamma = 1 without gamma, beta = 0 without beta; xhat the exact normalized value.
double y_allowance(const Bound& b, double gamma, double beta, double xhat);
// g = gamma_i dy_i; the means are the reference's mean|g| and mean|g xhat| of the row.
double dx_allowance(const Bound& b, double r, double g, double xhat, double mean_abs_g,
                    double mean_abs_g_xhat);

}  // namespace normcheck
