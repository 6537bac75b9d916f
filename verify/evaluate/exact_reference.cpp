// The exact reference of a problem for a kernel (evaluate.h: ExactReference),
// and a backward kernel's saved statistics, which its call needs.
#include <stdexcept>

#include "op.h"
#include "stored_input.h"

namespace normcheck {
namespace evaluation {

ExactReference empty_reference(const Kernel& k, const Problem& p) {
  ExactReference r;
  r.op = k.op;
  r.dtype = k.dtype;
  r.rows = p.rows;
  r.cols = p.cols;
  return r;
}

void compute_saved_statistics(ExactReference& r, const std::vector<float>& x, const Problem& p) {
  // The saved statistics: the forward's, correctly rounded, of x without
  // affine (mean, rstd / rrms; the forward's y and xhat are not needed).
  if (r.op == Op::layernorm_bwd) r.layernorm_fwd = reference_layernorm_fwd_statistics(x, p.rows, p.cols, p.eps);
  if (r.op == Op::rmsnorm_bwd) r.rmsnorm_fwd = reference_rmsnorm_fwd_statistics(x, p.rows, p.cols, p.eps);
}

void compute_main_reference(ExactReference& r, const std::vector<float>& x, const std::vector<float>& dy,
                            const Problem& p) {
  switch (r.op) {
    case Op::layernorm_fwd:
      r.layernorm_fwd = reference_layernorm_fwd(x, p.gamma, p.beta, p.rows, p.cols, p.eps);
      break;
    case Op::layernorm_bwd:
      r.layernorm_bwd = reference_layernorm_bwd(dy, x, p.gamma, p.rows, p.cols, p.eps);
      break;
    case Op::rmsnorm_fwd: r.rmsnorm_fwd = reference_rmsnorm_fwd(x, p.gamma, p.rows, p.cols, p.eps); break;
    case Op::rmsnorm_bwd: r.rmsnorm_bwd = reference_rmsnorm_bwd(dy, x, p.gamma, p.rows, p.cols, p.eps); break;
    case Op::layernorm_linear_fwd:
    case Op::rmsnorm_linear_fwd:
      r.norm_linear = reference_norm_linear(r.op, x, p.gamma, p.beta, p.weight, p.bias, p.rows, p.cols,
                                            p.out_features, p.eps);
      break;
  }
}

void take_saved_statistics(ExactReference& r) {
  if (r.op == Op::layernorm_bwd) {
    r.layernorm_fwd.mean = r.layernorm_bwd.mean;
    r.layernorm_fwd.rstd = r.layernorm_bwd.rstd;
  }
  if (r.op == Op::rmsnorm_bwd) r.rmsnorm_fwd.rrms = r.rmsnorm_bwd.rrms;
}

void require_fits(const ExactReference& r, const Kernel& k, const Problem& p) {
  if (r.op != k.op || r.dtype != k.dtype || r.rows != p.rows || r.cols != p.cols)
    throw std::invalid_argument("evaluate: kernel " + std::string(k.name) +
                                ": the reference given is not of its op, dtype and the problem's shape");
}

const ExactReference& reference_before_the_call(const OpRun& run, const std::vector<float>& x,
                                                const std::vector<float>& dy, ExactReference& own) {
  if (const ExactReference* given = run.options.reference) {
    require_fits(*given, run.kernel, run.problem);
    return *given;
  }
  own = empty_reference(run.kernel, run.problem);
  if (run.options.outputs_only) {  // no reference to compare with: the statistics alone
    compute_saved_statistics(own, x, run.problem);
    return own;
  }
  compute_main_reference(own, x, dy, run.problem);
  take_saved_statistics(own);
  return own;
}

}  // namespace evaluation

const std::vector<double>& ExactReference::xhat() const {
  switch (op) {
    case Op::layernorm_fwd: return layernorm_fwd.xhat.exact;
    case Op::layernorm_bwd: return layernorm_bwd.xhat.exact;
    case Op::rmsnorm_fwd: return rmsnorm_fwd.xhat.exact;
    case Op::rmsnorm_bwd: break;
    case Op::layernorm_linear_fwd:
    case Op::rmsnorm_linear_fwd: return norm_linear.xhat.exact;
  }
  return rmsnorm_bwd.xhat.exact;
}

const std::vector<double>& ExactReference::main_exact() const {
  switch (op) {
    case Op::layernorm_fwd: return layernorm_fwd.y.exact;
    case Op::layernorm_bwd: return layernorm_bwd.dx.exact;
    case Op::rmsnorm_fwd: return rmsnorm_fwd.y.exact;
    case Op::rmsnorm_bwd: break;
    case Op::layernorm_linear_fwd:
    case Op::rmsnorm_linear_fwd: return norm_linear.z;
  }
  return rmsnorm_bwd.dx.exact;
}

ExactReference exact_reference(const Kernel& kernel, const Problem& problem) {
  evaluation::validate(kernel, problem);
  ExactReference r = evaluation::empty_reference(kernel, problem);
  const evaluation::StoredInput x = evaluation::store(kernel.dtype, problem.x);
  const evaluation::StoredInput dy = evaluation::store(kernel.dtype, problem.dy);
  evaluation::compute_main_reference(r, x.widened, dy.widened, problem);
  evaluation::take_saved_statistics(r);
  return r;
}

}  // namespace normcheck
