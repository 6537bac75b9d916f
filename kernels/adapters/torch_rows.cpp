// The libtorch adapters' rows. They live in normcheck_kernels, which does not
// link libtorch: `fn` and `declines` load libnormcheck_torch.so on first use
// (adapter_rows.h); the code that calls libtorch is torch_layernorm_{fwd,bwd}.cpp.
// The rows are held to the default bound (what a careful float32 two-pass
// kernel meets) and point at default_layernorm_{fwd,bwd}_bound itself, so
// that a report can tell which bound a verdict is against (bound_text,
// reports/verdict.h).
#include "adapter_rows.h"
#include "normcheck/bounds.h"
#include "normcheck/kernel.h"

namespace normcheck {
namespace {

using adapters::AdapterModule;
using adapters::torch_module;

}  // namespace

// Its Welford moments multiply deviations from the running mean, so like a
// two-pass sum of squares they stay finite while max|x| <= 2^62 / sqrt(d)
// (the range of the scalar pytorch_form kernel, which reimplements them).
extern const Kernel kTorchLayerNormFwd;
constinit const Kernel kTorchLayerNormFwd{
    .name = "layernorm_fwd.torch",
    .op = Op::layernorm_fwd,
    .origin = Origin::third_party,
    .dtype = DType::f32,
    .algorithm = "libtorch 1.13 at::native_layer_norm (CPU): float mean and variance by "
                 "vectorized Welford (RowwiseMoments), rstd = 1/sqrt(max(var,0)+eps), "
                 "y = (x*rstd - mean*rstd)*gamma + beta",
    .fn = &adapters::layernorm_fwd<&torch_module>,
    .bound = &default_layernorm_fwd_bound,  // = default_bound(Op::layernorm_fwd)
    .range = {.max_abs_x = 0x1p62, .sqrt_d_scaled = true},
    .declines = &adapters::declines<&torch_module, &AdapterModule::layernorm_fwd_declines>,
    .family = Family::libtorch,
};

// libtorch sums dy*gamma*x, which overflows for |x| near FLT_MAX; 2^124 is the
// range the scalar backward kernels (kernels/scalar) declare for the same terms.
extern const Kernel kTorchLayerNormBwd;
constinit const Kernel kTorchLayerNormBwd{
    .name = "layernorm_bwd.torch",
    .op = Op::layernorm_bwd,
    .origin = Origin::third_party,
    .dtype = DType::f32,
    .algorithm = "libtorch 1.13 at::native_layer_norm_backward (CPU): ds = sum dy*gamma*x, "
                 "db = sum dy*gamma, dx = rstd*dy*gamma + b*x + c with "
                 "b = (db*mean - ds)*rstd^3/d, c = -b*mean - db*rstd/d; dgamma, dbeta column sums",
    .fn = &adapters::layernorm_bwd<&torch_module>,
    .bound = &default_layernorm_bwd_bound,  // = default_bound(Op::layernorm_bwd)
    .range = {.max_abs_x = 0x1p124},
    .declines = &adapters::declines<&torch_module, &AdapterModule::layernorm_bwd_declines>,
    .family = Family::libtorch,
};

}  // namespace normcheck
