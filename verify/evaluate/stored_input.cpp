#include "stored_input.h"

#include <algorithm>

#include "normcheck/float_format.h"
#include "normcheck/huge_pages.h"

namespace normcheck::evaluation {

StoredInput store(DType t, const std::vector<float>& values) {
  StoredInput s;
  s.widened = large_vector<float>(values.size());
  if (t == DType::f32) {
    std::copy(values.begin(), values.end(), s.widened.begin());
    return s;
  }
  s.bits = large_vector<uint16_t>(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    s.bits[i] = to_16(t, values[i]);
    s.widened[i] = from_16(t, s.bits[i]);
  }
  return s;
}

}  // namespace normcheck::evaluation
