#include "stored_input.h"

#include "normcheck/float_format.h"

namespace normcheck::evaluation {

StoredInput store(DType t, const std::vector<float>& values) {
  StoredInput s;
  if (t == DType::f32) {
    s.widened = values;
    return s;
  }
  s.bits.resize(values.size());
  s.widened.resize(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    s.bits[i] = to_16(t, values[i]);
    s.widened[i] = from_16(t, s.bits[i]);
  }
  return s;
}

}  // namespace normcheck::evaluation
