// GoogleTest assertions that hold a user's kernel to the exact reference
// (docs/in-your-tests.md):
//
//   EXPECT_NORM_WITHIN_BOUND(my_layernorm_fwd, problem);
//   ASSERT_NORM_WITHIN_BOUND(my_rmsnorm_bwd, problem);
//
// The kernel is a function of one of the plugin ABI's float32 types
// (normcheck/plugin.h: nc_layernorm_fwd_fn, nc_layernorm_bwd_fn,
// nc_rmsnorm_fwd_fn, nc_rmsnorm_bwd_fn); the op follows from the type. Or it is
// a version-2 kernel, an nc_kernel_v2 entry (its name, its op spec's text, its
// domain's text or NULL, its nc_kernel_v2_fn), called with tensor descriptors
// and judged like a version-2 plugin's kernel: a forward spec against its
// rounding policy's admissible range (docs/ops.md), a backward like the
// table's backward of its op; the problem carries the residual (a spec with
// `add`) and may carry a row stride (Problem::row_stride).
//
// It runs through evaluate() (normcheck/evaluate.h), in this process, held to
// the bound `normcheck check --plugin` and `normcheck fuzz --plugin` hold a
// plugin's kernel to: plugin_bound(op, dtype) (normcheck/bounds.h: what a
// careful two-pass float32 kernel meets; a forward output's rounding to its
// format is its spec's admissible range's, a 16-bit backward's is added),
// over the input range layernorm_fwd.twopass declares (a version-2 entry's
// domain replaces the terms it states). It is called a second time and must
// give the same bits.
//
// On failure the message names the output, row and column of the worst element,
// the computed and exact values as hex floats and the allowance there, saves the
// problem as a problem file (normcheck/row_file.h) and prints the
// `normcheck check --input FILE --plugin LIB` command that replays it. The file
// goes to $NORMCHECK_REPLAY_DIR if set, else to ::testing::TempDir().
//
// Header-only over normcheck::normcheck_verify; no RapidCheck.
#pragma once

#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "normcheck/bounds.h"
#include "normcheck/evaluate.h"
#include "normcheck/io.h"
#include "normcheck/kernel.h"
#include "normcheck/op_spec.h"
#include "normcheck/row_file.h"

namespace normcheck::testing {

namespace detail {

// The table row a plugin's kernel gets (fuzz/plugin_loader.cpp builds the
// same: origin plugin, plugin_bound(op, dtype), layernorm_fwd.twopass's input
// range with the terms of `domain` in place of its own; a version-2 kernel's
// spec and row strides).
inline Kernel user_kernel(const char* name, Op op, DType dtype, KernelFn fn, const OpSpec* spec = nullptr,
                          const char* domain = nullptr) {
  Kernel k{.name = name,
           .op = op,
           .origin = Origin::plugin,
           .dtype = dtype,
           .algorithm = "a user's kernel (default bound)",
           .fn = fn,
           .bound = plugin_bound(op, dtype),
           .range = {},
           .family = Family::external,
           .spec = spec,
           .takes_row_stride = spec != nullptr};
  if (const Kernel* twopass = find_kernel("layernorm_fwd.twopass")) k.range = twopass->range;
  if (domain) k.range = parse_domain(domain, k.range);  // throws std::invalid_argument
  return k;
}

inline std::string hex(double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%a", v);
  return buffer;
}

// A file name made of the running test's name (letters, digits, '_', '.', '-').
inline std::string replay_file_name(Op op) {
  static std::atomic<int> counter{0};
  std::string name = "normcheck";
  if (const auto* info = ::testing::UnitTest::GetInstance()->current_test_info()) {
    name.append("-").append(info->test_suite_name()).append(".").append(info->name());
  }
  name.append("-").append(to_string(op)).append("-").append(std::to_string(counter++)).append(".txt");
  for (char& c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-')) c = '_';
  return name;
}

// Saves `problem` as a problem file; returns the path, or why it could not.
inline std::string save_problem(const Kernel& k, const Problem& problem, bool& saved) {
  const char* kernel = k.name.data();  // user_kernel's name: the expression's text, NUL-terminated
  const Op op = k.op;
  const char* dir = std::getenv("NORMCHECK_REPLAY_DIR");
  const std::filesystem::path path =
      std::filesystem::path(dir && *dir ? dir : ::testing::TempDir()) / replay_file_name(op);
  try {
    std::filesystem::create_directories(path.parent_path());
    write_file_atomically(path, problem_file_text(op, k.dtype, problem,
                                                  {"a failure of the GoogleTest assertion on " + std::string(kernel)},
                                                  kernel, k.spec));
    saved = true;
    return std::filesystem::absolute(path).string();
  } catch (const std::exception& e) {
    saved = false;
    return std::string("could not save the problem: ") + e.what();
  }
}

inline ::testing::AssertionResult within_bound(const char* kernel_expr, const char* problem_expr,
                                               const Kernel& kernel, const Problem& problem) {
  const Op op = kernel.op;
  const std::string what_op = kernel.spec ? to_text(*kernel.spec) : std::string(to_string(op));
  Evaluation ev;
  Evaluation again;
  try {
    ev = evaluate(kernel, problem);
    if (ev.declined.empty()) {
      EvaluateOptions outputs_only;
      outputs_only.outputs_only = true;
      again = evaluate(kernel, problem, outputs_only);
    }
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << problem_expr << " is not a problem " << kernel_expr
                                         << " can be run on: " << e.what();
  }
  std::ostringstream what;
  what << kernel_expr << " (" << what_op << ") on " << problem_expr << " (" << problem.rows << " x "
       << problem.cols << ", eps " << hex(problem.eps) << (problem.gamma.empty() ? "" : ", gamma")
       << (problem.beta.empty() ? "" : ", beta") << (problem.residual.empty() ? "" : ", residual")
       << (problem.row_stride ? ", row stride " + std::to_string(problem.row_stride) : std::string()) << ")";
  if (!ev.declined.empty())
    return ::testing::AssertionFailure() << what.str() << ": not checked: " << ev.declined
                                         << " (the default bound covers the range layernorm_fwd.twopass declares)";
  const bool nondeterministic = again.output_digest != ev.output_digest;
  if (ev.pass && !nondeterministic) return ::testing::AssertionSuccess();

  ::testing::AssertionResult failure = ::testing::AssertionFailure();
  const bool tight_only = beyond_tight_only(ev);
  if (tight_only)
    failure << what.str() << " is within normcheck's default bound and beyond its tight standard on a realistic "
            << "row (docs/accuracy.md, \"The tight standard\"): " << ev.max_error_over_tight << "x it";
  else if (kernel.spec)
    failure << what.str() << " is outside the range its spec's rounding policy admits:";
  else
    failure << what.str() << " breaks normcheck's default bound for " << to_string(op) << ":";
  if (ev.out_of_bounds_write) failure << "\n  out_of_bounds: it wrote outside an output array";
  if (ev.unwritten_output) failure << "\n  unwritten_output: an output element kept the sentinel it was filled with before the call";
  if (ev.wrote_input) failure << "\n  writes_input: an input array changed";
  if (ev.nonfinite_mismatch) failure << "\n  nonfinite: NaN/inf where the exact value is finite, or the reverse";
  if (nondeterministic) failure << "\n  nondeterministic: a second call gave different output bits";
  if (!ev.worst.output.empty()) {
    const Worst& w = tight_only ? ev.tight_worst : ev.worst;
    failure << "\n  worst element: output " << w.output;
    if (w.row >= 0) failure << ", row " << w.row;  // -1: dgamma, dbeta (sums over rows)
    if (w.col >= 0) failure << ", col " << w.col;  // -1: mean, rstd, rrms (one per row)
    failure << "\n    computed  " << format_float_exact(w.computed) << "\n    exact     " << hex(w.exact)
            << "\n    |error|   " << hex(std::fabs(static_cast<double>(w.computed) - w.exact))
            << "\n    allowance " << hex(w.allowed);
    char figures[224];
    std::snprintf(figures, sizeof figures,
                  "\n  max error / allowance %.3g, max ULP %.3g of the row's scale (%.3g elementwise), tight "
                  "standard %.3g",
                  ev.max_error_over_bound, ulp_figure(ev, ev.max_ulp), ulp_figure(ev, ev.max_ulp_elementwise),
                  ev.max_error_over_tight);
    failure << figures;
  }
  bool saved = false;
  const std::string file = save_problem(kernel, problem, saved);
  if (saved)
    failure << "\n  replay: the problem is saved in " << file << "\n    normcheck check --input " << file
            << " --plugin <your plugin library>";
  else
    failure << "\n  replay: " << file;
  return failure;
}

}  // namespace detail

// EXPECT_PRED_FORMAT2 predicates, one per function type of the plugin ABI.
inline ::testing::AssertionResult NormWithinBound(const char* k, const char* p, nc_layernorm_fwd_fn fn,
                                                  const Problem& problem) {
  return detail::within_bound(k, p, detail::user_kernel(k, Op::layernorm_fwd, DType::f32, fn), problem);
}
inline ::testing::AssertionResult NormWithinBound(const char* k, const char* p, nc_layernorm_bwd_fn fn,
                                                  const Problem& problem) {
  return detail::within_bound(k, p, detail::user_kernel(k, Op::layernorm_bwd, DType::f32, fn), problem);
}
inline ::testing::AssertionResult NormWithinBound(const char* k, const char* p, nc_rmsnorm_fwd_fn fn,
                                                  const Problem& problem) {
  return detail::within_bound(k, p, detail::user_kernel(k, Op::rmsnorm_fwd, DType::f32, fn), problem);
}
inline ::testing::AssertionResult NormWithinBound(const char* k, const char* p, nc_rmsnorm_bwd_fn fn,
                                                  const Problem& problem) {
  return detail::within_bound(k, p, detail::user_kernel(k, Op::rmsnorm_bwd, DType::f32, fn), problem);
}
// A version-2 kernel: its spec text parsed (docs/ops.md), op and dtype from
// the spec, its domain text over the default's. A spec or domain that is not
// one fails the assertion with the parser's message.
inline ::testing::AssertionResult NormWithinBound(const char* k, const char* p, const nc_kernel_v2& entry,
                                                  const Problem& problem) {
  const SpecParse parsed = parse_spec(entry.spec ? entry.spec : "");
  if (!parsed.spec)
    return ::testing::AssertionFailure() << k << ": its spec \"" << (entry.spec ? entry.spec : "(null)")
                                         << "\" is not one: " << parsed.error;
  if (!entry.fn) return ::testing::AssertionFailure() << k << ": a null function";
  const OpSpec spec = *parsed.spec;
  try {
    return detail::within_bound(
        k, p, detail::user_kernel(k, op_of(spec), spec.dtype_of(TensorName::x), entry.fn, &spec, entry.domain),
        problem);
  } catch (const std::invalid_argument& e) {
    return ::testing::AssertionFailure() << k << ": its domain \"" << entry.domain << "\" is not one: " << e.what();
  }
}

}  // namespace normcheck::testing

#define EXPECT_NORM_WITHIN_BOUND(kernel, problem) \
  EXPECT_PRED_FORMAT2(::normcheck::testing::NormWithinBound, kernel, problem)
#define ASSERT_NORM_WITHIN_BOUND(kernel, problem) \
  ASSERT_PRED_FORMAT2(::normcheck::testing::NormWithinBound, kernel, problem)
