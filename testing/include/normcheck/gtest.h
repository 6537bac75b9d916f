// GoogleTest assertions that hold a user's kernel to the exact reference
// (docs/in-your-tests.md):
//
//   EXPECT_NORM_WITHIN_BOUND(my_layernorm_fwd, problem);
//   ASSERT_NORM_WITHIN_BOUND(my_rmsnorm_bwd, problem);
//
// The kernel is a function of one of the plugin ABI's float32 types
// (normcheck/plugin.h: nc_layernorm_fwd_fn, nc_layernorm_bwd_fn,
// nc_rmsnorm_fwd_fn, nc_rmsnorm_bwd_fn); the op follows from the type. It runs
// through evaluate() (normcheck/evaluate.h), in this process, held to the bound
// `normcheck check --plugin` and `normcheck fuzz --plugin` hold a plugin's
// float32 kernel to: default_bound(op) (normcheck/bounds.h: what a careful
// two-pass float32 kernel meets), over the input range layernorm_fwd.twopass
// declares. It is called a second time and must give the same bits.
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
#include "normcheck/row_file.h"

namespace normcheck::testing {

namespace detail {

// The table row a plugin's float32 kernel of `op` gets (fuzz/plugin_loader.cpp
// builds the same: origin plugin, default_bound(op), layernorm_fwd.twopass's
// input range).
inline Kernel user_kernel(const char* name, Op op, KernelFn fn) {
  Kernel k{.name = name,
           .op = op,
           .origin = Origin::plugin,
           .dtype = DType::f32,
           .algorithm = "a user's kernel (default bound)",
           .fn = fn,
           .bound = default_bound(op),
           .range = {},
           .family = Family::external};
  if (const Kernel* twopass = find_kernel("layernorm_fwd.twopass")) k.range = twopass->range;
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
inline std::string save_problem(const char* kernel, Op op, const Problem& problem, bool& saved) {
  const char* dir = std::getenv("NORMCHECK_REPLAY_DIR");
  const std::filesystem::path path =
      std::filesystem::path(dir && *dir ? dir : ::testing::TempDir()) / replay_file_name(op);
  try {
    std::filesystem::create_directories(path.parent_path());
    write_file_atomically(path, problem_file_text(op, DType::f32, problem,
                                                  {"a failure of the GoogleTest assertion on " + std::string(kernel)},
                                                  kernel));
    saved = true;
    return std::filesystem::absolute(path).string();
  } catch (const std::exception& e) {
    saved = false;
    return std::string("could not save the problem: ") + e.what();
  }
}

inline ::testing::AssertionResult within_bound(const char* kernel_expr, const char* problem_expr, Op op,
                                               KernelFn fn, const Problem& problem) {
  const Kernel kernel = user_kernel(kernel_expr, op, fn);
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
  what << kernel_expr << " (" << to_string(op) << ") on " << problem_expr << " (" << problem.rows << " x "
       << problem.cols << ", eps " << hex(problem.eps) << (problem.gamma.empty() ? "" : ", gamma")
       << (problem.beta.empty() ? "" : ", beta") << ")";
  if (!ev.declined.empty())
    return ::testing::AssertionFailure() << what.str() << ": not checked: " << ev.declined
                                         << " (the default bound covers the range layernorm_fwd.twopass declares)";
  const bool nondeterministic = again.output_digest != ev.output_digest;
  if (ev.pass && !nondeterministic) return ::testing::AssertionSuccess();

  ::testing::AssertionResult failure = ::testing::AssertionFailure();
  failure << what.str() << " breaks normcheck's default bound for " << to_string(op) << ":";
  if (ev.out_of_bounds_write) failure << "\n  out_of_bounds: it wrote outside an output array";
  if (ev.unwritten_output) failure << "\n  unwritten_output: an output element kept the sentinel it was filled with before the call";
  if (ev.wrote_input) failure << "\n  writes_input: an input array changed";
  if (ev.nonfinite_mismatch) failure << "\n  nonfinite: NaN/inf where the exact value is finite, or the reverse";
  if (nondeterministic) failure << "\n  nondeterministic: a second call gave different output bits";
  if (!ev.worst.output.empty()) {
    const Worst& w = ev.worst;
    failure << "\n  worst element: output " << w.output;
    if (w.row >= 0) failure << ", row " << w.row;  // -1: dgamma, dbeta (sums over rows)
    if (w.col >= 0) failure << ", col " << w.col;  // -1: mean, rstd, rrms (one per row)
    failure << "\n    computed  " << format_float_exact(w.computed) << "\n    exact     " << hex(w.exact)
            << "\n    |error|   " << hex(std::fabs(static_cast<double>(w.computed) - w.exact))
            << "\n    allowance " << hex(w.allowed);
    char figures[96];
    std::snprintf(figures, sizeof figures, "\n  max error / allowance %.3g, max ULP %.3g", ev.max_error_over_bound,
                  ev.max_ulp);
    failure << figures;
  }
  bool saved = false;
  const std::string file = save_problem(kernel_expr, op, problem, saved);
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
  return detail::within_bound(k, p, Op::layernorm_fwd, fn, problem);
}
inline ::testing::AssertionResult NormWithinBound(const char* k, const char* p, nc_layernorm_bwd_fn fn,
                                                  const Problem& problem) {
  return detail::within_bound(k, p, Op::layernorm_bwd, fn, problem);
}
inline ::testing::AssertionResult NormWithinBound(const char* k, const char* p, nc_rmsnorm_fwd_fn fn,
                                                  const Problem& problem) {
  return detail::within_bound(k, p, Op::rmsnorm_fwd, fn, problem);
}
inline ::testing::AssertionResult NormWithinBound(const char* k, const char* p, nc_rmsnorm_bwd_fn fn,
                                                  const Problem& problem) {
  return detail::within_bound(k, p, Op::rmsnorm_bwd, fn, problem);
}

}  // namespace normcheck::testing

#define EXPECT_NORM_WITHIN_BOUND(kernel, problem) \
  EXPECT_PRED_FORMAT2(::normcheck::testing::NormWithinBound, kernel, problem)
#define ASSERT_NORM_WITHIN_BOUND(kernel, problem) \
  ASSERT_PRED_FORMAT2(::normcheck::testing::NormWithinBound, kernel, problem)
