// Whether two Evaluations hold the same element figures: what the element
// checks (verify/evaluate/tally.h) leave, the ULP figures, the ratio to the
// allowance, the worst element with its values and every output's entry in
// the order first met. For two ways of taking the same elements (chunks on
// several threads, a row at once) that must agree bit for bit.
#pragma once

#include <bit>
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "normcheck/evaluate.h"

namespace normcheck::test {

inline void expect_same_figures(const Evaluation& a, const Evaluation& b, const std::string& where) {
  EXPECT_EQ(a.max_ulp, b.max_ulp) << where;
  EXPECT_EQ(a.max_ulp_elementwise, b.max_ulp_elementwise) << where;
  EXPECT_EQ(a.max_error_over_bound, b.max_error_over_bound) << where;
  EXPECT_EQ(a.nonfinite_mismatch, b.nonfinite_mismatch) << where;
  EXPECT_EQ(a.worst.output, b.worst.output) << where;
  EXPECT_EQ(a.worst.row, b.worst.row) << where;
  EXPECT_EQ(a.worst.col, b.worst.col) << where;
  EXPECT_EQ(std::bit_cast<uint32_t>(a.worst.computed), std::bit_cast<uint32_t>(b.worst.computed)) << where;
  EXPECT_EQ(a.worst.exact, b.worst.exact) << where;
  EXPECT_EQ(a.worst.allowed, b.worst.allowed) << where;
  ASSERT_EQ(a.outputs.size(), b.outputs.size()) << where;
  for (std::size_t k = 0; k < a.outputs.size(); ++k) {
    const OutputError &x = a.outputs[k], &y = b.outputs[k];
    const std::string at = where + " " + x.output;
    EXPECT_EQ(x.output, y.output) << at;
    EXPECT_EQ(x.max_ulp, y.max_ulp) << at;
    EXPECT_EQ(x.max_ulp_exact, y.max_ulp_exact) << at;
    EXPECT_EQ(x.max_ulp_elementwise, y.max_ulp_elementwise) << at;
    EXPECT_EQ(x.max_error_over_bound, y.max_error_over_bound) << at;
    EXPECT_EQ(x.row, y.row) << at;
    EXPECT_EQ(x.col, y.col) << at;
  }
}

}  // namespace normcheck::test
