// The inputs as a kernel of the given dtype stores them: a 16-bit kernel sees
// x and dy rounded to bf16 or f16, and the reference is given those rounded
// values (widened), so that the kernel is held to the problem it was given.
#pragma once

#include <cstdint>
#include <vector>

#include "normcheck/kernel.h"

namespace normcheck::evaluation {

// What a 16-bit kernel sees (bits, empty for f32) and what the reference is
// given (widened); for f32 both are the problem's values.
struct StoredInput {
  std::vector<uint16_t> bits;
  std::vector<float> widened;
};

StoredInput store(DType t, const std::vector<float>& values);

}  // namespace normcheck::evaluation
