// oneDNN's layer normalization backward (the v2 API of oneDNN 2.6) as a row of
// the kernel table, on the caller's memory.
//
// oneDNN takes the forward's variance and eps, where the table's backward gets
// rstd. The adapter passes variance = 1/rstd^2 (computed in double, rounded to
// float once) with eps = 0, so oneDNN's own 1/sqrt(variance + eps) gives back
// rstd to within about 1.25 ulp: 1/4 ulp from rounding the variance (the square
// root halves its relative error), 1/2 from the square root, 1/2 from the
// division. That holds while the variance is a normal float, rstd < 2^63; a
// larger rstd (eps below 2^-126 on a constant row) loses bits in the subnormal
// variance, and beyond 2^74.5 the variance underflows to 0 and rstd becomes inf.
// At the other end, rstd < 2^-64 (sigma > 2^64, e.g. |x| ~ 1e30) makes
// 1/rstd^2 overflow float: oneDNN would be handed an infinite variance. Such
// statistics are not expressible through oneDNN's API at all, so the kernel
// declines every rstd whose variance is not a normal float (declines_rstd in onednn_variance.h)
// rather than report the adapter's own artifact as oneDNN's error.
// Part of libnormcheck_onednn.so; its row is in onednn_rows.cpp.
#include <string>
#include <vector>

#include "normcheck/kernel.h"
#include "element_count.h"
#include "onednn_session.h"
#include "onednn_variance.h"

namespace normcheck::onednn {
namespace {

using dnnl::layer_normalization_backward;
using dnnl::layer_normalization_forward;
using dnnl::normalization_flags;
using dnnl::prop_kind;

// What the caller wants decides the primitive: dgamma or dbeta need
// prop_kind::backward with use_scale and use_shift (oneDNN then writes both
// diff_scale and diff_shift); dx alone is backward_data, scaled when gamma is given.
struct Config {
  prop_kind prop;
  normalization_flags flags;
};

Config config_for(bool has_gamma, bool wants_param_grads) {
  if (wants_param_grads)
    return {prop_kind::backward, normalization_flags::use_scale | normalization_flags::use_shift};
  return {prop_kind::backward_data,
          has_gamma ? normalization_flags::use_scale : normalization_flags::none};
}

layer_normalization_backward::primitive_desc backward_desc(int64_t rows, int64_t cols,
                                                           const Config& config) {
  // eps = 0: the variance passed in already is 1/rstd^2 (see the top of the file).
  constexpr float kEps = 0.0f;
  const auto data = onednn::matrix_desc(rows, cols);
  const auto stats = onednn::vector_desc(rows);
  const layer_normalization_forward::desc forward(prop_kind::forward_training, data, stats,
                                                  kEps, config.flags);
  const layer_normalization_forward::primitive_desc hint(forward, onednn::engine());
  const layer_normalization_backward::desc desc(config.prop, data, data, stats, kEps,
                                                config.flags);
  return {desc, onednn::engine(), hint};
}

// A primitive with its memory objects; the data handles are set per call.
struct Backward {
  layer_normalization_backward primitive;
  dnnl::memory src, diff_dst, mean, variance, scale, shift, diff_src, diff_scale, diff_shift;
};

Backward create_backward(int64_t rows, int64_t cols, const Config& config) {
  const auto pd = backward_desc(rows, cols, config);
  const auto data = onednn::matrix_desc(rows, cols);
  const auto stats = onednn::vector_desc(rows);
  const auto params = onednn::vector_desc(cols);
  return {layer_normalization_backward(pd), onednn::unbound_memory(data),
          onednn::unbound_memory(data),     onednn::unbound_memory(stats),
          onednn::unbound_memory(stats),    onednn::unbound_memory(params),
          onednn::unbound_memory(params),   onednn::unbound_memory(data),
          onednn::unbound_memory(params),   onednn::unbound_memory(params)};
}

}  // namespace

void onednn_layernorm_bwd(const float* dy, const float* x, const float* gamma,
                          const float* mean, const float* rstd, float* dx, float* dgamma,
                          float* dbeta, int64_t rows, int64_t cols) {
  if (rows <= 0 || cols <= 0) return;
  const bool wants_param_grads = dgamma != nullptr || dbeta != nullptr;
  const Config config = config_for(gamma != nullptr, wants_param_grads);
  thread_local onednn::PrimitiveCache<Backward> cache;
  const onednn::PrimitiveKey key{rows, cols, 0.0f, static_cast<unsigned>(config.flags),
                                 static_cast<int>(config.prop)};
  Backward& b = cache.get(key, [&] { return create_backward(rows, cols, config); });

  thread_local std::vector<float> variance_buffer, dgamma_scratch, dbeta_scratch;
  float* variance = onednn::scratch(variance_buffer, rows);
  for (int64_t i = 0; i < rows; ++i) variance[i] = variance_for(rstd[i]);

  onednn::Args args;
  onednn::bind_argument(args, DNNL_ARG_SRC, b.src, x);
  onednn::bind_argument(args, DNNL_ARG_DIFF_DST, b.diff_dst, dy);
  onednn::bind_argument(args, DNNL_ARG_MEAN, b.mean, mean);
  onednn::bind_argument(args, DNNL_ARG_VARIANCE, b.variance, variance);
  onednn::bind_argument(args, DNNL_ARG_DIFF_SRC, b.diff_src, dx);
  if (config.flags != normalization_flags::none) {
    // Without gamma, dgamma is the gradient of a scale of ones.
    onednn::bind_argument(args, DNNL_ARG_SCALE, b.scale, gamma ? gamma : onednn::ones(cols));
  }
  if (wants_param_grads) {
    onednn::bind_argument(args, DNNL_ARG_SHIFT, b.shift, onednn::zeros(cols));
    onednn::bind_argument(args, DNNL_ARG_DIFF_SCALE, b.diff_scale,
                          dgamma ? dgamma : onednn::scratch(dgamma_scratch, cols));
    onednn::bind_argument(args, DNNL_ARG_DIFF_SHIFT, b.diff_shift,
                          dbeta ? dbeta : onednn::scratch(dbeta_scratch, cols));
  }
  b.primitive.execute(onednn::stream(), args);
  onednn::stream().wait();
}

// A shape too large to address, or one oneDNN cannot build a primitive for
// (none known for f32 in 2.6; the check asks the library rather than
// assuming). The table's Shape does not say whether dgamma/dbeta are wanted,
// so the fuller primitive is asked for.
std::string onednn_bwd_declines(const Shape& shape) {
  if (shape.rows <= 0 || shape.cols <= 0) return {};  // a no-op, nothing to ask
  if (std::string reason = adapters::element_count_declines(shape, "oneDNN"); !reason.empty())
    return reason;
  return onednn::creation_failure(
      [&] { backward_desc(shape.rows, shape.cols, config_for(shape.has_gamma, true)); });
}

}  // namespace normcheck::onednn
