#include "run_kernel.h"

#include <stdexcept>

#include "normcheck/invoke.h"
#include "normcheck/reference.h"

namespace normcheck::props {
namespace {

const float* or_null(const std::vector<float>& v) { return v.empty() ? nullptr : v.data(); }

}  // namespace

// A norm followed by a Linear is not: its output is z, not a row of x's shape,
// and the invariants that call run_kernel are statements about norms.
bool runnable(const Kernel& kernel) { return kernel.dtype == DType::f32 && !is_norm_linear(kernel.op); }

KernelOutputs run_kernel(const Kernel& kernel, const Problem& p) {
  if (!runnable(kernel))
    throw std::logic_error("run_kernel: " + std::string(kernel.name) + " does not store f32");
  KernelOutputs out;
  const auto n = static_cast<size_t>(p.rows * p.cols);
  const auto rows = static_cast<size_t>(p.rows), cols = static_cast<size_t>(p.cols);
  out.main.assign(n, 0.0f);
  KernelArgs args{.rows = p.rows, .cols = p.cols, .eps = p.eps, .x = p.x.data(), .dy = p.dy.data(),
                  .gamma = or_null(p.gamma), .beta = or_null(p.beta), .out = out.main.data()};
  // The backward's saved statistics: the forward's, correctly rounded.
  LayerNormFwdReference layernorm_saved;
  RmsNormFwdReference rmsnorm_saved;
  switch (kernel.op) {
    case Op::layernorm_fwd:
      out.mean.assign(rows, 0.0f);
      out.stat.assign(rows, 0.0f);
      args.mean = out.mean.data();
      args.stat = out.stat.data();
      break;
    case Op::layernorm_bwd:
      layernorm_saved = reference_layernorm_fwd(p.x, {}, {}, p.rows, p.cols, p.eps);
      out.dgamma.assign(cols, 0.0f);
      out.dbeta.assign(cols, 0.0f);
      args.saved_mean = layernorm_saved.mean.rounded.data();
      args.saved_stat = layernorm_saved.rstd.rounded.data();
      args.dgamma = out.dgamma.data();
      args.dbeta = out.dbeta.data();
      break;
    case Op::rmsnorm_fwd:
      out.stat.assign(rows, 0.0f);
      args.stat = out.stat.data();
      break;
    case Op::rmsnorm_bwd:
      rmsnorm_saved = reference_rmsnorm_fwd(p.x, {}, p.rows, p.cols, p.eps);
      out.dgamma.assign(cols, 0.0f);
      args.saved_stat = rmsnorm_saved.rrms.rounded.data();
      args.dgamma = out.dgamma.data();
      break;
    case Op::layernorm_linear_fwd:
    case Op::rmsnorm_linear_fwd: break;  // not runnable() (above)
  }
  invoke(kernel, args);
  return out;
}

}  // namespace normcheck::props
