// The libtorch adapters' rows. They live in normcheck_kernels, which does not
// link libtorch: `fn` and `declines` load libnormcheck_torch.so on first use
// (adapter_rows.h); the code that calls libtorch is
// torch_layernorm_{fwd,bwd,bwd_bf16}.cpp. The rows are held to the default
// bound (adapters::layernorm_row; the bf16 row's with its outputs rounded to
// bf16) and point at the default_layernorm_*_bound itself, so that a report
// can tell which bound a verdict is against (bound_text, reports/verdict.h).
#include "adapter_rows.h"
#include "normcheck/bounds.h"
#include "normcheck/kernel.h"
#include "normcheck/op_spec.h"

namespace normcheck {
namespace {

using adapters::AdapterModule;
using adapters::torch_module;

// What a bf16 nn.LayerNorm's backward reads and writes in libtorch 1.13: dy,
// x and dx in bf16, the weight in bf16, the mean and rstd its bf16 forward
// saved (native_layer_norm returns them in the input's dtype), and dgamma and
// dbeta in the parameters' bf16. Every sum is float32 (no acc=) and the sum
// over the rows is one float32 sum (no reduce=): what a correct kernel with
// these storage formats computes, each output rounded once to bf16.
constexpr OpSpec torch_bf16_backward_spec() {
  OpSpec s;  // default_spec(NormKind::layernorm, Direction::bwd), with its float32 formats
  s.direction = Direction::bwd;
  // the activations as the text form's dtype=bf16 sets them (x, residual, y,
  // residual_out, dy, dx), then the weight, the statistics and the gradients
  for (const TensorName t : {TensorName::x, TensorName::residual, TensorName::y, TensorName::residual_out,
                             TensorName::dy, TensorName::dx, TensorName::gamma, TensorName::mean, TensorName::stat,
                             TensorName::dgamma, TensorName::dbeta})
    s.dtype[static_cast<std::size_t>(t)] = DType::bf16;
  return s;
}
constexpr OpSpec kTorchBf16BackwardSpec = torch_bf16_backward_spec();

}  // namespace

// Its Welford moments multiply deviations from the running mean, so like a
// two-pass sum of squares they stay finite while max|x| <= 2^62 / sqrt(d)
// (the range of the scalar pytorch_form kernel, which reimplements them).
extern const Kernel kTorchLayerNormFwd;
constinit const Kernel kTorchLayerNormFwd = adapters::layernorm_row<&torch_module>(
    Op::layernorm_fwd, "layernorm_fwd.torch", Family::libtorch, {.max_abs_x = 0x1p62, .sqrt_d_scaled = true},
    "libtorch 1.13 at::native_layer_norm (CPU): float mean and variance by "
    "vectorized Welford (RowwiseMoments), rstd = 1/sqrt(max(var,0)+eps), "
    "y = (x*rstd - mean*rstd)*gamma + beta");

// libtorch sums dy*gamma*x, which overflows for |x| near FLT_MAX; 2^124 is the
// range the scalar backward kernels (kernels/scalar) declare for the same terms.
extern const Kernel kTorchLayerNormBwd;
constinit const Kernel kTorchLayerNormBwd = adapters::layernorm_row<&torch_module>(
    Op::layernorm_bwd, "layernorm_bwd.torch", Family::libtorch, {.max_abs_x = 0x1p124},
    "libtorch 1.13 at::native_layer_norm_backward (CPU): ds = sum dy*gamma*x, "
    "db = sum dy*gamma, dx = rstd*dy*gamma + b*x + c with "
    "b = (db*mean - ds)*rstd^3/d, c = -b*mean - db*rstd/d; dgamma, dbeta column sums");

// libtorch 1.13's bf16 backward, held to what its spec promises: float32
// sums, each output rounded once to bf16 (default_layernorm_bwd_bf16_bound,
// widened by evaluate() for the bf16 weight and saved statistics). libtorch
// does not meet it on many rows: its dgamma and dbeta partials are bf16
// tensors, so each thread's running sum over its rows is rounded to bf16 at
// every row and stops growing once its spacing (2^-7 of its size) passes the
// terms (docs/accuracy_backward.md). Domain and declines as layernorm_bwd.torch's (the
// same products; the element count is checked as for 4-byte elements, which
// is stricter than bf16 needs): its float32 row on the formats of the spec.
extern const Kernel kTorchLayerNormBwdBf16;
constinit const Kernel kTorchLayerNormBwdBf16 =
    adapters::on_formats<&torch_module, &AdapterModule::layernorm_bwd_bf16>(
        adapters::layernorm_row<&torch_module>(
            Op::layernorm_bwd, "layernorm_bwd.torch_bf16", Family::libtorch, {.max_abs_x = 0x1p124},
            "libtorch 1.13 at::native_layer_norm_backward (CPU) on bf16 tensors: in float from "
            "bf16 dy, x, gamma, mean, rstd, ds = sum dy*gamma*x, db = sum dy*gamma, "
            "dx = rstd*dy*gamma + b*x + c with b = (db*mean - ds)*rstd^3/d, c = -b*mean - db*rstd/d, "
            "rounded to bf16; dgamma, dbeta summed over each thread's rows into a bf16 partial "
            "(rounded to bf16 at every row), the partials added in float, written in bf16"),
        DType::bf16, &kTorchBf16BackwardSpec,
        &default_layernorm_bwd_bf16_bound);  // = plugin_bound(Op::layernorm_bwd, DType::bf16)

}  // namespace normcheck
