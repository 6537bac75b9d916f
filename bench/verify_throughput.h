// Benchmarks of verification throughput (evaluate() and the exact references).
#pragma once

#include <cstdint>

#include "normcheck/evaluate.h"

namespace normcheck::bench {

// The benchmarks' problem: x ~ N(0, 1), gamma ~ 1 + N(0, 0.1^2), and beta ~
// N(0, 0.1^2) (forward) or dy ~ N(0, 1) (backward), eps = 1e-5, from a fixed
// seed, so every run measures the same rows.
Problem make_problem(int64_t rows, int64_t cols, bool backward);

// Registers the verify/... benchmarks (verify_throughput.cpp).
void register_verify_benchmarks();

}  // namespace normcheck::bench
