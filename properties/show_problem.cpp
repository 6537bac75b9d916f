// How RapidCheck prints a problem: hex floats that round-trip exactly.
#include "generators.h"
#include "normcheck/row_file.h"

namespace normcheck {
namespace {

// Long arrays are cut after this many values: the shrunk counterexample is
// short, and the full problem goes to the corpus file when one is saved.
constexpr size_t kShownValues = 256;

void show_array(std::ostream& os, const char* name, const float* v, size_t n) {
  os << "  " << name << ":";
  for (size_t i = 0; i < n && i < kShownValues; ++i) os << ' ' << format_float_exact(v[i]);
  if (n > kShownValues) os << " ... (" << n - kShownValues << " more)";
  os << '\n';
}

}  // namespace

void showValue(const Problem& p, std::ostream& os) {
  os << "rows=" << p.rows << " cols=" << p.cols << " eps=" << format_float_exact(p.eps)
     << " misalign_floats=" << p.misalign_floats << '\n';
  for (int64_t r = 0; r < p.rows; ++r) {
    const std::string name = "x[" + std::to_string(r) + "]";
    show_array(os, name.c_str(), p.x.data() + r * p.cols, static_cast<size_t>(p.cols));
  }
  for (int64_t r = 0; r < p.rows && !p.dy.empty(); ++r) {
    const std::string name = "dy[" + std::to_string(r) + "]";
    show_array(os, name.c_str(), p.dy.data() + r * p.cols, static_cast<size_t>(p.cols));
  }
  if (!p.gamma.empty()) show_array(os, "gamma", p.gamma.data(), p.gamma.size());
  if (!p.beta.empty()) show_array(os, "beta", p.beta.data(), p.beta.size());
  for (int64_t i = 0; i < p.out_features && !p.weight.empty(); ++i) {
    const std::string name = "weight[" + std::to_string(i) + "]";
    show_array(os, name.c_str(), p.weight.data() + i * p.cols, static_cast<size_t>(p.cols));
  }
  if (!p.bias.empty()) show_array(os, "bias", p.bias.data(), p.bias.size());
}

}  // namespace normcheck
