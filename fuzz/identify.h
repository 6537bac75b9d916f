// Which rounding policy a kernel follows: a kernel with a spec of its own
// (op_spec.h) run on generated problems, its outputs held to the admissible
// range of every candidate policy of its spec (spec_policy.h), and each
// policy's own distance from exact math.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "normcheck/evaluate.h"
#include "normcheck/kernel.h"
#include "normcheck/op_spec.h"

namespace normcheck::fuzz {

struct PolicyVerdict {
  OpSpec policy;
  std::string name;           // known_policy_name(): the projects that ship it, or empty
  int64_t outside = 0;        // output elements outside its range, over every problem
  double exact_math_ulp = 0;  // its own correctly rounded y against exact math, the largest over the problems; NaN: a backward policy
  bool consistent() const { return outside == 0; }
};

// A quantized y's declared cast done another way (cast_variants(): int8's
// other tie rule or lowest code, the other way to apply the scale, fp8 with
// or without saturation), against the kernel's codes.
struct CastVerdict {
  OpSpec cast;
  int64_t problems_outside = 0;  // problems on which its codes' ranges do not admit the kernel's
  bool consistent() const { return problems_outside == 0; }
};

// A candidate (policy or cast) that admitted the kernel's outputs as the
// declared one did on every drawn problem, and the search for a problem on
// which the two admit no common value of some output element (so that the
// kernel's outputs follow at most one of them).
struct Split {
  std::string other;      // the candidate's spec text
  int64_t tries = 0;      // problems drawn to split them
  bool found = false;     // a problem split them, and the kernel ran on it
  std::string problem;    // that problem ("1 x 16, eps = 1e-06, static scale 0.0123")
};

struct Identification {
  std::string kernel;
  OpSpec declared;
  JudgedTally problems;                // judged, and declined by the kernel
  double exact_math_ulp = 0;           // the kernel's own y (a backward's dx, dgamma, dbeta) against exact math, the largest over the problems
  std::vector<PolicyVerdict> policies; // candidate_policies(declared), in that order
  std::vector<CastVerdict> casts;      // a quantized y: cast_variants(declared), in that order
  // Forward: each candidate consistent beside the declared one after the
  // drawn problems, with the search for a problem that splits the two. A
  // backward's candidates nest (each word only widens the allowances,
  // spec_policy.h, policy_within): none is split.
  std::vector<Split> splits;
  std::string fault;                   // the call could not complete (crash, hang, ...): why; nothing else is known
  // The declared policy's verdict (a member of `policies`).
  const PolicyVerdict& declared_verdict() const;
};

// Problems drawn per candidate to split it from the declared policy.
inline constexpr int64_t kSplitTries = 64;

// Runs `cases` problems (the campaign's generators, seed `seed`, finite
// inputs, eps = 1e-6, d at most `max_d`, a backward's batches of many rows
// at most 4096 rows: every candidate's reference or checks run on each) on
// `kernel`,
// which must be a norm kernel, forward or backward (its spec: spec_of(kernel);
// std::invalid_argument for a norm followed by a Linear).
// Then, for a forward kernel that follows its declared policy, each other
// candidate that admitted its outputs too is split from it where it can be:
// up to kSplitTries problems are drawn (d <= 64, a static scale placed so that
// an element's y / s lands on a boundary of the cast's rounding or past its
// largest value; for a scale the kernel computes, one row of 4096), and the
// first on which the two ranges share no value of some element runs on the
// kernel (Identification::splits).
Identification identify(const Kernel& kernel, int64_t cases, uint64_t seed, int64_t max_d = 1024);

}  // namespace normcheck::fuzz
