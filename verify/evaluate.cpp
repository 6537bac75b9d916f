// evaluate(): runs one kernel of the table on one problem, in guarded buffers,
// and holds every output to the kernel's bound against the exact reference.
//
// What it checks, in this order of severity:
//   - memory: each array sits in a 64-byte-aligned buffer at the problem's
//     misalignment, between two guard zones filled with a canary; outputs are
//     prefilled with a signalling-NaN sentinel that no arithmetic produces
//     (a signalling NaN only arises by copying one). A changed guard is an
//     out-of-bounds write, a surviving sentinel an unwritten output, a changed
//     input byte a write to an input;
//   - which rows: row_checked() (evaluate.h) says which rows' outputs are
//     checked at all: not an ill-posed row (sigma^2 + eps = 0), nor a backward
//     row whose saved statistic fl(r) is not within u of r. dgamma promises
//     nothing when such a backward row is in the problem (its xhat enters every
//     column). A row with non-finite input must give NaN (docs/semantics.md),
//     whatever the bound; its mean/rstd are not checked. An infinite dy_j on an
//     xhat_j within the bound's own error of 0 (e.g. x_j = fl(mu) != mu) leaves
//     the sign of the exact +-inf dgamma_j undetermined: that column promises
//     nothing;
//   - promises: a +inf coefficient of the Bound promises nothing for that
//     output (kernel.h); the allowance is +inf and nothing of the element is
//     checked, its NaN/inf placement included;
//   - non-finite values otherwise (docs/semantics.md): where the reference is
//     NaN the kernel must give NaN, where it is +-inf the same infinity, where
//     it is finite a finite value, or an infinity on a side where exact +-
//     allowance reaches beyond the largest finite value of the output's
//     format (FLT_MAX; 65504 for f16): bounds are derived without overflow;
//   - accuracy: |computed - exact| / allowance per element (0/0 = 0), the
//     allowance being the Bound's formula (kernel.h) at the row's exact
//     condition.
// The exact values are doubles (the reference's rounding to 53 bits), so a
// ratio carries a relative uncertainty of ~2^-53 |exact| / allowance, far below
// anything a worst-case bound is ever attained to.
#include "normcheck/evaluate.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "normcheck/bounds.h"
#include "normcheck/guard_pages.h"
#include "normcheck/metrics.h"
#include "normcheck/reference.h"
#include "normcheck/reference_linear.h"
#include "normcheck/storage16.h"
#include "simd/thread_pool.h"

namespace normcheck {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// ---- 16-bit storage (conversions: normcheck/storage16.h) ----

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

// ---- guarded buffers ----

constexpr std::size_t kGuardBytes = 64;
constexpr unsigned char kCanary = 0xc5;
constexpr uint32_t kSentinel32 = 0x7fa5a5a5;  // signalling NaN (quiet bit 22 clear)
constexpr uint16_t kSentinelBf16 = 0x7f85;    // signalling NaN (quiet bit 6 clear)
constexpr uint16_t kSentinelF16 = 0x7d05;     // signalling NaN (quiet bit 9 clear)

// How the arrays of the evaluate() call in progress on this thread are laid
// out, and whom to tell around the kernel's call (EvaluateOptions).
thread_local const EvaluateOptions* t_options = nullptr;

bool page_guards_on() { return t_options && t_options->guard_pages; }

bool outputs_only() { return t_options && t_options->outputs_only; }

void around_call(bool entering) {
  if (t_options && t_options->around_call) t_options->around_call(entering, t_options->context);
}

template <class T>
class GuardedArray {
 public:
  // An array of n elements starting misalign_floats * 4 bytes past a 64-byte
  // boundary, each element set to `fill`, guards canaried. With page guards
  // (EvaluateOptions::guard_pages) the array ends flush against a PROT_NONE
  // page instead, with the canary zone before its start.
  GuardedArray(std::size_t n, int misalign_floats, T fill) : n_(n) {
    if (page_guards_on()) {
      block_ = std::make_unique<PageGuardedBlock>(kGuardBytes + n * sizeof(T));
      std::fill(block_->begin(), block_->end(), kCanary);
      base_ = block_->end() - n * sizeof(T);
      flush_end_ = true;
    } else {
      const std::size_t lead = kGuardBytes + 4 * static_cast<std::size_t>(misalign_floats);
      storage_.assign(64 + lead + n * sizeof(T) + kGuardBytes, kCanary);
      const auto address = reinterpret_cast<std::uintptr_t>(storage_.data());
      base_ = storage_.data() + (64 - address % 64) % 64 + lead;
    }
    for (std::size_t i = 0; i < n; ++i) data()[i] = fill;
  }
  GuardedArray(const std::vector<T>& values, int misalign_floats)
      : GuardedArray(values.size(), misalign_floats, T{}) {
    std::copy(values.begin(), values.end(), data());
  }
  GuardedArray(const GuardedArray&) = delete;
  GuardedArray& operator=(const GuardedArray&) = delete;

  T* data() { return reinterpret_cast<T*>(base_); }
  const T* data() const { return reinterpret_cast<const T*>(base_); }
  std::size_t size() const { return n_; }
  T operator[](std::size_t i) const { return data()[i]; }

  bool guards_intact() const {
    const auto is_canary = [](unsigned char b) { return b == kCanary; };
    const unsigned char* data_end = base_ + n_ * sizeof(T);
    return std::all_of(base_ - kGuardBytes, base_, is_canary) &&
           (flush_end_ || std::all_of(data_end, data_end + kGuardBytes, is_canary));
  }
  // Byte-for-byte equal to `values` (NaN payloads included).
  bool holds(const std::vector<T>& values) const {
    // memcmp's pointers must be valid even for 0 bytes, and an empty vector's data() may be null.
    return values.size() == n_ && (n_ == 0 || std::memcmp(data(), values.data(), n_ * sizeof(T)) == 0);
  }

 private:
  std::size_t n_;
  unsigned char* base_ = nullptr;
  bool flush_end_ = false;
  std::vector<unsigned char> storage_;
  std::unique_ptr<PageGuardedBlock> block_;
};

using FloatArray = GuardedArray<float>;
using HalfArray = GuardedArray<uint16_t>;

float sentinel32() { return std::bit_cast<float>(kSentinel32); }

// An output of the kernel as floats plus which elements still hold the sentinel.
struct Readback {
  std::vector<float> values;
  bool unwritten = false;
};

Readback read(const FloatArray& a) {
  Readback r;
  r.values.resize(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    r.values[i] = a[i];
    r.unwritten |= std::bit_cast<uint32_t>(a[i]) == kSentinel32;
  }
  return r;
}

Readback read(const HalfArray& a, DType t) {
  const uint16_t sentinel = t == DType::bf16 ? kSentinelBf16 : kSentinelF16;
  Readback r;
  r.values.resize(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    r.values[i] = from_16(t, a[i]);
    r.unwritten |= a[i] == sentinel;
  }
  return r;
}

// FNV-1a over the bits of every value of the outputs, in order.
uint64_t digest_of(std::initializer_list<const Readback*> outputs) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (const Readback* r : outputs)
    for (const float v : r->values) {
      const uint32_t bits = std::bit_cast<uint32_t>(v);
      for (int b = 0; b < 4; ++b) h = (h ^ ((bits >> (8 * b)) & 0xff)) * 0x100000001b3ull;
    }
  return h;
}

// The inputs a 16-bit kernel sees (rounded) and what the reference is given
// (the rounded values, widened); for f32 both are the problem's values.
struct StoredInput {
  std::vector<uint16_t> bits;
  std::vector<float> widened;
};

StoredInput store(DType t, const std::vector<float>& values) {
  StoredInput s;
  if (t == DType::f32) {
    s.widened = values;
    return s;
  }
  s.bits.resize(values.size());
  s.widened.resize(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    s.bits[i] = to_16(t, values[i]);
    s.widened[i] = from_16(t, s.bits[i]);
  }
  return s;
}

// An optional input array (gamma, beta): nullptr when the problem has none.
struct OptionalInput {
  OptionalInput(const std::vector<float>& values, int misalign)
      : array(values, misalign), present(!values.empty()) {}
  float* pointer() { return present ? array.data() : nullptr; }
  FloatArray array;
  bool present;
};

// ---- the element checks ----

class Tally {
 public:
  explicit Tally(Evaluation& ev) : ev_(ev) {}

  void element(const char* output, int64_t row, int64_t col, float computed, double exact,
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

 private:
  OutputError& output_entry(const char* output) {
    for (OutputError& o : ev_.outputs)
      if (o.output == output) return o;
    ev_.outputs.push_back({output});
    return ev_.outputs.back();
  }
  void mismatch(double& ratio) {
    ev_.nonfinite_mismatch = true;
    ratio = kInf;
  }
  Evaluation& ev_;
};

// What Tally leaves in `ev` after the elements of `part`'s chunk, when `part`
// was tallied from a fresh Evaluation: the larger ULP error, any mismatch, and
// the chunk's worst element if its ratio is larger (strictly: the first of
// equal ratios stays) or `ev` has none yet.
void merge_tally(Evaluation& ev, const Evaluation& part) {
  ev.max_ulp = std::max(ev.max_ulp, part.max_ulp);
  ev.nonfinite_mismatch = ev.nonfinite_mismatch || part.nonfinite_mismatch;
  if (part.worst.output.empty()) return;  // no element in the chunk
  if (part.max_error_over_bound > ev.max_error_over_bound || ev.worst.output.empty()) {
    ev.max_error_over_bound = part.max_error_over_bound;
    ev.worst = part.worst;
  }
}

// check_row(tally, row) for every row, in contiguous chunks of rows on the
// kernels' thread pool, each into its own Evaluation, merged in row order:
// the same figures and the same worst element as one Tally over the rows in
// order (Tally keeps the first element of the largest ratio), for every
// thread count.
template <class CheckRow>
void tally_rows(Evaluation& ev, int64_t rows, const CheckRow& check_row) {
  const int64_t chunks = std::min<int64_t>(rows, 4 * simd::thread_count());
  if (chunks <= 1) {
    Tally tally(ev);
    for (int64_t row = 0; row < rows; ++row) check_row(tally, row);
    return;
  }
  std::vector<Evaluation> parts(static_cast<std::size_t>(chunks));
  simd::parallel_for(chunks, [&](int64_t c) {
    Tally tally(parts[static_cast<std::size_t>(c)]);
    for (int64_t row = rows * c / chunks; row < rows * (c + 1) / chunks; ++row) check_row(tally, row);
  });
  for (const Evaluation& part : parts) merge_tally(ev, part);
}

double at_or(const std::vector<float>& v, std::size_t i, double missing) {
  return v.empty() ? missing : static_cast<double>(v[i]);
}

// The fn of the kernel's row as the type its op and dtype call for.
template <class Fn>
Fn function_of(const Kernel& k) {
  const Fn* fn = std::get_if<Fn>(&k.fn);
  if (!fn || !*fn)
    throw std::logic_error("evaluate: kernel " + std::string(k.name) +
                           ": its function does not have the type of its op and dtype");
  return *fn;
}

// The kernel's function for storage T: Fn32 for float arrays, Fn16 for 16-bit.
template <class Fn32, class Fn16, typename T>
auto function_for(const Kernel& k, const T* /* storage */) {
  if constexpr (std::is_same_v<T, float>) {
    return function_of<Fn32>(k);
  } else {
    return function_of<Fn16>(k);
  }
}

// The kernel's main output (y or dx) after call(x, dy, out) on guarded copies
// of x and dy (dy may be null: forward ops) and a guarded output full of the
// sentinel, in the kernel's storage: float arrays for f32, 16-bit ones
// otherwise (call gets the data pointers, dy's null when there is none).
struct MainRun {
  Readback out;
  bool memory_ok = true;    // every guard zone of x, dy, out intact
  bool inputs_kept = true;  // x and dy unchanged
};

template <class Call>
MainRun run_on_storage(const Kernel& k, const StoredInput& x, const StoredInput* dy, std::size_t n,
                       int misalign, const Call& call) {
  const auto run = [&](const auto& x_values, const auto* dy_values, auto sentinel,
                       const auto& read_out) {
    using Array = GuardedArray<decltype(sentinel)>;
    Array x_in(x_values, misalign);
    std::optional<Array> dy_in;
    if (dy_values) dy_in.emplace(*dy_values, misalign);
    Array out(n, misalign, sentinel);
    around_call(true);
    call(x_in.data(), dy_in ? dy_in->data() : nullptr, out.data());
    around_call(false);
    MainRun r;
    r.out = read_out(out);
    r.memory_ok = x_in.guards_intact() && (!dy_in || dy_in->guards_intact()) && out.guards_intact();
    r.inputs_kept = x_in.holds(x_values) && (!dy_in || dy_in->holds(*dy_values));
    return r;
  };
  if (k.dtype == DType::f32)
    return run(x.widened, dy ? &dy->widened : nullptr, sentinel32(),
               [](const FloatArray& a) { return read(a); });
  return run(x.bits, dy ? &dy->bits : nullptr, k.dtype == DType::bf16 ? kSentinelBf16 : kSentinelF16,
             [&](const HalfArray& a) { return read(a, k.dtype); });
}

void require(bool ok, const char* what) {
  if (!ok) throw std::invalid_argument(std::string("evaluate: ") + what);
}

bool ill_posed(const RowStats& s) { return s.finite && std::isinf(s.r); }

// fl(r) = r (1 + rho) with |rho| <= u exactly for r in [2^-126, 2^128 - 2^103)
// (evaluate.h, row_checked). r is the exact value rounded to double; the
// thresholds are doubles, so the rounding can only move r onto a threshold,
// never across one.
bool saved_statistic_within_u(const RowStats& s) { return s.r >= 0x1p-126 && s.r < 0x1p128 - 0x1p103; }

// Every input of the row finite: x (RowStats::finite) and, backward, dy.
bool row_inputs_finite(const RowStats& s, const std::vector<float>& dy, int64_t row, int64_t cols) {
  if (!s.finite) return false;
  for (int64_t c = 0; c < cols && !dy.empty(); ++c)
    if (!std::isfinite(dy[static_cast<std::size_t>(row * cols + c)])) return false;
  return true;
}

// The allowance of an output whose coefficients are `coefficients`: +inf when
// one of them is +inf (promises nothing), else the formula's value, NaN where
// a non-finite input makes a scale infinite (evaluate.h).
double allowance_of(std::initializer_list<double> coefficients, double formula) {
  for (double k : coefficients)
    if (k == kInf) return kInf;
  return std::isinf(formula) ? std::numeric_limits<double>::quiet_NaN() : formula;
}

double mean_allowance(const Bound& b, const RowStats& s) {
  return allowance_of({b.mean_rel, b.underflow_abs}, b.mean_rel * s.mean_abs_x + b.underflow_abs);
}

double stat_allowance(const Bound& b, const RowStats& s) {
  return allowance_of({b.stat_rel, b.underflow_abs}, b.stat_rel * s.r + b.underflow_abs);
}

// The condition dgamma/dbeta bounds are taken at: kernel.h says rows set and
// kappa, max_kappa (and the other magnitudes) the largest over the rows that
// are checked and have finite x (a row with non-finite x has a NaN xhat, which
// makes every dgamma column NaN). A non-finite dy only makes its own column
// non-finite; the dy magnitudes are over the finite values (reference.h).
RowCondition column_condition(Op op, const std::vector<RowStats>& stats, int64_t rows) {
  RowCondition c;
  c.rows = rows;
  for (const RowStats& s : stats) {
    const RowCondition rc = row_condition(s);
    c.d = rc.d;
    if (!s.finite || !row_checked(op, s)) continue;
    c.kappa = std::max(c.kappa, rc.kappa);
    c.max_kappa = std::max(c.max_kappa, rc.max_kappa);
    c.eps_share = std::max(c.eps_share, rc.eps_share);
    c.r = std::max(c.r, rc.r);
    c.max_abs_dy = std::max(c.max_abs_dy, rc.max_abs_dy);
    c.max_abs_g = std::max(c.max_abs_g, rc.max_abs_g);
    c.max_abs_gamma = std::max(c.max_abs_gamma, rc.max_abs_gamma);
  }
  return c;
}

// dgamma sums dy xhat over every row: a backward row whose saved statistic is
// not within u (row_checked) puts NaN or garbage into every column, so the
// bound promises nothing for dgamma then. (An ill-posed row's exact xhat is
// NaN, so is the exact dgamma, and the kernel must give NaN.)
bool dgamma_promised(const std::vector<RowStats>& stats) {
  return std::all_of(stats.begin(), stats.end(), [](const RowStats& s) {
    return !s.finite || ill_posed(s) || saved_statistic_within_u(s);
  });
}

// dgamma_j = sum_rows dy_j xhat_j in the extended reals: an infinite dy_j
// gives +-inf by the sign of xhat_j. The kernel's xhat_j is within
// dgamma_rel |xhat_j| + dgamma_abs of the exact one (the dgamma bound per unit
// of |dy|); where |xhat_j| is no larger than that, the bound does not fix its
// sign and inf * xhat^_j may be +inf, -inf or NaN (e.g. x_j = fl(mu) != mu:
// every kernel sees x_j - mean^ = 0). Such a column promises nothing.
std::vector<bool> columns_with_unsigned_infinity(const Bound& bc, const std::vector<RowStats>& stats,
                                                 const std::vector<double>& xhat,
                                                 const std::vector<float>& dy, int64_t cols) {
  std::vector<bool> unsigned_inf(static_cast<std::size_t>(cols), false);
  for (std::size_t row = 0; row < stats.size(); ++row) {
    if (!stats[row].finite) continue;
    for (std::size_t col = 0; col < unsigned_inf.size(); ++col) {
      const std::size_t i = row * unsigned_inf.size() + col;
      const double h = std::fabs(xhat[i]);
      if (std::isinf(dy[i]) && !(h > bc.dgamma_rel * h + bc.dgamma_abs)) unsigned_inf[col] = true;
    }
  }
  return unsigned_inf;
}

// Shared end of every op: memory verdicts, normwise error of the main output
// over the rows that are checked, pass.
void finish(Evaluation& ev, Op op, const std::vector<float>& main_computed,
            const std::vector<double>& main_exact, const std::vector<RowStats>& stats,
            int64_t cols) {
  const bool all_checked = std::all_of(stats.begin(), stats.end(),
                                       [op](const RowStats& s) { return row_checked(op, s); });
  if (all_checked && main_computed.size() == stats.size() * static_cast<std::size_t>(cols)) {
    ev.normwise = normwise_error(main_computed, main_exact);  // every row: no copy
  } else {
    std::vector<float> c;
    std::vector<double> e;
    for (std::size_t row = 0; row < stats.size(); ++row) {
      if (!row_checked(op, stats[row])) continue;
      const auto begin = static_cast<std::ptrdiff_t>(row * static_cast<std::size_t>(cols));
      c.insert(c.end(), main_computed.begin() + begin, main_computed.begin() + begin + cols);
      e.insert(e.end(), main_exact.begin() + begin, main_exact.begin() + begin + cols);
    }
    ev.normwise = normwise_error(c, e);
  }
  ev.pass = ev.max_error_over_bound <= 1 && !ev.nonfinite_mismatch && !ev.out_of_bounds_write &&
            !ev.unwritten_output && !ev.wrote_input;
}

// ---- LayerNorm forward ----

void evaluate_layernorm_fwd(const Kernel& k, const Problem& p, BoundFn bound, Evaluation& ev) {
  const auto n = static_cast<std::size_t>(p.rows * p.cols);
  const auto rows = static_cast<std::size_t>(p.rows);
  const StoredInput x = store(k.dtype, p.x);
  OptionalInput gamma(p.gamma, p.misalign_floats), beta(p.beta, p.misalign_floats);
  FloatArray mean(rows, p.misalign_floats, sentinel32());
  FloatArray rstd(rows, p.misalign_floats, sentinel32());
  const MainRun run = run_on_storage(k, x, nullptr, n, p.misalign_floats, [&](auto* x_in, auto*, auto* y_out) {
    function_for<nc_layernorm_fwd_fn, LayerNormFwd16Fn>(k, x_in)(
        x_in, gamma.pointer(), beta.pointer(), y_out, mean.data(), rstd.data(), p.rows, p.cols, p.eps);
  });
  const Readback& y = run.out;
  const Readback mean_out = read(mean), rstd_out = read(rstd);
  ev.out_of_bounds_write = !run.memory_ok || !gamma.array.guards_intact() ||
                           !beta.array.guards_intact() || !mean.guards_intact() ||
                           !rstd.guards_intact();
  ev.wrote_input = !run.inputs_kept || !gamma.array.holds(p.gamma) || !beta.array.holds(p.beta);
  ev.unwritten_output = y.unwritten || mean_out.unwritten || rstd_out.unwritten;
  ev.output_digest = digest_of({&y, &mean_out, &rstd_out});
  if (outputs_only()) return;
  const LayerNormFwdReference ref =
      reference_layernorm_fwd(x.widened, p.gamma, p.beta, p.rows, p.cols, p.eps);

  tally_rows(ev, p.rows, [&](Tally& tally, int64_t row) {
    const RowStats& s = ref.stats[static_cast<std::size_t>(row)];
    const Bound b = bound(row_condition(s));
    const auto r = static_cast<std::size_t>(row);
    if (s.finite)
      tally.element("mean", row, -1, mean_out.values[r], ref.mean.exact[r], mean_allowance(b, s),
                    false, DType::f32);
    if (!row_checked(Op::layernorm_fwd, s)) return;
    if (s.finite)
      tally.element("rstd", row, -1, rstd_out.values[r], ref.rstd.exact[r], stat_allowance(b, s),
                    false, DType::f32);
    for (int64_t col = 0; col < p.cols; ++col) {
      const auto i = static_cast<std::size_t>(row * p.cols + col);
      const auto c = static_cast<std::size_t>(col);
      // a row with non-finite x: y must be NaN, whatever the bound
      const double allowed = s.finite ? y_allowance(b, at_or(p.gamma, c, 1), at_or(p.beta, c, 0),
                                                    ref.xhat.exact[i])
                                      : 0;
      tally.element("y", row, col, y.values[i], ref.y.exact[i], allowed, true, k.dtype);
    }
  });
  finish(ev, Op::layernorm_fwd, y.values, ref.y.exact, ref.stats, p.cols);
}

// ---- LayerNorm backward ----

// Every dx of the checked rows against its allowance: LayerNorm and RMSNorm
// backward alike (`dy` as the kernel saw it, widened from 16 bits if need be).
template <class Reference>
void tally_dx(Tally& tally, Op op, const Reference& ref, const Problem& p, const std::vector<float>& dy,
              const std::vector<float>& dx, BoundFn bound, DType dtype) {
  for (int64_t row = 0; row < p.rows; ++row) {
    const auto r = static_cast<std::size_t>(row);
    const RowStats& s = ref.stats[r];
    if (!row_checked(op, s)) continue;
    const bool inputs_finite = row_inputs_finite(s, dy, row, p.cols);
    const Bound b = bound(row_condition(s));
    for (int64_t col = 0; col < p.cols; ++col) {
      const auto i = static_cast<std::size_t>(row * p.cols + col);
      const double g = at_or(p.gamma, static_cast<std::size_t>(col), 1) * dy[i];
      // a row with non-finite x or dy: dx must be NaN, whatever the bound
      const double allowed = inputs_finite ? dx_allowance(b, s.r, g, ref.xhat.exact[i],
                                                          ref.mean_abs_g[r], ref.mean_abs_g_xhat[r])
                                           : 0;
      tally.element("dx", row, col, dx[i], ref.dx.exact[i], allowed, true, dtype);
    }
  }
}

// Why the kernel refuses one of the saved statistics (kernel.h
// SavedStatisticDeclineFn), naming the row; empty when it takes them all.
std::string declined_statistic(const Kernel& k, const std::vector<float>& saved, const char* name) {
  if (!k.declines_saved_statistic) return {};
  for (std::size_t row = 0; row < saved.size(); ++row) {
    if (std::string reason = k.declines_saved_statistic(saved[row]); !reason.empty()) {
      char where[96];
      std::snprintf(where, sizeof where, "row %zu (%s = %.3g): ", row, name, static_cast<double>(saved[row]));
      return where + reason;
    }
  }
  return {};
}

void evaluate_layernorm_bwd(const Kernel& k, const Problem& p, BoundFn bound, Evaluation& ev) {
  const auto n = static_cast<std::size_t>(p.rows * p.cols);
  const auto cols = static_cast<std::size_t>(p.cols);
  const StoredInput x = store(k.dtype, p.x), dy = store(k.dtype, p.dy);
  // The saved statistics: the forward's mean and rstd correctly rounded.
  const LayerNormFwdReference saved =
      reference_layernorm_fwd(x.widened, {}, {}, p.rows, p.cols, p.eps);

  ev.declined = declined_statistic(k, saved.rstd.rounded, "rstd");
  if (!ev.declined.empty()) return;

  OptionalInput gamma(p.gamma, p.misalign_floats);
  FloatArray mean(saved.mean.rounded, p.misalign_floats), rstd(saved.rstd.rounded, p.misalign_floats);
  FloatArray dgamma(cols, p.misalign_floats, sentinel32()), dbeta(cols, p.misalign_floats, sentinel32());
  const MainRun run = run_on_storage(k, x, &dy, n, p.misalign_floats, [&](auto* x_in, auto* dy_in, auto* dx_out) {
    function_for<nc_layernorm_bwd_fn, LayerNormBwd16Fn>(k, x_in)(
        dy_in, x_in, gamma.pointer(), mean.data(), rstd.data(), dx_out, dgamma.data(), dbeta.data(),
        p.rows, p.cols);
  });
  const Readback& dx = run.out;
  const Readback dgamma_out = read(dgamma), dbeta_out = read(dbeta);
  ev.out_of_bounds_write = !run.memory_ok || !gamma.array.guards_intact() || !mean.guards_intact() ||
                           !rstd.guards_intact() || !dgamma.guards_intact() ||
                           !dbeta.guards_intact();
  ev.wrote_input = !run.inputs_kept || !gamma.array.holds(p.gamma) ||
                   !mean.holds(saved.mean.rounded) || !rstd.holds(saved.rstd.rounded);
  ev.unwritten_output = dx.unwritten || dgamma_out.unwritten || dbeta_out.unwritten;
  ev.output_digest = digest_of({&dx, &dgamma_out, &dbeta_out});
  if (outputs_only()) return;
  const LayerNormBwdReference ref =
      reference_layernorm_bwd(dy.widened, x.widened, p.gamma, p.rows, p.cols, p.eps);

  Tally tally(ev);
  tally_dx(tally, Op::layernorm_bwd, ref, p, dy.widened, dx.values, bound, k.dtype);
  const Bound bc = bound(column_condition(Op::layernorm_bwd, ref.stats, p.rows));
  const bool dgamma_checked = dgamma_promised(ref.stats);
  const std::vector<bool> unsigned_inf =
      columns_with_unsigned_infinity(bc, ref.stats, ref.xhat.exact, dy.widened, p.cols);
  for (std::size_t col = 0; col < cols; ++col) {
    const auto c = static_cast<int64_t>(col);
    const double dgamma_allowed =
        dgamma_checked && !unsigned_inf[col]
            ? allowance_of({bc.dgamma_rel, bc.dgamma_abs, bc.underflow_abs},
                           bc.dgamma_rel * ref.sum_abs_dy_xhat[col] +
                               bc.dgamma_abs * ref.sum_abs_dy[col] + bc.underflow_abs)
            : kInf;
    tally.element("dgamma", -1, c, dgamma_out.values[col], ref.dgamma.exact[col], dgamma_allowed,
                  true, DType::f32);
    tally.element("dbeta", -1, c, dbeta_out.values[col], ref.dbeta.exact[col],
                  allowance_of({bc.dbeta_rel, bc.underflow_abs},
                               bc.dbeta_rel * ref.sum_abs_dy[col] + bc.underflow_abs),
                  true, DType::f32);
  }
  finish(ev, Op::layernorm_bwd, dx.values, ref.dx.exact, ref.stats, p.cols);
}

// ---- RMSNorm forward ----

void evaluate_rmsnorm_fwd(const Kernel& k, const Problem& p, BoundFn bound, Evaluation& ev) {
  const auto n = static_cast<std::size_t>(p.rows * p.cols);
  const StoredInput x = store(k.dtype, p.x);
  OptionalInput gamma(p.gamma, p.misalign_floats);
  FloatArray rrms(static_cast<std::size_t>(p.rows), p.misalign_floats, sentinel32());
  const MainRun run = run_on_storage(k, x, nullptr, n, p.misalign_floats, [&](auto* x_in, auto*, auto* y_out) {
    function_for<nc_rmsnorm_fwd_fn, RmsNormFwd16Fn>(k, x_in)(x_in, gamma.pointer(), y_out, rrms.data(),
                                                            p.rows, p.cols, p.eps);
  });
  const Readback& y = run.out;
  const Readback rrms_out = read(rrms);
  ev.out_of_bounds_write = !run.memory_ok || !gamma.array.guards_intact() || !rrms.guards_intact();
  ev.wrote_input = !run.inputs_kept || !gamma.array.holds(p.gamma);
  ev.unwritten_output = y.unwritten || rrms_out.unwritten;
  ev.output_digest = digest_of({&y, &rrms_out});
  if (outputs_only()) return;
  const RmsNormFwdReference ref = reference_rmsnorm_fwd(x.widened, p.gamma, p.rows, p.cols, p.eps);

  tally_rows(ev, p.rows, [&](Tally& tally, int64_t row) {
    const auto r = static_cast<std::size_t>(row);
    const RowStats& s = ref.stats[r];
    if (!row_checked(Op::rmsnorm_fwd, s)) return;
    const Bound b = bound(row_condition(s));
    if (s.finite)
      tally.element("rrms", row, -1, rrms_out.values[r], ref.rrms.exact[r], stat_allowance(b, s),
                    false, DType::f32);
    for (int64_t col = 0; col < p.cols; ++col) {
      const auto i = static_cast<std::size_t>(row * p.cols + col);
      // a row with non-finite x: y must be NaN, whatever the bound
      const double allowed =
          s.finite ? y_allowance(b, at_or(p.gamma, static_cast<std::size_t>(col), 1), 0,
                                 ref.xhat.exact[i])
                   : 0;
      tally.element("y", row, col, y.values[i], ref.y.exact[i], allowed, true, k.dtype);
    }
  });
  finish(ev, Op::rmsnorm_fwd, y.values, ref.y.exact, ref.stats, p.cols);
}

// ---- RMSNorm backward ----

void evaluate_rmsnorm_bwd(const Kernel& k, const Problem& p, BoundFn bound, Evaluation& ev) {
  const auto n = static_cast<std::size_t>(p.rows * p.cols);
  const auto cols = static_cast<std::size_t>(p.cols);
  const StoredInput x = store(k.dtype, p.x), dy = store(k.dtype, p.dy);
  // The saved statistic: the forward's rrms correctly rounded.
  const RmsNormFwdReference saved = reference_rmsnorm_fwd(x.widened, {}, p.rows, p.cols, p.eps);
  ev.declined = declined_statistic(k, saved.rrms.rounded, "rrms");
  if (!ev.declined.empty()) return;

  OptionalInput gamma(p.gamma, p.misalign_floats);
  FloatArray rrms(saved.rrms.rounded, p.misalign_floats);
  FloatArray dgamma(cols, p.misalign_floats, sentinel32());
  const MainRun run = run_on_storage(k, x, &dy, n, p.misalign_floats, [&](auto* x_in, auto* dy_in, auto* dx_out) {
    function_for<nc_rmsnorm_bwd_fn, RmsNormBwd16Fn>(k, x_in)(dy_in, x_in, gamma.pointer(), rrms.data(),
                                                            dx_out, dgamma.data(), p.rows, p.cols);
  });
  const Readback& dx = run.out;
  const Readback dgamma_out = read(dgamma);
  ev.out_of_bounds_write = !run.memory_ok || !gamma.array.guards_intact() || !rrms.guards_intact() ||
                           !dgamma.guards_intact();
  ev.wrote_input = !run.inputs_kept || !gamma.array.holds(p.gamma) || !rrms.holds(saved.rrms.rounded);
  ev.unwritten_output = dx.unwritten || dgamma_out.unwritten;
  ev.output_digest = digest_of({&dx, &dgamma_out});
  if (outputs_only()) return;
  const RmsNormBwdReference ref =
      reference_rmsnorm_bwd(dy.widened, x.widened, p.gamma, p.rows, p.cols, p.eps);

  Tally tally(ev);
  tally_dx(tally, Op::rmsnorm_bwd, ref, p, dy.widened, dx.values, bound, k.dtype);
  const Bound bc = bound(column_condition(Op::rmsnorm_bwd, ref.stats, p.rows));
  const bool dgamma_checked = dgamma_promised(ref.stats);
  const std::vector<bool> unsigned_inf =
      columns_with_unsigned_infinity(bc, ref.stats, ref.xhat.exact, dy.widened, p.cols);
  for (std::size_t col = 0; col < cols; ++col)
    tally.element("dgamma", -1, static_cast<int64_t>(col), dgamma_out.values[col],
                  ref.dgamma.exact[col],
                  dgamma_checked && !unsigned_inf[col]
                      ? allowance_of({bc.dgamma_rel, bc.dgamma_abs, bc.underflow_abs},
                                     bc.dgamma_rel * ref.sum_abs_dy_xhat[col] +
                                         bc.dgamma_abs * ref.sum_abs_dy[col] + bc.underflow_abs)
                      : kInf,
                  true, DType::f32);
  finish(ev, Op::rmsnorm_bwd, dx.values, ref.dx.exact, ref.stats, p.cols);
}

// ---- a norm followed by a Linear ----

// z of every output of every checked row against z_allowance (evaluate.h),
// float32 kernels only (kernel.h: these ops have no 16-bit storage).
void evaluate_norm_linear(const Kernel& k, const Problem& p, BoundFn bound, Evaluation& ev) {
  require(k.dtype == DType::f32, "a norm-linear kernel stores float32");
  const auto outputs = static_cast<std::size_t>(p.rows * p.out_features);
  const int m = p.misalign_floats;
  FloatArray x(p.x, m), weight(p.weight, m);
  OptionalInput gamma(p.gamma, m), beta(p.beta, m), bias(p.bias, m);
  FloatArray z(outputs, m, sentinel32());
  around_call(true);
  if (k.op == Op::layernorm_linear_fwd) {
    function_of<LayerNormLinearFwdFn>(k)(x.data(), gamma.pointer(), beta.pointer(), weight.data(),
                                         bias.pointer(), z.data(), p.rows, p.cols, p.out_features, p.eps);
  } else {
    function_of<RmsNormLinearFwdFn>(k)(x.data(), gamma.pointer(), weight.data(), bias.pointer(), z.data(),
                                       p.rows, p.cols, p.out_features, p.eps);
  }
  around_call(false);
  const Readback z_out = read(z);
  ev.out_of_bounds_write = !x.guards_intact() || !weight.guards_intact() || !gamma.array.guards_intact() ||
                           !beta.array.guards_intact() || !bias.array.guards_intact() || !z.guards_intact();
  ev.wrote_input = !x.holds(p.x) || !weight.holds(p.weight) || !gamma.array.holds(p.gamma) ||
                   !beta.array.holds(p.beta) || !bias.array.holds(p.bias);
  ev.unwritten_output = z_out.unwritten;
  ev.output_digest = digest_of({&z_out});
  if (outputs_only()) return;
  const NormLinearReference ref = reference_norm_linear(k.op, p.x, p.gamma, p.beta, p.weight, p.bias,
                                                        p.rows, p.cols, p.out_features, p.eps);
  const auto cols = static_cast<std::size_t>(p.cols);
  tally_rows(ev, p.rows, [&](Tally& tally, int64_t row) {
    const RowStats& s = ref.stats[static_cast<std::size_t>(row)];
    if (!row_checked(k.op, s)) return;
    const Bound b = bound(row_condition(s));
    const std::span<const double> xhat(ref.xhat.exact.data() + static_cast<std::size_t>(row) * cols, cols);
    for (int64_t i = 0; i < p.out_features; ++i) {
      const auto o = static_cast<std::size_t>(row * p.out_features + i);
      // a row with non-finite x: every z must be NaN, whatever the bound
      const double allowed =
          s.finite ? z_allowance(b, std::span<const float>(p.weight).subspan(static_cast<std::size_t>(i) * cols, cols),
                                 p.gamma, p.beta, xhat, ref.t[o], ref.s[o], ref.c_abs[o], ref.exact_error[o])
                   : 0;
      tally.element("z", row, i, z_out.values[o], ref.z[o], allowed, true, DType::f32);
    }
  });
  finish(ev, k.op, z_out.values, ref.z, ref.stats, p.out_features);
}

}  // namespace

RowCondition row_condition(const RowStats& stats) {
  RowCondition c = stats.condition;
  c.rows = 1;
  c.r = stats.r;
  // eps r^2 is 0 * inf when sigma^2 + eps = 0; such rows are not checked, and
  // a 0 share keeps the bound's arithmetic free of NaN for what is (the mean).
  if (std::isnan(c.eps_share)) c.eps_share = 0;
  return c;
}

bool row_checked(Op op, const RowStats& stats) {
  if (!stats.finite) return true;
  if (ill_posed(stats)) return false;
  const bool backward = op == Op::layernorm_bwd || op == Op::rmsnorm_bwd;
  return !backward || saved_statistic_within_u(stats);
}

double y_allowance(const Bound& b, double gamma, double beta, double xhat) {
  const double g = std::fabs(gamma), h = std::fabs(xhat);
  return allowance_of({b.xhat_abs, b.xhat_rel, b.affine_rel, b.underflow_abs},
                      g * (b.xhat_abs + b.xhat_rel * h) + b.affine_rel * (g * h + std::fabs(beta)) +
                          b.underflow_abs);
}

double dx_allowance(const Bound& b, double r, double g, double xhat, double mean_abs_g,
                    double mean_abs_g_xhat) {
  const double h = std::fabs(xhat);
  return allowance_of({b.dx_g, b.dx_mean_g, b.dx_xhat_mean_g, b.dx_proj_abs, b.dx_proj_rel,
                       b.underflow_abs},
                      r * (b.dx_g * std::fabs(g) + (b.dx_mean_g + b.dx_xhat_mean_g * h) * mean_abs_g +
                           (b.dx_proj_abs + b.dx_proj_rel * h) * mean_abs_g_xhat) +
                          b.underflow_abs);
}

// Why `p` lies outside the input range `k` declares (kernel.h InputRange), or
// an empty string when it lies inside.
std::string outside_declared_range(const Kernel& k, const Problem& p) {
  const double limit = k.range.sqrt_d_scaled ? k.range.max_abs_x / std::sqrt(static_cast<double>(p.cols))
                                             : k.range.max_abs_x;
  const bool backward = k.op == Op::layernorm_bwd || k.op == Op::rmsnorm_bwd;
  if (!k.range.handles_nonfinite) {
    const auto finite = [](float v) { return std::isfinite(v); };
    if (!std::all_of(p.x.begin(), p.x.end(), finite) ||
        (backward && !std::all_of(p.dy.begin(), p.dy.end(), finite)))
      return "a non-finite input; the kernel declares finite inputs only";
  }
  for (const float v : p.x) {
    if (std::isfinite(v) && std::fabs(v) > limit) {
      char reason[160];
      std::snprintf(reason, sizeof reason, "|x| = %.3g is outside the kernel's declared range |x| <= %.3g",
                    static_cast<double>(std::fabs(v)), limit);
      return reason;
    }
  }
  return {};
}

std::string norm_linear_problem_declined(const Kernel& k, const Problem& p) {
  if (p.out_features == 0 && p.weight.empty())
    return "the problem has no Linear (out_features = 0): a norm followed by a Linear needs W";
  require(p.out_features >= 1, "out_features must be >= 1 for a norm followed by a Linear");
  require(p.weight.size() == static_cast<std::size_t>(p.out_features * p.cols),
          "weight must hold out_features * cols values");
  require(p.bias.empty() || p.bias.size() == static_cast<std::size_t>(p.out_features),
          "bias must be empty or hold out_features values");
  require(k.op == Op::layernorm_linear_fwd || p.beta.empty(), "RMSNorm has no beta");
  const auto finite = [](const std::vector<float>& v) {
    return std::all_of(v.begin(), v.end(), [](float f) { return std::isfinite(f); });
  };
  if (!finite(p.gamma) || !finite(p.beta) || !finite(p.weight) || !finite(p.bias))
    return "a non-finite gamma, beta, W or b: a norm followed by a Linear is checked on finite "
           "parameters only (reference_linear.h)";
  return {};
}

double z_allowance(const Bound& b, std::span<const float> w_row, std::span<const float> gamma,
                   std::span<const float> beta, std::span<const double> xhat, double t, double s,
                   double c_abs, double exact_error) {
  for (const double k : {b.xhat_abs, b.xhat_rel, b.affine_rel, b.underflow_abs, b.linear_rel,
                         b.fold_weight_rel, b.fold_bias_rel, b.linear_abs})
    if (k == kInf) return kInf;
  double carried = 0;  // sum_j |W_ij| yallow_j
  for (std::size_t j = 0; j < w_row.size(); ++j) {
    if (w_row[j] == 0) continue;
    carried += std::fabs(static_cast<double>(w_row[j])) *
               y_allowance(b, gamma.empty() ? 1.0 : gamma[j], beta.empty() ? 0.0 : beta[j], xhat[j]);
  }
  // Every sum here and in the reference's scales is a float64 sum of
  // non-negative terms, low by at most a relative gamma_(2d+2)(2^-53).
  const double slack = 1 + gamma_n(2.0 * static_cast<double>(w_row.size()) + 2, kUnitRoundoff64);
  const double formula = (carried + b.linear_rel * t + b.fold_weight_rel * s + b.fold_bias_rel * c_abs +
                          b.linear_abs) * slack + exact_error;
  return std::isinf(formula) ? std::numeric_limits<double>::quiet_NaN() : formula;
}

Evaluation evaluate(const Kernel& kernel, const Problem& problem,
                    std::optional<BoundFn> bound_override) {
  EvaluateOptions options;
  options.bound_override = bound_override;
  return evaluate(kernel, problem, options);
}

Evaluation evaluate(const Kernel& kernel, const Problem& problem, const EvaluateOptions& options) {
  // The arrays and the call hook of this evaluation (restored on every exit).
  struct OptionsInEffect {
    explicit OptionsInEffect(const EvaluateOptions* o) : previous(t_options) { t_options = o; }
    ~OptionsInEffect() { t_options = previous; }
    const EvaluateOptions* previous;
  } in_effect(&options);
  const std::optional<BoundFn>& bound_override = options.bound_override;
  Evaluation ev;
  ev.kernel = std::string(kernel.name);
  ev.op = kernel.op;
  const Problem& p = problem;
  ev.declined = declines(kernel, Shape{p.rows, p.cols, !p.gamma.empty(), !p.beta.empty()});
  if (!ev.declined.empty()) return ev;

  const auto n = static_cast<std::size_t>(p.rows * p.cols);
  require(p.rows >= 1 && p.cols >= 1, "a problem has rows >= 1 and cols >= 1");
  require(p.misalign_floats >= 0 && p.misalign_floats < 16, "misalign_floats is in [0, 16)");
  require(p.x.size() == n, "x must hold rows * cols values");
  require(p.gamma.empty() || p.gamma.size() == static_cast<std::size_t>(p.cols),
          "gamma must be empty or hold cols values");
  require(p.beta.empty() || p.beta.size() == static_cast<std::size_t>(p.cols),
          "beta must be empty or hold cols values");
  const bool backward = kernel.op == Op::layernorm_bwd || kernel.op == Op::rmsnorm_bwd;
  require(!backward || p.dy.size() == n, "dy must hold rows * cols values for a backward op");
  require(p.eps >= 0, "eps must be >= 0");
  if (is_norm_linear(kernel.op)) {
    ev.declined = norm_linear_problem_declined(kernel, p);
    if (!ev.declined.empty()) return ev;
  }
  // A kernel promises nothing outside the input range it declares, so holding
  // it to its bound there would report a pass that means nothing.
  ev.declined = outside_declared_range(kernel, p);
  if (!ev.declined.empty()) return ev;

  BoundFn bound = bound_override.value_or(kernel.bound);
  if (!bound) bound = default_bound(kernel.op);
  switch (kernel.op) {
    case Op::layernorm_fwd: evaluate_layernorm_fwd(kernel, p, bound, ev); break;
    case Op::layernorm_bwd: evaluate_layernorm_bwd(kernel, p, bound, ev); break;
    case Op::rmsnorm_fwd: evaluate_rmsnorm_fwd(kernel, p, bound, ev); break;
    case Op::rmsnorm_bwd: evaluate_rmsnorm_bwd(kernel, p, bound, ev); break;
    case Op::layernorm_linear_fwd:
    case Op::rmsnorm_linear_fwd: evaluate_norm_linear(kernel, p, bound, ev); break;
  }
  return ev;
}

}  // namespace normcheck
