#include "guarded_array.h"

#include <bit>

#include "normcheck/float_format.h"
#include "normcheck/huge_pages.h"

namespace normcheck::evaluation {

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

// One value into the digest: its bits (a float's 32, a row digest's 64)
// xored into the state, which is then multiplied by an odd constant and
// rotated. Each step is a bijection of the state, and of the value for a
// given state, so two sequences of one length that differ in a single value
// never share a digest; one multiplication per value (a byte-wise FNV-1a
// costs four).
uint64_t mix(uint64_t h, uint64_t v) { return std::rotl((h ^ v) * 0x9e3779b97f4a7c15ull, 29); }
uint64_t mix(uint64_t h, float v) { return mix(h, uint64_t{std::bit_cast<uint32_t>(v)}); }

}  // namespace

Digests digests_of(int64_t rows, std::initializer_list<RowOutput> row_outputs,
                   std::initializer_list<const Readback*> whole_outputs) {
  Digests d{kDigestStart, std::vector<uint64_t>(static_cast<std::size_t>(rows), kDigestStart)};
  std::vector<uint64_t>& row = d.rows;
  for (const RowOutput& o : row_outputs) {
    if (o.output->values.size() != row.size() * o.per_row) continue;  // not an output of this call
    const float* v = o.output->values.data();
    // four rows at a time: four independent chains, one multiply latency for four values
    std::size_t r = 0;
    for (; r + 4 <= row.size(); r += 4)
      for (std::size_t i = 0; i < o.per_row; ++i)
        for (std::size_t k = 0; k < 4; ++k) row[r + k] = mix(row[r + k], v[(r + k) * o.per_row + i]);
    for (; r < row.size(); ++r)
      for (std::size_t i = 0; i < o.per_row; ++i) row[r] = mix(row[r], v[r * o.per_row + i]);
  }
  for (const uint64_t h : row) d.output = mix(d.output, h);
  for (const RowOutput& o : row_outputs)  // values that do not come per row: taken whole (none, usually)
    if (o.output->values.size() != row.size() * o.per_row)
      for (const float v : o.output->values) d.output = mix(d.output, v);
  for (const Readback* o : whole_outputs)
    for (const float v : o->values) d.output = mix(d.output, v);
  return d;
}

}  // namespace normcheck::evaluation
