// What the evaluation of each op shares: the call's context, the per-op
// entry points (one file each), the verdict at the end, and the backward
// checks LayerNorm and RMSNorm have in common.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "guarded_array.h"
#include "normcheck/invoke.h"
#include "stored_input.h"
#include "normcheck/evaluate.h"
#include "tally.h"

namespace normcheck::evaluation {

// One evaluation in progress: a validated problem the kernel does not decline.
struct OpRun {
  const Kernel& kernel;
  const Problem& problem;
  BoundFn bound;                   // the kernel's, the override, or the op's default
  const EvaluateOptions& options;
  ArrayLayout layout;
};

// Throws std::invalid_argument unless `problem` is well formed for `kernel`'s op.
void validate(const Kernel& kernel, const Problem& problem);

// The reference (exact_reference.cpp), from the inputs as the kernel stores
// them (widened). A reference of the kernel's op and dtype and the problem's
// shape, no part computed:
ExactReference empty_reference(const Kernel& k, const Problem& p);
// A backward op's saved statistics alone (the forward's mean and rstd or
// rrms of x without affine, correctly rounded); nothing for a forward op:
void compute_saved_statistics(ExactReference& r, const std::vector<float>& x, const Problem& p);
// The reference proper (a backward's holds its saved statistics too):
void compute_main_reference(ExactReference& r, const std::vector<float>& x, const std::vector<float>& dy,
                            const Problem& p);
// A backward op's saved statistics, from its computed reference proper.
void take_saved_statistics(ExactReference& r);
// Throws std::invalid_argument unless `r` is of the kernel's op and dtype and the problem's shape.
void require_fits(const ExactReference& r, const Kernel& k, const Problem& p);

// What a backward op needs before its call: the given reference, or one
// computed into `own`: whole, its saved statistics taken from it (the
// forward's sums are done once), or with EvaluateOptions::outputs_only the
// saved statistics alone.
const ExactReference& reference_before_the_call(const OpRun& run, const std::vector<float>& x,
                                                const std::vector<float>& dy, ExactReference& own);

// The main elements (Evaluation::main_elements) when the options keep them:
// computed and exact values and xhat, allowance +inf until a check sets it;
// null when they are not kept.
MainElement* keep_main_elements(const OpRun& run, Evaluation& ev, const std::vector<float>& computed,
                                const ExactReference& ref);

void evaluate_spec_fwd(const OpRun& run, Evaluation& ev);     // every forward norm: the table's ops and any forward spec
void evaluate_bwd(const OpRun& run, Evaluation& ev);         // every backward norm: LayerNorm and RMSNorm, any judged spec
void evaluate_norm_linear(const OpRun& run, Evaluation& ev);  // layernorm_linear_fwd, rmsnorm_linear_fwd

// v[i], or `missing` when v is empty (no gamma: 1, no beta: 0).
inline double at_or(const std::vector<float>& v, std::size_t i, double missing) {
  return v.empty() ? missing : static_cast<double>(v[i]);
}

// The end of every op: normwise error of the main output over the rows that
// are checked, and pass.
void finish(Evaluation& ev, Op op, const std::vector<float>& main_computed,
            const std::vector<double>& main_exact, const std::vector<RowStats>& stats, int64_t cols);

// ---- backward (backward.cpp) ----

// The inputs of a backward op as the kernel stores them, and the reference
// (given, or in `own` with the saved statistics computed).
struct BackwardStart {
  StoredInput x, dy;
  ExactReference own;
  const ExactReference* reference = nullptr;
};

// Fills `start` and asks the gate with the saved statistic (rstd or rrms):
// the reason the kernel declines the problem, or empty.
std::string start_backward(const OpRun& run, BackwardStart& start);

// A backward from=y (op_spec.h, Apex's memory_efficient) reads the
// forward's y in place of x: the exact forward of the problem (its spec's
// forward, exact math) correctly rounded to y's format. The kernel recovers
// xhat' = (y^ - beta) / w, off the exact xhat by (y^ - y) / w, which the
// checks add to dx's and dgamma's allowances (tally_backward); forming
// xhat' costs the kernel a subtraction and a division where the x form
// costs a subtraction and a multiplication, which its bound covers.
struct SavedY {
  StoredInput stored;          // y^ as the kernel reads it (bits for 16-bit) and widened
  DType dtype = DType::f32;    // y's format
  std::vector<double> exact;   // the exact y to double (within relative 2^-53)
  std::vector<double> weight;  // per column: w_j (gamma_j, or 1 without gamma)
};

// The y of a from=y kernel, or nullopt for any other kernel. `x` is x as the
// kernel would store it (widened).
std::optional<SavedY> saved_y(const Kernel& k, const Problem& p, const std::vector<float>& x);

// y^ in a guarded array of its format, for the call.
class SavedYArray {
 public:
  SavedYArray(const SavedY& y, ArrayLayout layout);
  const void* data() const;
  bool guards_intact() const;
  bool holds(const SavedY& y) const;

 private:
  std::optional<FloatArray> f32_;
  std::optional<HalfArray> half_;
};

// What a backward reads besides the table's inputs: for a from=y kernel, y^
// (SavedY) and beta in guarded arrays; nothing for any other backward.
class BackwardExtraInputs {
 public:
  BackwardExtraInputs(const OpRun& run, const std::vector<float>& x);
  void pass_to(KernelArgs& args) const;          // saved_y and beta
  bool guards_intact() const;
  bool inputs_kept(const Problem& p) const;      // y^ and beta unchanged
  const SavedY* from_y() const { return y_ ? &*y_ : nullptr; }

 private:
  std::optional<SavedY> y_;
  std::optional<SavedYArray> y_array_;
  OptionalInput beta_;
};

// What a backward reference holds for the checks below (LayerNormBwdReference
// and RmsNormBwdReference alike; dbeta_exact null for RMSNorm).
struct BackwardExact {
  const std::vector<RowStats>& stats;
  const std::vector<double>& xhat;
  const std::vector<double>& dx;
  const std::vector<double>& dgamma;
  const std::vector<double>* dbeta;
  const std::vector<double>& sum_abs_dy_xhat;
  const std::vector<double>& sum_abs_dy;
  const std::vector<double>& mean_abs_g;
  const std::vector<double>& mean_abs_g_xhat;
};

// A backward kernel's outputs, read back (dgamma, dbeta null where the spec
// has none; dresidual, the gradient written for the residual input, with `add`).
struct BackwardOutputs {
  const Readback& dx;
  const Readback* dgamma;
  const Readback* dbeta;
  const Readback* dresidual;
};

// Every dx of the checked rows, then dgamma and dbeta (where given) of every
// column, against their allowances (`dy` as the kernel saw it, widened from
// 16 bits if need be), each bound widened by what `spec`'s formats cost
// (backward_spec.h). `kept`: the main elements whose allowance to record, or null.
void tally_backward(Tally& tally, const OpSpec& spec, Op op, const BackwardExact& ref, const Problem& p,
                    const std::vector<float>& dy, BoundFn bound, DType dtype, const BackwardOutputs& out,
                    MainElement* kept, const SavedY* from_y);

}  // namespace normcheck::evaluation
