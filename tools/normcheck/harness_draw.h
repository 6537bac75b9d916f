// Case c of a seed for a harness of a spec (gen's files, the Python module's
// drawn problems), as the harness receives it: the generator's problem with
// its inputs rounded to their formats (stored_problem). The generator keeps x
// inside the domain before that rounding; a rounding that carries |x| past
// the limit (a bf16 x drawn just inside 2^62/sqrt(d) rounds up past it)
// would make the case one the judge declines, so such a draw is replaced by
// the next stream's (fuzz::case_problem's kernel index 1, 2, ...): the same
// seed still gives the same problems.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "case_files.h"
#include "case_gen.h"
#include "normcheck/evaluate.h"

namespace normcheck::cli {

// The tries before harness_case gives up (a domain too narrow for the format).
inline constexpr std::size_t kHarnessDrawTries = 1000;

// The stored problem, or none when kHarnessDrawTries draws in a row fall
// outside the row's domain once rounded.
inline std::optional<Problem> harness_case(const rc::Gen<Problem>& problems, const Kernel& row, uint64_t seed,
                                           int64_t c) {
  for (std::size_t stream = 0; stream < kHarnessDrawTries; ++stream) {
    Problem p = stored_problem(*row.spec, fuzz::case_problem(problems, seed, stream, c));
    if (declines(row, request_for(row, p)).empty()) return p;
  }
  return std::nullopt;
}

// The generator's options for the harness row with the caller's shapes
// (GenOptions::shapes: each problem one of them). Throws
// std::invalid_argument naming a shape with no rows, or whose d is outside
// the row's declared d range.
inline props::GenOptions harness_options(const Kernel& row, const std::vector<std::pair<int64_t, int64_t>>& shapes) {
  props::GenOptions opts = fuzz::generator_options(row);
  for (const auto& [rows, cols] : shapes) {
    const std::string shape = std::to_string(rows) + "x" + std::to_string(cols);
    if (rows < 1 || cols < 1) throw std::invalid_argument("shape " + shape + ": rows and cols are at least 1");
    if (cols < row.range.min_d || cols > row.range.max_d)
      throw std::invalid_argument("shape " + shape + ": d = " + std::to_string(cols) + " is outside the domain " +
                                  domain_text({.min_d = row.range.min_d, .max_d = row.range.max_d}));
  }
  opts.shapes = shapes;
  return opts;
}

}  // namespace normcheck::cli
