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

struct Identification {
  std::string kernel;
  OpSpec declared;
  JudgedTally problems;                // judged, and declined by the kernel
  double exact_math_ulp = 0;           // the kernel's own y (a backward's dx, dgamma, dbeta) against exact math, the largest over the problems
  std::vector<PolicyVerdict> policies; // candidate_policies(declared), in that order
  std::string fault;                   // the call could not complete (crash, hang, ...): why; nothing else is known
  // The declared policy's verdict (a member of `policies`).
  const PolicyVerdict& declared_verdict() const;
};

// Runs `cases` problems (the campaign's generators, seed `seed`, finite
// inputs, eps = 1e-6, d at most `max_d`, a backward's batches of many rows
// at most 4096 rows: every candidate's reference or checks run on each) on
// `kernel`,
// which must be a norm kernel, forward or backward (its spec: spec_of(kernel);
// std::invalid_argument for a norm followed by a Linear).
Identification identify(const Kernel& kernel, int64_t cases, uint64_t seed, int64_t max_d = 1024);

}  // namespace normcheck::fuzz
