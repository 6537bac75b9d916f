// The oneDNN adapters' rows. They live in normcheck_kernels, which does not
// link oneDNN: `fn` and `declines` load libnormcheck_onednn.so on first use
// (adapter_rows.h); the code that calls oneDNN is onednn_layernorm_{fwd,bwd}.cpp.
// The rows are held to the default bound (what a careful float32 two-pass
// kernel meets) and point at default_layernorm_{fwd,bwd}_bound itself, so
// that a report can tell which bound a verdict is against (bound_text,
// reports/verdict.h).
#include "adapter_rows.h"
#include "normcheck/bounds.h"
#include "normcheck/kernel.h"
#include "onednn_variance.h"

namespace normcheck {
namespace {

using adapters::AdapterModule;
using adapters::onednn_module;

}  // namespace

// oneDNN sums (x - mean)^2 in float: d squares of |x - mean| <= 2 max|x| stay
// below FLT_MAX while max|x| <= 2^63 / sqrt(d); 2^62 / sqrt(d), the range of
// the scalar two-pass kernels, leaves room for the rounding of the sum.
extern const Kernel kOnednnLayerNormFwd;
constinit const Kernel kOnednnLayerNormFwd{
    .name = "layernorm_fwd.onednn",
    .op = Op::layernorm_fwd,
    .origin = Origin::third_party,
    .dtype = DType::f32,
    .algorithm = "oneDNN 2.6 layer_normalization_forward (v2 API, use_scale/use_shift): "
                 "float mean, then float variance of x - mean, y = (x - mean) * rstd * gamma + beta",
    .fn = &adapters::layernorm_fwd<&onednn_module>,
    .bound = &default_layernorm_fwd_bound,  // = default_bound(Op::layernorm_fwd)
    .range = {.max_abs_x = 0x1p62, .sqrt_d_scaled = true},
    .declines = &adapters::declines<&onednn_module, &AdapterModule::layernorm_fwd_declines>,
    .family = Family::onednn,
};

// oneDNN forms x - mean, which overflows for |x| near FLT_MAX; 2^124 is the
// range the scalar backward kernels (kernels/scalar) declare for the same terms.
extern const Kernel kOnednnLayerNormBwd;
constinit const Kernel kOnednnLayerNormBwd{
    .name = "layernorm_bwd.onednn",
    .op = Op::layernorm_bwd,
    .origin = Origin::third_party,
    .dtype = DType::f32,
    .algorithm = "oneDNN 2.6 layer_normalization_backward (v2 API): dx from row sums of "
                 "dy*gamma and dy*gamma*xhat; diff_scale/diff_shift summed over rows; "
                 "fed variance = 1/rstd^2 with eps = 0",
    .fn = &adapters::layernorm_bwd<&onednn_module>,
    .bound = &default_layernorm_bwd_bound,  // = default_bound(Op::layernorm_bwd)
    .range = {.max_abs_x = 0x1p124},
    .declines = &adapters::declines<&onednn_module, &AdapterModule::layernorm_bwd_declines>,
    .declines_saved_statistic = &onednn::declines_rstd,
    .family = Family::onednn,
};

}  // namespace normcheck
