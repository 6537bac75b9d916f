#include "guarded_array.h"

#include <bit>

#include "normcheck/float_format.h"

namespace normcheck::evaluation {

float sentinel32() { return std::bit_cast<float>(kSentinel32); }

uint16_t sentinel16(DType t) { return t == DType::bf16 ? kSentinelBf16 : kSentinelF16; }

Readback read(const FloatArray& a) {
  Readback r;
  r.values.resize(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    r.values[i] = a[i];
    r.unwritten |= std::bit_cast<uint32_t>(a[i]) == kSentinel32;
  }
  return r;
}

Readback read(const HalfArray& a, DType t) {
  const uint16_t sentinel = sentinel16(t);
  Readback r;
  r.values.resize(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    r.values[i] = from_16(t, a[i]);
    r.unwritten |= a[i] == sentinel;
  }
  return r;
}

uint64_t digest_of(std::initializer_list<const Readback*> outputs) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (const Readback* r : outputs)
    for (const float v : r->values) {
      const uint32_t bits = std::bit_cast<uint32_t>(v);
      for (int b = 0; b < 4; ++b) h = (h ^ ((bits >> (8 * b)) & 0xff)) * 0x100000001b3ull;
    }
  return h;
}

}  // namespace normcheck::evaluation
