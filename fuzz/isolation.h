// Running a kernel's cases so that misbehaviour becomes a finding instead of
// taking normcheck down.
//
// A plugin's kernel (kernel_host.h): evaluate() runs in this process, the
// reference and the verdict included, and each kernel call runs in a kernel
// host process that loaded the plugin and nothing of normcheck's but the call
// protocol. Each case runs twice and the outputs are compared bit for bit. A
// call that crashes, hangs (the host's CPU time) or touches a guard page is
// labelled from what the host recorded; a call that leaves the
// floating-point control state changed is fp_environment.
//
// A kernel of the table (ours, the controls, the adapters, a test's): a fork
// server, one child per batch of cases, running evaluate() with every array
// between guard pages (EvaluateOptions::guard_pages) and each case twice. It
// writes each case's result into memory shared with the parent (mmap
// MAP_SHARED). The parent watches: a case whose kernel call runs longer than
// the timeout is a hang (the child is killed); a child that dies by a signal
// or exits during a case makes that case a crash, or out_of_bounds when the
// fault address lies in a guard page. The next batch starts a fresh child
// after the failing case.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "normcheck/evaluate.h"
#include "normcheck/kernel.h"

namespace normcheck::fuzz {

struct IsolationOptions {
  int timeout_ms = 2000;      // per kernel call
  bool run_twice = true;      // run each case twice and compare the outputs' bits, and (a case
                              // of two rows or more) its last row alone and the rows reversed
                              // against the batch (batch_variant)
  std::optional<BoundFn> bound_override;
  // Stop the run at the first case with a label (the cases after it are left
  // unfinished, with no label): shrinking wants the first candidate that
  // still fails, and each crash or hang costs a fork or a timeout.
  bool stop_at_first_label = false;
  // Every case in this process, one by one (run_case's evaluate() path), no
  // forked child: for a kernel whose code calls back into an interpreter (the
  // Python module's rows, python/module.cpp), which a forked child of that
  // interpreter cannot run safely (its other threads do not survive the fork).
  // A call that throws KernelCallFault (kernel_host.h) gets the fault's label;
  // nothing guards against a crash or a hang.
  bool in_process = false;
};

// One case's result. `label` is empty when the kernel passed; otherwise one of
// crash, hang, out_of_bounds, writes_input, unwritten_output, nondeterministic,
// fp_environment, nan, policy_mismatch, quantization, accuracy, batch_variant (most severe
// first: a memory fault hides the rest; a changed floating-point state
// explains a NaN or an error; a batch-variant row is one whose outputs are
// within their bounds, checked only then). A kernel run in_process may also
// have its own call fault's label: `exception` for a Python function that
// raised (python/module.cpp).
struct CaseResult {
  Evaluation evaluation;   // meaningful when the child finished the case
  bool finished = false;   // the child returned a result for it
  std::string label;
  std::string detail;      // one line: the signal, the output that broke its bound, ...
};

// Counts the case into `tally`: a finished one judged or declined by its
// evaluation, one that ended without an evaluation (a crash, a hang) judged.
inline void count_case(JudgedTally& tally, const CaseResult& r) {
  if (r.finished) tally.add(r.evaluation);
  else tally.add_judged();
}

// The label of a finished evaluation ("" when it passed; declined counts as
// passed). `batch_variance`: why a row's outputs depend on the batch around
// it (batch_variance() below), or empty.
std::string label_of(const Evaluation& ev, bool nondeterministic, const std::string& batch_variance = {});

// What a reader of a finding may have mis-declared, or "": a float32 `add`
// spec without a rounding of the sum holds the kernel to the exact sum
// x + residual, while a kernel that normalizes its float32 sum follows
// round=sum:f32 (FlashInfer's convention); on a row whose float32 sum is
// constant at eps = 0 the two differ by a NaN. Given on `nan` and `accuracy`
// findings of such specs.
std::string spec_hint(const Evaluation& ev, const std::string& label);

// Whether the rows of `problem` (two or more; a case that passed) give each
// row's outputs bit for bit whatever the batch around it: its last row run alone, and every row
// with the rows reversed, against `ev` (evaluate() of the whole problem,
// Evaluation::row_digests). Returns what differed, or "" (invariant, or
// nothing to compare: one row, a decline). Runs the kernel twice more, outputs only.
std::string batch_variance(const Kernel& kernel, const Problem& problem, const Evaluation& ev,
                           const EvaluateOptions& options);

// Runs `kernel` on every problem, batch by batch, each batch in one child.
std::vector<CaseResult> run_isolated(const Kernel& kernel, std::span<const Problem> problems,
                                     const IsolationOptions& options);

// One case on any kernel of the table: a plugin's in a child (run_isolated),
// ours in this process with evaluate() (they are trusted not to crash; the
// canary guards still catch their out-of-bounds writes), any kernel in this
// process with IsolationOptions::in_process.
CaseResult run_case(const Kernel& kernel, const Problem& problem, const IsolationOptions& options);

}  // namespace normcheck::fuzz
