// Batches of kernel calls through the kernel host (kernel_host.h), with each
// case's evaluate() written as if its call ran at once.
//
// gather_calls() runs each case as a fiber (fiber.h) of this thread. A case
// that calls a hosted plugin's kernel parks there (park_call); once every
// case has parked or finished, the parked calls go to their plugin's host as
// one batch, in case order, and each case resumes with its own call's
// result. A campaign's 64 cases cost one round trip per call of a case (its
// evaluation, then the batch-variance reruns of those that passed) instead
// of one per call. A call that ends its host (a crash, a hang) is its case's
// alone: the cases before it have their results, and the calls after it go
// to a new host in the next round trip.
#pragma once

#include <cstddef>
#include <functional>

#include "kernel_host.h"

namespace normcheck::fuzz {

// The most cases gather_calls() takes at once: a request's calls
// (host/protocol.h: kMaxCalls), each case having one call in flight.
inline constexpr std::size_t kGatheredCases = 64;

// Runs case(i) for i in [0, n), n <= kGatheredCases, each in a fiber of its
// own, gathering their hosted calls into batches. case(i) returns true to end
// the cases after it: those not yet finished are abandoned (a parked call is
// then unwound with an exception only this function catches) and their
// results must not be used. Cases with no hosted call simply run in order.
void gather_calls(std::size_t n, const std::function<bool(std::size_t)>& run_case);

// In a fiber of gather_calls(): parks `call` until its batch has run and
// fills `result`; returns true. Elsewhere: false, nothing done.
bool park_call(HostedPlugin& plugin, const HostCall& call, HostCallResult& result);

}  // namespace normcheck::fuzz
