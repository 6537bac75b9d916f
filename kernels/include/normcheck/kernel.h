// The kernel table: every kernel normcheck measures, ours or not, is one row.
//
// Tests, properties, benchmarks, the fuzz driver and the reports iterate
// kernel_table(); nothing lists kernels by hand anywhere else. A kernel file
// defines its row(s) next to the code, and kernels/registry.cpp is the one
// ordered list that collects them (the oneDNN style: one implementation per
// file, one list that registers them all).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "normcheck/plugin.h"

namespace normcheck {

enum class Op {
  layernorm_fwd,  // y, mean, rstd from x, gamma, beta, eps
  layernorm_bwd,  // dx, dgamma, dbeta from dy, x, gamma, saved mean and rstd
  rmsnorm_fwd,    // y, rrms from x, gamma, eps
  rmsnorm_bwd,    // dx, dgamma from dy, x, gamma, saved rrms
  // A normalization followed by a Linear, fused: z = W Norm(x; gamma, beta) + b
  // with W out_features x cols (PyTorch's out x in layout) and b out_features
  // (or none). docs/folding.md: the rows compute it unfolded (affine, then the
  // Linear) or folded (W' = W diag(gamma), b' = W beta + b, then no affine).
  layernorm_linear_fwd,  // z from x, gamma, beta, W, b, eps
  rmsnorm_linear_fwd,    // z from x, gamma, W, b, eps
};

// The ops that end in a Linear layer (their Problem carries W, b, out_features).
constexpr bool is_norm_linear(Op op) {
  return op == Op::layernorm_linear_fwd || op == Op::rmsnorm_linear_fwd;
}

enum class Origin {
  ours,         // a kernel normcheck ships and vouches for
  control,      // deliberately weak: kept to show the checks catch it
  third_party,  // an adapter around another library (oneDNN, libtorch)
  plugin,       // loaded from a user's shared library
};

// How a kernel is implemented. Tests and bench select kernels by it (every
// Highway kernel on every target; a kernel's speed next to oneDNN's), never by
// their names.
enum class Family {
  scalar,    // plain C++, one element at a time
  highway,   // Highway SIMD, dispatched per target at run time, threaded
  onednn,    // the oneDNN adapter
  libtorch,  // the libtorch adapter
  external,  // a user's plugin: how it computes is not known
};

// Element type of the kernel's inputs and outputs. The math is float32 for
// every kernel; bf16/f16 kernels round their inputs and outputs.
enum class DType { f32, bf16, f16 };

std::string_view to_string(Op op);
std::string_view to_string(Origin origin);
std::string_view to_string(DType dtype);
std::string_view to_string(Family family);

// RMSNorm backward (nc_rmsnorm_bwd_fn) and the 16-bit storage variants (bf16 or
// f16 bits; which one is the row's dtype) are the plugin ABI's extension types.
using LayerNormFwd16Fn = nc_layernorm_fwd16_fn;
using LayerNormBwd16Fn = nc_layernorm_bwd16_fn;
using RmsNormFwd16Fn = nc_rmsnorm_fwd16_fn;
using RmsNormBwd16Fn = nc_rmsnorm_bwd16_fn;

// Norm followed by a Linear (Op::layernorm_linear_fwd, rmsnorm_linear_fwd),
// float32 only and not part of the plugin ABI: x rows x cols, gamma/beta cols
// (each may be null: no affine), w out_features x cols row-major, bias
// out_features (null: no bias), z rows x out_features.
using LayerNormLinearFwdFn = void (*)(const float* x, const float* gamma, const float* beta,
                                      const float* w, const float* bias, float* z, int64_t rows,
                                      int64_t cols, int64_t out_features, float eps);
using RmsNormLinearFwdFn = void (*)(const float* x, const float* gamma, const float* w,
                                    const float* bias, float* z, int64_t rows, int64_t cols,
                                    int64_t out_features, float eps);

struct Kernel;
struct KernelArgs;  // invoke.h

// A kernel whose code runs in another process: a plugin's, in a kernel host
// (fuzz/kernel_host.h). invoke() hands the call to `call`, which runs it there
// on copies of the arrays and copies the outputs back; it throws when the call
// cannot complete (the host crashed, hung, or wrote outside the arrays).
struct RemoteKernelFn {
  void (*call)(const void* context, const Kernel& kernel, const KernelArgs& args) = nullptr;
  const void* context = nullptr;
};

// A version-2 kernel (plugin.h): any op spec, its tensors as descriptors.
using SpecKernelFn = nc_kernel_v2_fn;

using KernelFn = std::variant<nc_layernorm_fwd_fn, nc_layernorm_bwd_fn, nc_rmsnorm_fwd_fn,
                              nc_rmsnorm_bwd_fn, LayerNormFwd16Fn, LayerNormBwd16Fn,
                              RmsNormFwd16Fn, RmsNormBwd16Fn, LayerNormLinearFwdFn,
                              RmsNormLinearFwdFn, SpecKernelFn, RemoteKernelFn>;

struct OpSpec;  // op_spec.h

// What an a-priori bound may depend on: the row's size and condition, all
// computed exactly (from the reference) by the verifier. r is the exact
// 1/sqrt(sigma^2 + eps) (LayerNorm) or 1/sqrt(mean(x^2) + eps) (RMSNorm).
struct RowCondition {
  int64_t d = 0;          // row length
  int64_t rows = 1;       // rows that dgamma/dbeta sum over
  double kappa = 0;       // mean_i |x_i| * r   (<= |mu|/sigma + 1 when eps << sigma^2)
  double max_kappa = 0;   // max_i |x_i| * r
  double eps_share = 0;   // eps * r^2 in [0, 1]: eps's share of sigma^2 + eps
  double r = 0;           // r itself: the row's absolute scale, which only the cost of
                          // gradual underflow depends on (0: not known, underflow ignored)
  // Backward only (0 elsewhere, and 0 = not known): the magnitudes that decide
  // whether a form's intermediates can overflow or underflow where the exact
  // gradient does not (e.g. layernorm_bwd.pytorch_form's sum dy*gamma*x).
  double max_abs_dy = 0;     // max_i |dy_i|
  double max_abs_g = 0;      // max_i |gamma_i dy_i| (exact: a double holds the product)
  double max_abs_gamma = 0;  // max_i |gamma_i| (1 without gamma)
};

// A bound on the error of every output, as coefficients the verifier turns into
// a per-element allowance (xhat_i is the exact normalized value, g_i = gamma_i *
// dy_i, means are over the row):
//   y:      |y^ - y|      <= |gamma_i| (xhat_abs + xhat_rel |xhat_i|) + affine_rel (|gamma_i xhat_i| + |beta_i|)
//   mean:   |mean^ - mean| <= mean_rel * mean|x|
//   stat:   |r^ - r|      <= stat_rel * r           (rstd or rrms)
//   dx:     |dx^ - dx|    <= r (dx_g |g_i| + (dx_mean_g + dx_xhat_mean_g |xhat_i|) mean|g|
//                               + (dx_proj_abs + dx_proj_rel |xhat_i|) mean|g xhat|)
//   dgamma: |dgamma^ - dgamma| <= dgamma_rel * sum_rows |dy xhat| + dgamma_abs * sum_rows |dy|
//   dbeta:  |dbeta^ - dbeta|   <= dbeta_rel  * sum_rows |dy|
//   z (norm followed by a Linear, is_norm_linear(op)), output i of a row:
//           |z^_i - z_i| <= sum_j |W_ij| yallow_j + linear_rel T_i + fold_weight_rel S_i
//                           + fold_bias_rel |c_i| + linear_abs
//           with yallow_j the y allowance above at (gamma_j, beta_j, xhat_j),
//           T_i = sum_j |W_ij| (|gamma_j xhat_j| + |beta_j|) + |b_i| (what the
//           Linear's own rounding scales with), S_i = sum_j |W_ij gamma_j xhat_j|
//           and c_i = sum_j W_ij beta_j + b_i (what rounding the folded weights
//           and bias scale with). underflow_abs enters z only through yallow_j.
// Without gamma, gamma_i is 1; without beta, beta_i is 0. A coefficient of
// +infinity means the algorithm promises nothing for that output on this row.
// dgamma/dbeta sum over rows: their coefficients are taken at the condition
// with `rows` set and kappa, max_kappa the largest over the rows (bounds grow
// with kappa). dx_xhat_mean_g and dgamma_abs carry the saved mean's rounding
// (|mean^ - mu| r <= u kappa shifts every xhat by up to u kappa, whatever
// xhat_i is): see docs/accuracy_backward.md.
struct Bound {
  double xhat_abs = 0, xhat_rel = 0, affine_rel = 0;
  double mean_rel = 0, stat_rel = 0;
  double dx_g = 0, dx_mean_g = 0, dx_proj_abs = 0, dx_proj_rel = 0;
  double dgamma_rel = 0, dbeta_rel = 0;
  double dx_xhat_mean_g = 0, dgamma_abs = 0;
  // Added to the allowance of every output: what gradual underflow can cost in
  // absolute terms (a product that lands below 2^-126 is off by up to 2^-150).
  double underflow_abs = 0;
  // z of a norm followed by a Linear (see the formula above).
  double linear_rel = 0, fold_weight_rel = 0, fold_bias_rel = 0, linear_abs = 0;
};

using BoundFn = Bound (*)(const RowCondition&);

// The kernel's declared domain: the problems it supports and promises its
// bound on. declines() turns a problem outside it away with a reason that names
// the limit; generators and fuzzers stay inside it; the reports list what lies
// outside as the kernel's limits, never as findings; `normcheck list` shows it.
// A kernel whose algorithm squares x before subtracting the mean, say,
// supports |x| <= sqrt(FLT_MAX / d); a production kernel that is never called
// with eps = 0 declares eps >= its smallest eps. The defaults accept every
// problem. Its one text form (kernels/domain_text.cpp, domain_text() and
// parse_domain() below) is what plugins and the test-suite CMake function
// declare it with.
struct InputRange {
  double max_abs_x = std::numeric_limits<float>::max();
  bool sqrt_d_scaled = false;     // if true the limit is max_abs_x / sqrt(d)
  bool handles_nonfinite = true;  // NaN/inf inputs propagate as docs/semantics.md says
  float min_eps = 0;              // eps >= min_eps (0: every eps, 0 included); a float, as eps is
  int64_t min_d = 1, max_d = std::numeric_limits<int64_t>::max();  // min_d <= d <= max_d
  // Every nonzero finite x has |x| >= min_abs_x (0: no limit). Zeros stay
  // inside: a zero is a realistic value; a value below the limit (a
  // subnormal under |x|>=2^-126) is one a kernel that flushes it may read as 0.
  double min_abs_x = 0;
  // The row terms: properties of each finite row of the norm's input (x, or
  // x + residual for a spec that adds one), read from the reference's exact
  // statistics (RowScale, verify's row_scale.h). sigma is the standard
  // deviation (LayerNorm) or the rms sqrt(mean(x^2)) (RMSNorm).
  double max_mean_over_sigma = std::numeric_limits<double>::infinity();  // |mean|/sigma <= this (LayerNorm ops)
  double min_sigma = 0;  // sigma >= this (0: no limit)

  // The largest |x| on rows of length d (d < 1 counts as 1).
  double limit(int64_t d) const;
  // Whether a row term limits anything (declines() then needs Request::row_scales).
  bool has_row_terms() const { return min_sigma > 0 || max_mean_over_sigma < std::numeric_limits<double>::infinity(); }
  bool operator==(const InputRange&) const = default;
};

// The text form of a domain: blank-separated terms, each stating one limit,
// e.g. "eps>=1e-06 d=1..65536 |x|<=10000 finite":
//   eps>=E          min_eps = E (a number >= 0, rounded to float as eps is)
//   d=A..B          min_d = A, max_d = B (integers, 1 <= A <= B)
//   d>=A, d<=B      one end of the d range
//   |x|<=M          max_abs_x = M (> 0), flat;  |x|<=M/sqrt(d): sqrt_d_scaled
//   finite          handles_nonfinite = false (NaN/inf inputs are outside)
//   |x|>=M          min_abs_x = M (> 0): every nonzero x has |x| >= M
//   |mean|/sigma<=K max_mean_over_sigma = K (> 0)
//   sigma>=S        min_sigma = S (> 0)
//   realistic       the preset kRealisticDomain names (below)
//   any             no term: the text of the default domain
// Terms may come in any order, each at most once. A preset sets its terms
// first; a term stated next to it replaces the preset's value for that field
// ("realistic eps>=1e-06"). domain_text() prints the
// terms that differ from the default, in the order above, with numbers that
// parse back to the same values (a power of two 2^k with |k| >= 10 as
// "2^k", which the parser reads too).
std::string domain_text(const InputRange& domain);

// The realistic inputs of a trained model's norm (docs/plugins.md, "The
// realistic preset", says why each number): what `realistic` stands for.
inline constexpr std::string_view kRealisticDomain = "eps>=1e-12 finite |x|>=2^-126 |mean|/sigma<=10000 sigma>=2^-63";

// The domain `text` states, starting from `base`: a term replaces base's value
// for its field, the fields it does not name keep base's. Throws
// std::invalid_argument with a message that quotes the term at fault.
InputRange parse_domain(std::string_view text, const InputRange& base = {});

struct Shape {
  int64_t rows = 0, cols = 0;
  bool has_gamma = false, has_beta = false;
  int64_t out_features = 0;  // a norm followed by a Linear: the Linear's outputs (0 elsewhere)
};

// Returns why the kernel cannot run this problem, or an empty string when it
// can. Called before every run; `normcheck list` shows the reason for a
// representative shape.
using DeclineFn = std::string (*)(const Shape&);

// Backward only: why the kernel cannot take a row's saved statistic (rstd for
// LayerNorm, rrms for RMSNorm, as the float the forward saved), or an empty
// string when it can. For an API that takes another statistic than the
// table's, e.g. oneDNN's variance = 1/rstd^2, which float cannot hold for
// every rstd. evaluate() asks it for every row before running the kernel and
// declines the whole problem when a row is refused.
using SavedStatisticDeclineFn = std::string (*)(float saved_statistic);

struct Kernel {
  std::string_view name;       // unique, [a-z0-9_.]+, e.g. "layernorm_fwd.twopass"
  Op op;
  Origin origin;
  DType dtype;
  std::string_view algorithm;  // one line: how it computes (shown by `list`)
  KernelFn fn;
  BoundFn bound;               // the a-priori bound the checks hold it to
  InputRange range = {};       // its declared domain (default: every problem)
  DeclineFn declines = nullptr;  // nullptr: accepts every shape
  SavedStatisticDeclineFn declines_saved_statistic = nullptr;  // nullptr: accepts every one
  // LayerNorm forward only: y within this many ULP of the exact y with
  // gamma = 1, beta = 0, for every finite row (0: no such promise beyond the
  // bound). The property suite's within_ulp_promise holds the kernel to it.
  double ulp_promise = 0;
  Family family = Family::scalar;
  // A bf16/f16 row that runs a float32 row's algorithm on widened inputs names
  // that row here (empty otherwise): its input range binds the 16-bit row too,
  // and its bound is where the 16-bit row's starts.
  std::string_view float32_counterpart = {};
  // The kernel's op spec (op_spec.h) when it is not the one its op and dtype
  // name (spec_of(op, dtype)): a version-2 plugin's fused add, 1 + gamma,
  // mixed formats or rounding policy. op is then the norm and direction
  // (layernorm_fwd, rmsnorm_fwd, ...) and dtype the format of x. Owned by
  // whoever made the row (the plugin loader keeps its rows' specs).
  const OpSpec* spec = nullptr;
  // Takes rows that are not contiguous (KernelArgs::row_stride): a
  // version-2 kernel, called with tensor descriptors.
  bool takes_row_stride = false;
};

// Every built-in kernel, in the order of kernels/registry.cpp, followed by the
// rows added with add_kernel_rows() (plugins loaded for this run).
std::span<const Kernel> kernel_table();

// Appends rows (origin plugin) to the table for the rest of the process. Call
// before taking spans or pointers into kernel_table(): appending may move the
// rows. Throws std::invalid_argument when a name is already in the table.
void add_kernel_rows(std::span<const Kernel> rows);

// The row with this name, or nullptr.
const Kernel* find_kernel(std::string_view name);

// The exact scale of one row of the norm's input, what the domain's row terms
// read (InputRange): verify's row_scales() computes it from the reference.
struct RowScale {
  bool finite = true;         // every element finite (the row terms bind finite rows only)
  double scale_square = 0;    // sigma^2 (LayerNorm) or mean(x^2) (RMSNorm), correctly rounded to double
  double mean_over_sigma = 0; // |mean|/sigma (+inf on a constant row); NaN for RMSNorm, where no mean is subtracted
};

// What a kernel is asked to run, as far as the caller knows it. The shape
// always; eps, x (and dy, backward) to hold the problem to the declared domain
// (InputRange); the saved statistic (backward: rstd for LayerNorm, rrms for
// RMSNorm, one per row as the forward saved it) for
// Kernel::declines_saved_statistic; each row's scale for the row terms. An
// empty span, vector or eps is not checked.
struct Request {
  Shape shape;
  std::optional<float> eps = {};  // the problem's eps (empty: not checked)
  std::span<const float> x = {}, dy = {};
  std::span<const float> saved_statistic = {};
  std::vector<RowScale> row_scales = {};  // one per row (empty: the row terms are not checked)
};

// The one gate: why `kernel` declines `request`, or an empty string when it
// takes it. In this order: the shape (Kernel::declines), a d outside the
// declared domain's d range, an eps below its min_eps, a non-finite x or dy
// the kernel does not handle, an |x| beyond its limit, a nonzero |x| below its
// min_abs_x, a row outside a row term (Request::row_scales; the reason names
// the term and the row), a row's saved statistic it refuses (the reason names
// the row). A kernel promises nothing
// for what it declines: evaluate() runs nothing then, `normcheck list` shows
// the reason for a typical shape, fuzz and the reports skip or file it.
std::string declines(const Kernel& kernel, const Request& request);

}  // namespace normcheck
