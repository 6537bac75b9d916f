// oneDNN's layer normalization forward (the v2 API of oneDNN 2.6) as a row of
// the kernel table. The primitive works on the caller's memory in place: x, y,
// gamma, beta and mean are handed to oneDNN as they are; oneDNN returns the
// variance, not rstd, so the variance is written into the caller's rstd array
// and turned into rstd = 1/sqrt(variance + eps) there, in float, which is the
// expression oneDNN evaluates internally.
// Part of libnormcheck_onednn.so; its row is in onednn_rows.cpp.
#include <cmath>
#include <string>
#include <vector>

#include "normcheck/kernel.h"
#include "element_count.h"
#include "onednn_session.h"

namespace normcheck::onednn {
namespace {

using dnnl::layer_normalization_forward;
using dnnl::normalization_flags;
using dnnl::prop_kind;

// gamma alone, beta alone, both or neither: oneDNN 2.6 has separate use_scale
// and use_shift flags, so every combination maps to a primitive.
normalization_flags affine_flags(bool has_gamma, bool has_beta) {
  auto flags = normalization_flags::none;
  if (has_gamma) flags |= normalization_flags::use_scale;
  if (has_beta) flags |= normalization_flags::use_shift;
  return flags;
}

layer_normalization_forward::primitive_desc forward_desc(int64_t rows, int64_t cols, float eps,
                                                         normalization_flags flags,
                                                         prop_kind prop) {
  const auto data = onednn::matrix_desc(rows, cols);
  const layer_normalization_forward::desc desc(prop, data, onednn::vector_desc(rows), eps,
                                               flags);
  return {desc, onednn::engine()};
}

// A primitive with its memory objects; the data handles are set per call.
struct Forward {
  layer_normalization_forward primitive;
  dnnl::memory src, dst, mean, variance, scale, shift;
};

Forward create_forward(int64_t rows, int64_t cols, float eps, normalization_flags flags,
                       prop_kind prop) {
  const auto pd = forward_desc(rows, cols, eps, flags, prop);
  const auto data = onednn::matrix_desc(rows, cols);
  const auto stats = onednn::vector_desc(rows);
  const auto params = onednn::vector_desc(cols);
  return {layer_normalization_forward(pd),  onednn::unbound_memory(data),
          onednn::unbound_memory(data),     onednn::unbound_memory(stats),
          onednn::unbound_memory(stats),    onednn::unbound_memory(params),
          onednn::unbound_memory(params)};
}

}  // namespace

void onednn_layernorm_fwd(const float* x, const float* gamma, const float* beta, float* y,
                          float* mean, float* rstd, int64_t rows, int64_t cols, float eps) {
  if (rows <= 0 || cols <= 0) return;
  // Statistics are outputs of forward_training only; without them the cheaper
  // forward_inference primitive runs.
  const bool want_stats = mean != nullptr || rstd != nullptr;
  const auto prop = want_stats ? prop_kind::forward_training : prop_kind::forward_inference;
  const auto flags = affine_flags(gamma != nullptr, beta != nullptr);
  thread_local onednn::PrimitiveCache<Forward> cache;
  const onednn::PrimitiveKey key{rows, cols, eps, static_cast<unsigned>(flags),
                                 static_cast<int>(prop)};
  Forward& f = cache.get(key, [&] { return create_forward(rows, cols, eps, flags, prop); });

  onednn::Args args;
  onednn::bind_argument(args, DNNL_ARG_SRC, f.src, x);
  onednn::bind_argument(args, DNNL_ARG_DST, f.dst, y);
  if (gamma) onednn::bind_argument(args, DNNL_ARG_SCALE, f.scale, gamma);
  if (beta) onednn::bind_argument(args, DNNL_ARG_SHIFT, f.shift, beta);
  thread_local std::vector<float> mean_scratch, variance_scratch;
  float* variance = nullptr;
  if (want_stats) {
    variance = rstd ? rstd : onednn::scratch(variance_scratch, rows);
    onednn::bind_argument(args, DNNL_ARG_MEAN, f.mean,
                          mean ? mean : onednn::scratch(mean_scratch, rows));
    onednn::bind_argument(args, DNNL_ARG_VARIANCE, f.variance, variance);
  }
  f.primitive.execute(onednn::stream(), args);
  onednn::stream().wait();
  if (rstd)
    for (int64_t i = 0; i < rows; ++i) rstd[i] = 1.0f / std::sqrt(variance[i] + eps);
}

// A shape too large to address, or one oneDNN cannot build a primitive for
// (none known for f32 in 2.6; the check asks the library rather than assuming).
std::string onednn_fwd_declines(const Shape& shape) {
  if (shape.rows <= 0 || shape.cols <= 0) return {};  // a no-op, nothing to ask
  if (std::string reason = adapters::element_count_declines(shape, "oneDNN"); !reason.empty())
    return reason;
  return onednn::creation_failure([&] {
    forward_desc(shape.rows, shape.cols, 1e-5f, affine_flags(shape.has_gamma, shape.has_beta),
                 prop_kind::forward_training);
  });
}

}  // namespace normcheck::onednn
