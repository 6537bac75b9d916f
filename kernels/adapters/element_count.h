// A check both libraries need but neither makes: rows x cols floats must be
// addressable, i.e. rows * cols * sizeof(float) must fit int64 (libtorch's
// numel and oneDNN's dims are int64; oneDNN 2.6 even accepts a 2^40 x 2^40
// descriptor and would then overflow computing its size).
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "normcheck/kernel.h"

namespace normcheck::adapters {

inline std::string element_count_declines(const Shape& shape, const char* library) {
  constexpr int64_t kMaxFloats = std::numeric_limits<int64_t>::max() / int64_t{sizeof(float)};
  if (shape.rows > 0 && shape.cols > kMaxFloats / shape.rows)
    return std::string(library) + " sizes arrays in int64 bytes; " + std::to_string(shape.rows) +
           " x " + std::to_string(shape.cols) + " floats overflow it";
  return {};
}

}  // namespace normcheck::adapters
