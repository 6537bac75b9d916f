// Small safetensors files the fold tests build themselves: a tensor from
// values (rounded to its dtype), a file's bytes from a raw header and data
// (for the malformed ones), and a Pre-LN block (LN -> Q, K, V) to fold.
#pragma once

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "fold/round.h"
#include "fold/safetensors.h"

namespace normcheck::fold_test {

inline fold::Tensor tensor(const std::string& name, DType t, std::vector<int64_t> shape, std::vector<double> values) {
  for (double& v : values) v = fold::round_to_storage(t, v);
  fold::Tensor out{name, std::string(fold::dtype_name(t)), std::move(shape), {}};
  fold::set_tensor_values(out, values);
  return out;
}

// 8-byte length, the header text as given, the data as given.
inline std::string raw_file(const std::string& header, const std::string& data) {
  const uint64_t n = header.size();
  std::string out(8, '\0');
  std::memcpy(out.data(), &n, 8);
  return out + header + data;
}

inline std::vector<double> gaussian(std::size_t n, double mean, double sd, std::mt19937_64& rng) {
  std::normal_distribution<double> g(mean, sd);
  std::vector<double> v(n);
  for (double& x : v) x = g(rng);
  return v;
}

// ln.weight, ln.bias [d]; q/k/v.weight [e, d]; q.bias, v.bias [e] (k has none:
// the spec names new_bias for it); out.weight [d, e], out.bias [d] (a writer);
// embed.weight [7, d]; and an I64 tensor that is carried through untouched.
inline fold::TensorFile pre_ln_block(DType t, long d, long e, uint64_t seed, double gamma_scale = 1,
                                     double w_scale = 1) {
  std::mt19937_64 rng(seed);
  fold::TensorFile f;
  auto gamma = gaussian(d, 1, 0.3, rng);
  for (double& g : gamma) g *= gamma_scale;
  f.tensors.push_back(tensor("ln.weight", t, {d}, gamma));
  f.tensors.push_back(tensor("ln.bias", t, {d}, gaussian(d, 0, 0.3, rng)));
  for (const char* name : {"q", "k", "v"}) {
    auto w = gaussian(static_cast<std::size_t>(e * d), 0, w_scale / std::sqrt(static_cast<double>(d)), rng);
    f.tensors.push_back(tensor(std::string(name) + ".weight", t, {e, d}, w));
    if (std::string(name) != "k") f.tensors.push_back(tensor(std::string(name) + ".bias", t, {e}, gaussian(e, 0, 0.1, rng)));
  }
  f.tensors.push_back(tensor("out.weight", t, {d, e}, gaussian(static_cast<std::size_t>(d * e), 0.2, 0.1, rng)));
  f.tensors.push_back(tensor("out.bias", t, {d}, gaussian(d, 1, 0.5, rng)));
  f.tensors.push_back(tensor("embed.weight", t, {7, d}, gaussian(static_cast<std::size_t>(7 * d), 2, 1, rng)));
  fold::Tensor ids{"position_ids", "I64", {3}, std::string(24, '\0')};
  for (int i = 0; i < 3; ++i) ids.bytes[8 * i] = static_cast<char>(i);
  f.tensors.push_back(ids);
  f.metadata["format"] = "pt";
  return f;
}

inline const char* kPreLnSpec = R"({
  "norms": [{"name": "ln", "kind": "layernorm", "placement": "pre_ln",
             "weight": "ln.weight", "bias": "ln.bias",
             "consumers": [{"weight": "q.weight", "bias": "q.bias"},
                           {"weight": "k.weight", "new_bias": "k.bias"},
                           {"weight": "v.weight", "bias": "v.bias"}]}],
  "centre_writers": [{"weight": "out.weight", "bias": "out.bias", "axis": "rows"},
                     {"weight": "embed.weight", "axis": "columns"}]
})";

}  // namespace normcheck::fold_test
