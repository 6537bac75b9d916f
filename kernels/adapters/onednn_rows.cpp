// The oneDNN adapters' rows. They live in normcheck_kernels, which does not
// link oneDNN: `fn` and `declines` load libnormcheck_onednn.so on first use
// (adapter_rows.h); the code that calls oneDNN is onednn_layernorm_{fwd,bwd}.cpp.
// The rows are held to the default bound (adapters::layernorm_row).
#include "adapter_rows.h"
#include "normcheck/kernel.h"
#include "onednn_variance.h"

namespace normcheck {

using adapters::onednn_module;

// oneDNN sums (x - mean)^2 in float: d squares of |x - mean| <= 2 max|x| stay
// below FLT_MAX while max|x| <= 2^63 / sqrt(d); 2^62 / sqrt(d), the range of
// the scalar two-pass kernels, leaves room for the rounding of the sum.
extern const Kernel kOnednnLayerNormFwd;
constinit const Kernel kOnednnLayerNormFwd = adapters::layernorm_row<&onednn_module>(
    Op::layernorm_fwd, "layernorm_fwd.onednn", Family::onednn, {.max_abs_x = 0x1p62, .sqrt_d_scaled = true},
    "oneDNN 2.6 layer_normalization_forward (v2 API, use_scale/use_shift): "
    "float mean, then float variance of x - mean, y = (x - mean) * rstd * gamma + beta");

// oneDNN forms x - mean, which overflows for |x| near FLT_MAX; 2^124 is the
// range the scalar backward kernels (kernels/scalar) declare for the same terms.
// It is fed variance = 1/rstd^2: declines_rstd declines an rstd whose 1/rstd^2
// is not a normal float.
extern const Kernel kOnednnLayerNormBwd;
constinit const Kernel kOnednnLayerNormBwd = adapters::layernorm_row<&onednn_module>(
    Op::layernorm_bwd, "layernorm_bwd.onednn", Family::onednn, {.max_abs_x = 0x1p124},
    "oneDNN 2.6 layer_normalization_backward (v2 API): dx from row sums of "
    "dy*gamma and dy*gamma*xhat; diff_scale/diff_shift summed over rows; "
    "fed variance = 1/rstd^2 with eps = 0",
    &onednn::declines_rstd);

}  // namespace normcheck
