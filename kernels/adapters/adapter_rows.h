// What an adapter row in normcheck_kernels points at: functions of the
// table's types that load the row's module on first use (adapter_loader.h)
// and forward to it; and the float32 LayerNorm rows themselves, whose facts
// other than name, family, domain and algorithm are the same for every
// library. Included only by the *_rows.cpp files.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "adapter_loader.h"
#include "normcheck/bounds.h"
#include "normcheck/kernel.h"

namespace normcheck::adapters {

using ModuleFn = const LoadedModule& (*)();

// The row's module, or a throw with the reason it did not load. Reached only
// by a caller that ran the kernel without asking declines() first, which
// reports the same reason.
inline const AdapterModule& require(const LoadedModule& loaded) {
  if (!loaded.module) throw std::runtime_error(loaded.failure);
  return *loaded.module;
}

template <ModuleFn module>
void layernorm_fwd(const float* x, const float* gamma, const float* beta, float* y, float* mean,
                   float* rstd, int64_t rows, int64_t cols, float eps) {
  require(module()).layernorm_fwd(x, gamma, beta, y, mean, rstd, rows, cols, eps);
}

template <ModuleFn module>
void layernorm_bwd(const float* dy, const float* x, const float* gamma, const float* mean,
                   const float* rstd, float* dx, float* dgamma, float* dbeta, int64_t rows,
                   int64_t cols) {
  require(module()).layernorm_bwd(dy, x, gamma, mean, rstd, dx, dgamma, dbeta, rows, cols);
}

// A version-2 row (Kernel::spec): the module's function `fn`.
template <ModuleFn module, SpecKernelFn AdapterModule::*fn>
void spec_call(const nc_call* call) {
  (require(module()).*fn)(call);
}

// A row whose module did not load declines every problem with the reason.
template <ModuleFn module, DeclineFn AdapterModule::*library_declines>
std::string declines(const Shape& shape) {
  const LoadedModule& loaded = module();
  if (!loaded.module) return loaded.failure;
  const DeclineFn fn = loaded.module->*library_declines;
  return fn ? fn(shape) : std::string();
}

// A library's float32 LayerNorm row, forward or backward: held to the
// default bound (what a careful float32 two-pass kernel meets), pointing at
// default_layernorm_{fwd,bwd}_bound itself so that a report can tell which
// bound a verdict is against (bound_text, reports/verdict.h).
// `saved_statistic` declines a saved rstd the library cannot take (backward).
template <ModuleFn module>
constexpr Kernel layernorm_row(Op op, std::string_view name, Family family, InputRange range,
                               std::string_view algorithm,
                               SavedStatisticDeclineFn saved_statistic = nullptr) {
  const bool forward = op == Op::layernorm_fwd;
  return {
      .name = name,
      .op = op,
      .origin = Origin::third_party,
      .dtype = DType::f32,
      .algorithm = algorithm,
      .fn = forward ? KernelFn(&layernorm_fwd<module>) : KernelFn(&layernorm_bwd<module>),
      .bound = forward ? &default_layernorm_fwd_bound : &default_layernorm_bwd_bound,
      .range = range,
      .declines = forward ? &declines<module, &AdapterModule::layernorm_fwd_declines>
                          : &declines<module, &AdapterModule::layernorm_bwd_declines>,
      .declines_saved_statistic = saved_statistic,
      .family = family,
  };
}

// The row of a library's version-2 function `fn` (Kernel::spec) that runs the
// op of the float32 row `row` on the formats of `spec`: the same op, domain,
// declines and family, with x in `dtype`, held to `bound`.
template <ModuleFn module, SpecKernelFn AdapterModule::*fn>
constexpr Kernel on_formats(Kernel row, DType dtype, const OpSpec* spec, BoundFn bound) {
  row.dtype = dtype;
  row.fn = &spec_call<module, fn>;
  row.bound = bound;
  row.spec = spec;
  row.takes_row_stride = true;
  return row;
}

}  // namespace normcheck::adapters
