// The arrays evaluate() hands a kernel: each in a 64-byte-aligned buffer at
// the problem's misalignment, between two guard zones filled with a canary
// (or flush against a PROT_NONE page), outputs prefilled with a signalling-NaN
// sentinel that no arithmetic produces (a signalling NaN only arises by
// copying one). A changed guard is an out-of-bounds write, a surviving
// sentinel an unwritten output, a changed input byte a write to an input.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <vector>

#include "normcheck/guard_pages.h"
#include "normcheck/kernel.h"

namespace normcheck::evaluation {

constexpr std::size_t kGuardBytes = kCanaryZoneBytes;
constexpr unsigned char kCanary = kCanaryByte;
constexpr uint32_t kSentinel32 = 0x7fa5a5a5;  // signalling NaN (quiet bit 22 clear)
constexpr uint16_t kSentinelBf16 = 0x7f85;    // signalling NaN (quiet bit 6 clear)
constexpr uint16_t kSentinelF16 = 0x7d05;     // signalling NaN (quiet bit 9 clear)

// Inline: the readback compares every element with them.
inline float sentinel32() { return std::bit_cast<float>(kSentinel32); }
inline uint16_t sentinel16(DType t) { return t == DType::bf16 ? kSentinelBf16 : kSentinelF16; }  // bf16 or f16

// Where the arrays of one evaluation sit (EvaluateOptions, Problem).
struct ArrayLayout {
  int misalign_floats = 0;   // the start this many floats past a 64-byte boundary
  bool page_guards = false;  // the end flush against a PROT_NONE page instead
};

template <class T>
class GuardedArray {
 public:
  // An array of n elements starting misalign_floats * 4 bytes past a 64-byte
  // boundary, each element set to `fill`, guards canaried. With page guards
  // (EvaluateOptions::guard_pages) the array ends flush against a PROT_NONE
  // page instead, with the canary zone before its start.
  GuardedArray(std::size_t n, ArrayLayout layout, T fill) : n_(n) {
    if (layout.page_guards) {
      block_ = std::make_unique<PageGuardedBlock>(kGuardBytes + n * sizeof(T));
      std::fill(block_->begin(), block_->end(), kCanary);
      base_ = block_->end() - n * sizeof(T);
      flush_end_ = true;
    } else {
      const std::size_t lead = kGuardBytes + 4 * static_cast<std::size_t>(layout.misalign_floats);
      storage_.assign(64 + lead + n * sizeof(T) + kGuardBytes, kCanary);
      const auto address = reinterpret_cast<std::uintptr_t>(storage_.data());
      base_ = storage_.data() + (64 - address % 64) % 64 + lead;
    }
    for (std::size_t i = 0; i < n; ++i) data()[i] = fill;
  }
  GuardedArray(const std::vector<T>& values, ArrayLayout layout)
      : GuardedArray(values.size(), layout, T{}) {
    std::copy(values.begin(), values.end(), data());
  }
  GuardedArray(const GuardedArray&) = delete;
  GuardedArray& operator=(const GuardedArray&) = delete;

  T* data() { return reinterpret_cast<T*>(base_); }
  const T* data() const { return reinterpret_cast<const T*>(base_); }
  std::size_t size() const { return n_; }
  T operator[](std::size_t i) const { return data()[i]; }

  bool guards_intact() const {
    const auto is_canary = [](unsigned char b) { return b == kCanary; };
    const unsigned char* data_end = base_ + n_ * sizeof(T);
    return std::all_of(base_ - kGuardBytes, base_, is_canary) &&
           (flush_end_ || std::all_of(data_end, data_end + kGuardBytes, is_canary));
  }
  // Byte-for-byte equal to `values` (NaN payloads included).
  bool holds(const std::vector<T>& values) const {
    // memcmp's pointers must be valid even for 0 bytes, and an empty vector's data() may be null.
    return values.size() == n_ && (n_ == 0 || std::memcmp(data(), values.data(), n_ * sizeof(T)) == 0);
  }

 private:
  std::size_t n_;
  unsigned char* base_ = nullptr;
  bool flush_end_ = false;
  std::vector<unsigned char> storage_;
  std::unique_ptr<PageGuardedBlock> block_;
};

using FloatArray = GuardedArray<float>;
using HalfArray = GuardedArray<uint16_t>;

// An optional input array (gamma, beta): nullptr when the problem has none.
struct OptionalInput {
  OptionalInput(const std::vector<float>& values, ArrayLayout layout)
      : array(values, layout), present(!values.empty()) {}
  const float* pointer() { return present ? array.data() : nullptr; }
  FloatArray array;
  bool present;
};

// An output of the kernel as floats plus whether an element still holds the sentinel.
struct Readback {
  std::vector<float> values;
  bool unwritten = false;
};

Readback read(const FloatArray& a);
Readback read(const HalfArray& a, DType t);  // bf16 or f16 bits, widened

// The digests of a call's outputs (Evaluation::row_digests, output_digest).
// Per row of `rows`: the digest of the bits of that row's own values of each
// row output, in order; a row output is given with its values per row (cols
// for y or dx, 1 for a statistic). And one digest of them all: the row
// digests in order, then the values of each whole output (one value for the
// tensor, or one per column as dgamma's); a row output whose values do not
// come per row (none: an output the call does not have) counts as whole.
// Each step of a digest is a bijection of its state (and of the value it
// takes), so two calls whose outputs differ in one value never share the
// output digest, nor the digest of that value's row.
struct RowOutput {
  const Readback* output;
  std::size_t per_row;
};
struct Digests {
  uint64_t output = 0;
  std::vector<uint64_t> rows;
};
Digests digests_of(int64_t rows, std::initializer_list<RowOutput> row_outputs,
                   std::initializer_list<const Readback*> whole_outputs);

}  // namespace normcheck::evaluation
