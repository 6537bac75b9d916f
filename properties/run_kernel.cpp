#include "run_kernel.h"

#include <stdexcept>

#include "normcheck/reference.h"

namespace normcheck::props {
namespace {

const float* or_null(const std::vector<float>& v) { return v.empty() ? nullptr : v.data(); }

}  // namespace

bool runnable(const Kernel& kernel) {
  return kernel.dtype == DType::f32 &&
         (std::holds_alternative<nc_layernorm_fwd_fn>(kernel.fn) ||
          std::holds_alternative<nc_layernorm_bwd_fn>(kernel.fn) ||
          std::holds_alternative<nc_rmsnorm_fwd_fn>(kernel.fn) ||
          std::holds_alternative<nc_rmsnorm_bwd_fn>(kernel.fn));
}

KernelOutputs run_kernel(const Kernel& kernel, const Problem& p) {
  KernelOutputs out;
  const auto n = static_cast<size_t>(p.rows * p.cols);
  const auto rows = static_cast<size_t>(p.rows), cols = static_cast<size_t>(p.cols);
  out.main.assign(n, 0.0f);
  if (const auto* fwd = std::get_if<nc_layernorm_fwd_fn>(&kernel.fn)) {
    out.mean.assign(rows, 0.0f);
    out.stat.assign(rows, 0.0f);
    (*fwd)(p.x.data(), or_null(p.gamma), or_null(p.beta), out.main.data(), out.mean.data(),
           out.stat.data(), p.rows, p.cols, p.eps);
  } else if (const auto* bwd = std::get_if<nc_layernorm_bwd_fn>(&kernel.fn)) {
    const auto saved = reference_layernorm_fwd(p.x, {}, {}, p.rows, p.cols, p.eps);
    out.dgamma.assign(cols, 0.0f);
    out.dbeta.assign(cols, 0.0f);
    (*bwd)(p.dy.data(), p.x.data(), or_null(p.gamma), saved.mean.rounded.data(),
           saved.rstd.rounded.data(), out.main.data(), out.dgamma.data(), out.dbeta.data(),
           p.rows, p.cols);
  } else if (const auto* rms = std::get_if<nc_rmsnorm_fwd_fn>(&kernel.fn)) {
    out.stat.assign(rows, 0.0f);
    (*rms)(p.x.data(), or_null(p.gamma), out.main.data(), out.stat.data(), p.rows, p.cols, p.eps);
  } else if (const auto* rms_bwd = std::get_if<nc_rmsnorm_bwd_fn>(&kernel.fn)) {
    const auto saved = reference_rmsnorm_fwd(p.x, {}, p.rows, p.cols, p.eps);
    out.dgamma.assign(cols, 0.0f);
    (*rms_bwd)(p.dy.data(), p.x.data(), or_null(p.gamma), saved.rrms.rounded.data(),
               out.main.data(), out.dgamma.data(), p.rows, p.cols);
  } else {
    throw std::logic_error("run_kernel: " + std::string(kernel.name) + " does not store f32");
  }
  return out;
}

}  // namespace normcheck::props
