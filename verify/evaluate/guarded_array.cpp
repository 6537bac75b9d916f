#include "guarded_array.h"

#include <bit>

#include "normcheck/float_format.h"
#include "normcheck/huge_pages.h"

namespace normcheck::evaluation {

float sentinel32() { return std::bit_cast<float>(kSentinel32); }

uint16_t sentinel16(DType t) { return t == DType::bf16 ? kSentinelBf16 : kSentinelF16; }

Readback read(const FloatArray& a) {
  Readback r;
  r.values = large_vector<float>(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    r.values[i] = a[i];
    r.unwritten |= std::bit_cast<uint32_t>(a[i]) == kSentinel32;
  }
  return r;
}

Readback read(const HalfArray& a, DType t) {
  const uint16_t sentinel = sentinel16(t);
  Readback r;
  r.values = large_vector<float>(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    r.values[i] = from_16(t, a[i]);
    r.unwritten |= a[i] == sentinel;
  }
  return r;
}

namespace {

constexpr uint64_t kDigestStart = 0xcbf29ce484222325ull;

// One value into the digest: its 32 bits xored into the state, which is then
// multiplied by an odd constant and rotated. Each step is a bijection of the
// state, so two sequences of one length that differ in a single value never
// share a digest; one multiplication per value (a byte-wise FNV-1a costs four).
uint64_t mix(uint64_t h, float v) {
  return std::rotl((h ^ std::bit_cast<uint32_t>(v)) * 0x9e3779b97f4a7c15ull, 29);
}

}  // namespace

uint64_t digest_of(std::initializer_list<const Readback*> outputs) {
  uint64_t h = kDigestStart;
  for (const Readback* r : outputs)
    for (const float v : r->values) h = mix(h, v);
  return h;
}

std::vector<uint64_t> row_digests_of(int64_t rows, std::initializer_list<RowOutput> outputs) {
  std::vector<uint64_t> digests(static_cast<std::size_t>(rows), kDigestStart);
  for (const RowOutput& o : outputs) {
    if (o.output->values.size() != static_cast<std::size_t>(rows) * o.per_row) continue;  // not an output of this call
    for (std::size_t r = 0; r < digests.size(); ++r)
      for (std::size_t i = r * o.per_row; i < (r + 1) * o.per_row; ++i) digests[r] = mix(digests[r], o.output->values[i]);
  }
  return digests;
}

}  // namespace normcheck::evaluation
