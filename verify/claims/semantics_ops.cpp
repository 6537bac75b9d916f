// The ops the semantic claims reason about, as PyTorch documents them, and the
// numbers the seeds print (copied from the seed texts, 4 decimals each).
#include <numeric>

#include "semantics.h"

namespace normcheck::claims {

namespace {
std::vector<int> axes_range(int first, int end) {
  std::vector<int> axes(end - first);
  std::iota(axes.begin(), axes.end(), first);
  return axes;
}
}  // namespace

// normalized_shape = the last k dims: "mean and standard deviation are computed
// over the last D dimensions" (torch.nn.LayerNorm docs), biased, sqrt(var+eps).
ExactTensor layer_norm(const ExactTensor& x, int normalized_dims, double eps) {
  const int rank = static_cast<int>(x.shape().size());
  return x.normalized(axes_range(rank - normalized_dims, rank), eps);
}

// InstanceNorm: per (n, c), over the spatial axes 2.. (biased, sqrt(var+eps)).
ExactTensor instance_norm(const ExactTensor& x, double eps) {
  return x.normalized(axes_range(2, static_cast<int>(x.shape().size())), eps);
}

// BatchNorm (training mode): per channel (axis 1), over every other axis.
ExactTensor batch_norm(const ExactTensor& x, double eps) {
  std::vector<int> axes = {0};
  for (int a : axes_range(2, static_cast<int>(x.shape().size()))) axes.push_back(a);
  return x.normalized(axes, eps);
}

std::vector<double> seed001_arange48() {
  std::vector<double> v(48);
  std::iota(v.begin(), v.end(), 1.0);
  return v;
}

const Seed002Prints& seed002_prints() {
  static const Seed002Prints prints = {
      // "y:  tensor(...)": layer_norm(embedding) right after torch.manual_seed(123)
      .library = {1.5524, 0.0155, -0.3596, -1.2083, 0.5851, 1.3263, -0.7660, -1.1453,
                  0.2864, 0.0185, 1.2388, -1.5437, 1.1119, -0.3988, 0.7275, -1.4406,
                  -0.4144, -1.1914, 0.0548, 1.5510, 0.3914, -0.5591, 1.4105, -1.2428},
      // "y_custom": (embedding - mean) / sqrt(var + eps) over dim -1
      .manual = {1.1505, 0.5212, -0.1262, -1.5455, -0.6586, -0.2132, -0.8173, 1.6890,
                 0.6000, 1.2080, -0.3813, -1.4267, -0.0861, 1.0145, -1.5895, 0.6610,
                 0.8724, 0.9047, -1.5371, -0.2400, 0.1507, 0.5268, 0.9785, -1.6560},
      // "y_custom" of the section the seed calls batch_norm: mean/var over dims (-2, -1)
      .layernorm_sd = {1.1822, 0.4419, -0.3196, -1.9889, -0.6677, -0.2537, -0.8151, 1.5143,
                       0.7174, 1.2147, -0.0852, -0.9403, -0.0138, 1.5666, -2.1726, 1.0590,
                       0.6646, 0.6852, -0.8706, -0.0442, -0.1163, 0.1389, 0.4454, -1.3423},
  };
  return prints;
}

}  // namespace normcheck::claims
