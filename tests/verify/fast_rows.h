// Rows for the differential tests of the references' fast phases
// (test_reference_fast.cpp, test_reference_fast_bwd.cpp): random rows of many
// lengths, scales and eps, and adversarial ones (huge |mean|/sigma,
// subnormals, near FLT_MAX, rows spanning more exponents than int64 holds,
// eps dominating, integer rows with dyadic outputs, y cancelling, outputs on
// or next to float and double rounding midpoints, zeros, NaN and inf), with
// and without gamma/beta.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace normcheck::test {

// A row, its affine parameters and eps; `family` names how it was built
// (the text before a ':' groups the tallies).
struct FastCase {
  std::string family;
  std::vector<float> x, gamma, beta;
  float eps = 0;
  bool layer = true, rms = true;  // the norms the row is run through
};

std::vector<FastCase> fast_cases(std::mt19937_64& rng);

// w_2..w_5 with w_2^2 + ... + w_5^2 = R (R > 0), searched from the largest
// squares down; empty if the small search finds none.
std::vector<int64_t> four_squares(int64_t R);

// Bit-for-bit equality (signs of zero and NaN payloads included).
bool same(float a, float b);
bool same(double a, double b);

}  // namespace normcheck::test
