// Tags that show which hard regions a run reached (RC_TAG).
#include <cmath>

#include "generators.h"

namespace normcheck::props {
namespace {

// |mu|/sigma of a row, two-pass in long double: a classification of the
// generated input, not a result anyone is held to.
long double offset_ratio(const float* row, int64_t d) {
  long double sum = 0;
  for (int64_t i = 0; i < d; ++i) sum += row[i];
  const long double mean = sum / d;
  long double squares = 0;
  for (int64_t i = 0; i < d; ++i) squares += (row[i] - mean) * (row[i] - mean);
  const long double sigma = std::sqrt(squares / d);
  return sigma == 0 ? INFINITY : std::fabs(mean) / sigma;
}

}  // namespace

std::vector<std::string> tags_of(const Problem& p) {
  std::vector<std::string> tags;
  tags.push_back(p.cols <= 3 ? "d<=3" : p.cols <= 64 ? "d<=64" : p.cols <= 1024 ? "d<=1024" : "d>1024");

  bool nonfinite = false, subnormal = false, huge = false, tiny = false;
  for (float v : p.x) {
    nonfinite |= !std::isfinite(v);
    subnormal |= std::fpclassify(v) == FP_SUBNORMAL;
    huge |= std::fabs(v) > 0x1p64f;               // v^2 > FLT_MAX
    tiny |= v != 0 && std::fabs(v) < 0x1p-63f;    // v^2 below FLT_MIN
  }
  if (nonfinite) {
    tags.push_back("x:nonfinite");
    return tags;
  }
  if (huge) tags.push_back("x^2 overflows");
  if (tiny) tags.push_back(subnormal ? "x subnormal" : "x^2 underflows");

  long double worst = 0;
  for (int64_t r = 0; r < p.rows; ++r) worst = std::max(worst, offset_ratio(p.x.data() + r * p.cols, p.cols));
  tags.push_back(std::isinf(worst) ? (p.eps == 0 ? "constant row, eps=0" : "constant row")
                 : worst < 1       ? "|mu|/sigma<1"
                 : worst < 1e3     ? "|mu|/sigma<1e3"
                 : worst < 1e5     ? "|mu|/sigma<1e5"
                                   : "|mu|/sigma>=1e5");
  return tags;
}

}  // namespace normcheck::props
