#include "transformer.h"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace normcheck::transformer {
namespace {

constexpr double kLayerNormEps = 1e-5;

Matrix xavier_normal(int fan_in, int fan_out, double gain, std::mt19937_64& rng) {
  std::normal_distribution<double> normal(0.0, gain * std::sqrt(2.0 / (fan_in + fan_out)));
  Matrix w(fan_in, fan_out);
  for (Eigen::Index i = 0; i < w.size(); ++i) w.data()[i] = normal(rng);
  return w;
}

// Row-wise LN without affine; keeps xhat and r for the backward.
struct Normalized {
  Matrix xhat;
  Eigen::VectorXd r;
};

Normalized layer_norm(const Matrix& z) {
  Normalized out{Matrix(z.rows(), z.cols()), Eigen::VectorXd(z.rows())};
  const double d = static_cast<double>(z.cols());
  for (Eigen::Index i = 0; i < z.rows(); ++i) {
    const double mean = z.row(i).sum() / d;
    const Eigen::RowVectorXd centred = z.row(i).array() - mean;
    out.r(i) = 1.0 / std::sqrt(centred.squaredNorm() / d + kLayerNormEps);
    out.xhat.row(i) = centred * out.r(i);
  }
  return out;
}

// dz = r (dy - mean(dy) - xhat mean(dy * xhat)), the LN Jacobian^T applied row-wise.
Matrix layer_norm_backward(const Normalized& n, const Matrix& dy) {
  Matrix dz(dy.rows(), dy.cols());
  const double d = static_cast<double>(dy.cols());
  for (Eigen::Index i = 0; i < dy.rows(); ++i) {
    const double mean_dy = dy.row(i).sum() / d;
    const double mean_dy_xhat = dy.row(i).dot(n.xhat.row(i)) / d;
    dz.row(i) = n.r(i) * (dy.row(i).array() - mean_dy - n.xhat.row(i).array() * mean_dy_xhat).matrix();
  }
  return dz;
}

// Everything the attention backward needs, recomputed from the sublayer input.
struct AttentionTrace {
  Matrix q, k, v, o;
  std::vector<Matrix> p;  // per head, tokens x tokens softmax weights
  Normalized out;
};

AttentionTrace attention_forward(const Stack& stack, const Layer& layer, const Matrix& x) {
  const Shape& s = stack.shape;
  const int dk = s.width / s.heads;
  const double scale = 1.0 / std::sqrt(static_cast<double>(dk));
  AttentionTrace t;
  t.q = x * layer.wq;
  t.k = x * layer.wk;
  t.v = x * layer.wv;
  t.o.resize(x.rows(), s.width);
  for (int h = 0; h < s.heads; ++h) {
    Matrix scores = t.q.middleCols(h * dk, dk) * t.k.middleCols(h * dk, dk).transpose() * scale;
    for (Eigen::Index i = 0; i < scores.rows(); ++i) {
      // Causal: token i sees tokens 0..i only (exp(-inf) = 0 in the softmax).
      if (s.causal)
        for (Eigen::Index j = i + 1; j < scores.cols(); ++j)
          scores(i, j) = -std::numeric_limits<double>::infinity();
      const double top = scores.row(i).maxCoeff();
      scores.row(i) = (scores.row(i).array() - top).exp();
      scores.row(i) /= scores.row(i).sum();
    }
    t.o.middleCols(h * dk, dk) = scores * t.v.middleCols(h * dk, dk);
    t.p.push_back(std::move(scores));
  }
  t.out = layer_norm(stack.alpha * x + t.o * layer.wo);
  return t;
}

struct FfnTrace {
  Matrix hidden;  // x W1, before the ReLU
  Matrix relu;
  Normalized out;
};

FfnTrace ffn_forward(const Stack& stack, const Layer& layer, const Matrix& x) {
  FfnTrace t;
  t.hidden = x * layer.w1;
  t.relu = t.hidden.cwiseMax(0.0);
  t.out = layer_norm(stack.alpha * x + t.relu * layer.w2);
  return t;
}

// Returns dL/dx of the sublayer and adds its weight gradients to `grad`.
Matrix attention_backward(const Stack& stack, const Layer& layer, const Matrix& x,
                          const Matrix& dy, Layer& grad) {
  const Shape& s = stack.shape;
  const int dk = s.width / s.heads;
  const double scale = 1.0 / std::sqrt(static_cast<double>(dk));
  const AttentionTrace t = attention_forward(stack, layer, x);
  const Matrix dz = layer_norm_backward(t.out, dy);
  grad.wo = t.o.transpose() * dz;
  const Matrix d_o = dz * layer.wo.transpose();
  Matrix dq(x.rows(), s.width), dk_all(x.rows(), s.width), dv(x.rows(), s.width);
  for (int h = 0; h < s.heads; ++h) {
    const Matrix& p = t.p[h];
    const Matrix d_oh = d_o.middleCols(h * dk, dk);
    const Matrix dp = d_oh * t.v.middleCols(h * dk, dk).transpose();
    dv.middleCols(h * dk, dk) = p.transpose() * d_oh;
    // softmax backward per row: ds = p .* (dp - sum(dp .* p)); masked entries have p = 0.
    Matrix ds = p.cwiseProduct(dp);
    for (Eigen::Index i = 0; i < ds.rows(); ++i) ds.row(i) -= p.row(i) * ds.row(i).sum();
    ds *= scale;
    dq.middleCols(h * dk, dk) = ds * t.k.middleCols(h * dk, dk);
    dk_all.middleCols(h * dk, dk) = ds.transpose() * t.q.middleCols(h * dk, dk);
  }
  grad.wq = x.transpose() * dq;
  grad.wk = x.transpose() * dk_all;
  grad.wv = x.transpose() * dv;
  return stack.alpha * dz + dq * layer.wq.transpose() + dk_all * layer.wk.transpose() +
         dv * layer.wv.transpose();
}

Matrix ffn_backward(const Stack& stack, const Layer& layer, const Matrix& x, const Matrix& dy,
                    Layer& grad) {
  const FfnTrace t = ffn_forward(stack, layer, x);
  const Matrix dz = layer_norm_backward(t.out, dy);
  grad.w2 = t.relu.transpose() * dz;
  const Matrix dhidden = (dz * layer.w2.transpose()).cwiseProduct(
      (t.hidden.array() > 0.0).cast<double>().matrix());
  grad.w1 = x.transpose() * dhidden;
  return stack.alpha * dz + dhidden * layer.w1.transpose();
}

// The JVP of a sublayer: d LN(alpha x + G(x; W)) for an input change dx and a
// weight change scale * dir. Each product rule term is written out; the LN
// step d xhat = r (dz - mean(dz) - xhat mean(dz .* xhat)) is J_LN dz, and J_LN
// is symmetric (r (I - 11^T/d - xhat xhat^T/d)), so it is layer_norm_backward.
Matrix attention_tangent(const Stack& stack, const Layer& layer, const Layer& dir, double scale,
                         const Matrix& x, const Matrix& dx) {
  const Shape& s = stack.shape;
  const int dk = s.width / s.heads;
  const double score_scale = 1.0 / std::sqrt(static_cast<double>(dk));
  const AttentionTrace t = attention_forward(stack, layer, x);
  const Matrix dq = dx * layer.wq + scale * (x * dir.wq);
  const Matrix dkey = dx * layer.wk + scale * (x * dir.wk);
  const Matrix dv = dx * layer.wv + scale * (x * dir.wv);
  Matrix d_o(x.rows(), s.width);
  for (int h = 0; h < s.heads; ++h) {
    const Matrix& p = t.p[h];
    const Matrix dscores = (dq.middleCols(h * dk, dk) * t.k.middleCols(h * dk, dk).transpose() +
                            t.q.middleCols(h * dk, dk) * dkey.middleCols(h * dk, dk).transpose()) *
                           score_scale;
    // softmax JVP per row: dp = p .* (ds - sum(p .* ds)); masked entries have p = 0.
    Matrix dp = p.cwiseProduct(dscores);
    for (Eigen::Index i = 0; i < dp.rows(); ++i) dp.row(i) -= p.row(i) * dp.row(i).sum();
    d_o.middleCols(h * dk, dk) = dp * t.v.middleCols(h * dk, dk) + p * dv.middleCols(h * dk, dk);
  }
  const Matrix dz = stack.alpha * dx + d_o * layer.wo + scale * (t.o * dir.wo);
  return layer_norm_backward(t.out, dz);
}

Matrix ffn_tangent(const Stack& stack, const Layer& layer, const Layer& dir, double scale,
                   const Matrix& x, const Matrix& dx) {
  const FfnTrace t = ffn_forward(stack, layer, x);
  const Matrix dhidden = (dx * layer.w1 + scale * (x * dir.w1))
                             .cwiseProduct((t.hidden.array() > 0.0).cast<double>().matrix());
  const Matrix dz = stack.alpha * dx + dhidden * layer.w2 + scale * (t.relu * dir.w2);
  return layer_norm_backward(t.out, dz);
}

}  // namespace

Residual deepnorm_encoder(int layers) {
  const double n = layers;
  return {std::pow(2 * n, 0.25), std::pow(8 * n, -0.25)};
}

Stack init_stack(const Shape& shape, const Residual& residual, std::mt19937_64& rng) {
  if (shape.layers < 1 || shape.heads < 1 || shape.width % shape.heads != 0)
    throw std::invalid_argument("transformer: layers >= 1 and width a multiple of heads");
  Stack stack{shape, residual.alpha, {}};
  const int d = shape.width, m = shape.ffn;
  for (int l = 0; l < shape.layers; ++l) {
    Layer layer;
    layer.wq = xavier_normal(d, d, 1.0, rng);
    layer.wk = xavier_normal(d, d, 1.0, rng);
    layer.wv = xavier_normal(d, d, residual.beta, rng);
    layer.wo = xavier_normal(d, d, residual.beta, rng);
    layer.w1 = xavier_normal(d, m, residual.beta, rng);
    layer.w2 = xavier_normal(m, d, residual.beta, rng);
    stack.layers.push_back(std::move(layer));
  }
  return stack;
}

Matrix normalized_input(const Shape& shape, std::mt19937_64& rng) {
  std::normal_distribution<double> normal(0.0, 1.0);
  Matrix x(shape.tokens, shape.width);
  for (Eigen::Index i = 0; i < x.size(); ++i) x.data()[i] = normal(rng);
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    x.row(i).array() -= x.row(i).mean();
    x.row(i) /= std::sqrt(x.row(i).squaredNorm() / static_cast<double>(x.cols()));
  }
  return x;
}

Matrix sublayer_forward(const Stack& stack, int sublayer, const Matrix& x, const Update& update) {
  const Layer& layer = stack.layers[sublayer / 2];
  const bool attention = sublayer % 2 == 0;
  if (update.direction == nullptr)
    return attention ? attention_forward(stack, layer, x).out.xhat
                     : ffn_forward(stack, layer, x).out.xhat;
  const Layer& dir = (*update.direction)[sublayer / 2];
  auto moved = [&](const Matrix& w, const Matrix& g) -> Matrix {
    return update.sign ? (w + update.step * g.array().sign().matrix()).eval()
                       : (w + update.step * g).eval();
  };
  Layer changed;
  if (attention) {
    changed = {moved(layer.wq, dir.wq), moved(layer.wk, dir.wk), moved(layer.wv, dir.wv),
               moved(layer.wo, dir.wo), {}, {}};
    return attention_forward(stack, changed, x).out.xhat;
  }
  changed.w1 = moved(layer.w1, dir.w1);
  changed.w2 = moved(layer.w2, dir.w2);
  return ffn_forward(stack, changed, x).out.xhat;
}

std::vector<Matrix> forward_states(const Stack& stack, const Matrix& x, const Update& update) {
  std::vector<Matrix> states;
  states.reserve(2 * stack.layers.size() + 1);
  states.push_back(x);
  for (int s = 0; s < 2 * static_cast<int>(stack.layers.size()); ++s)
    states.push_back(sublayer_forward(stack, s, states.back(), update));
  return states;
}

std::vector<Layer> backward(const Stack& stack, const std::vector<Matrix>& states,
                            const Matrix& dF) {
  std::vector<Layer> grads(stack.layers.size());
  Matrix dy = dF;
  for (int s = 2 * static_cast<int>(stack.layers.size()) - 1; s >= 0; --s) {
    const Layer& layer = stack.layers[s / 2];
    dy = s % 2 == 0 ? attention_backward(stack, layer, states[s], dy, grads[s / 2])
                    : ffn_backward(stack, layer, states[s], dy, grads[s / 2]);
  }
  return grads;
}

std::vector<Matrix> forward_tangents(const Stack& stack, const std::vector<Matrix>& states,
                                     const std::vector<Layer>& direction, double scale) {
  std::vector<Matrix> tangents;
  tangents.reserve(states.size());
  tangents.push_back(Matrix::Zero(states[0].rows(), states[0].cols()));
  for (int s = 0; s < 2 * static_cast<int>(stack.layers.size()); ++s) {
    const Layer& layer = stack.layers[s / 2];
    const Layer& dir = direction[s / 2];
    tangents.push_back(s % 2 == 0 ? attention_tangent(stack, layer, dir, scale, states[s], tangents.back())
                                  : ffn_tangent(stack, layer, dir, scale, states[s], tangents.back()));
  }
  return tangents;
}

double sublayer_norm(const std::vector<Layer>& grads, int sublayer) {
  const Layer& g = grads[sublayer / 2];
  if (sublayer % 2 == 0)
    return std::sqrt(g.wq.squaredNorm() + g.wk.squaredNorm() + g.wv.squaredNorm() +
                     g.wo.squaredNorm());
  return std::sqrt(g.w1.squaredNorm() + g.w2.squaredNorm());
}

}  // namespace normcheck::transformer
