// One line on an evaluate() result for a test's failure message: the kernel,
// its worst error/bound and ULP, where (output[row,col], computed, exact,
// allowed), and every check it broke.
#pragma once

#include <string>

#include "normcheck/evaluate.h"

namespace normcheck::test {

inline std::string describe(const Evaluation& ev) {
  std::string s = ev.kernel + ": error/bound " + std::to_string(ev.max_error_over_bound) +
                  ", max ulp " + std::to_string(ev.max_ulp) + ", worst " + ev.worst.output + "[" +
                  std::to_string(ev.worst.row) + "," + std::to_string(ev.worst.col) +
                  "] computed " + std::to_string(ev.worst.computed) + " exact " +
                  std::to_string(ev.worst.exact) + " allowed " + std::to_string(ev.worst.allowed);
  if (ev.nonfinite_mismatch) s += " (NaN/inf mismatch)";
  if (ev.out_of_bounds_write) s += " (out-of-bounds write)";
  if (ev.unwritten_output) s += " (unwritten output)";
  if (ev.wrote_input) s += " (wrote input)";
  if (!ev.declined.empty()) s += " (declined: " + ev.declined + ")";
  return s;
}

}  // namespace normcheck::test
