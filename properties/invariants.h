// Helpers of the invariant properties: each compares the kernel with itself
// on inputs that an exact transformation relates, with the tolerance
//   |K(T x)_i - T'(K(x))_i| <= A(T x)_i + A(x)_i,
// A the allowance of the kernel's bound as evaluate() gives it (judged.h): both runs are within
// their allowance of exact values that are equal (after T'), so by the
// triangle inequality they are within the sum of each other. T is chosen so
// that T x is exact in float, otherwise the exact values would differ.
#pragma once

#include <vector>

#include "normcheck/evaluate.h"
#include "normcheck/kernel.h"

namespace normcheck::props {

// Kernels the invariants can run (f32 storage, judged.h). A case whose
// problem the kernel declines is discarded.
bool invariant_applies(const Kernel& kernel);

// x rounded to integer multiples n * s of one spacing s = 2^k, |n| <= 2^20,
// with (2^20 + 2^22) s <= max_abs_x so that shifts by up to 2^22 s stay in
// range; s >= 2^-149 so that every n * s is a float.
struct Grid {
  Problem problem;
  double spacing = 0;
};
Grid on_grid(const Problem& problem, const InputRange& range);

// A(p)_i + A(q)_i from judged(kernel, p) and judged(kernel, q), with p's
// allowances taken in q's order by `order` (q_i corresponds to p_order[i]);
// order empty means the identity.
std::vector<double> summed_allowance(const Evaluation& judged_p, const Evaluation& judged_q,
                                     const std::vector<size_t>& order = {});

// Fails the case unless K(q) is within the summed allowance of `expected`, the
// transform of K(p) the invariant predicts (judged_p = judged(kernel, p)).
void require_invariant(const Kernel& kernel, const char* what, const Evaluation& judged_p, const Problem& q,
                       const std::vector<float>& expected, const std::vector<size_t>& order = {});

}  // namespace normcheck::props
