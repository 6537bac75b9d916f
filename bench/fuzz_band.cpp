#include "fuzz_band.h"

#include <algorithm>
#include <cmath>

namespace normcheck::bench {

int64_t fuzz_d_cap(int size) {
  // draw_problem's cap, written the same way so that it rounds the same.
  return std::clamp<int64_t>(static_cast<int64_t>(std::exp2(size / 6.0)), 3, 65536);
}

std::optional<int> fuzz_size_for(int64_t d) {
  if (d > fuzz_d_cap(kFuzzSizes - 1)) return std::nullopt;
  for (int size = kFuzzSizes - 1; size >= 0; --size)
    if (fuzz_d_cap(size) <= d) return size;
  return std::nullopt;
}

}  // namespace normcheck::bench
