// One tensor of a call in its spec's format (op_spec.h): the guarded array
// evaluate() hands a kernel for an input or an output of any format, and
// what it reads back. Every op whose tensors follow a spec (the forward of
// any spec, the backward's gamma, statistics, dgamma and dbeta) uses it.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <variant>
#include <vector>

#include "guarded_array.h"
#include "normcheck/float_format.h"
#include "normcheck/huge_pages.h"
#include "normcheck/kernel.h"

namespace normcheck::evaluation {

using ByteArray = GuardedArray<uint8_t>;
// One tensor of the call in its format: rows x cols at `stride` in a guarded
// array (floats, 16-bit patterns, or the bytes of a quantized y), the
// elements between rows padding.
//
// A quantized y's codes have no spare value in general (every int8 byte is
// an integer, e4m3fn saturating or not may write its NaN on overflow), so its
// output is prefilled with a code the element's range judges instead:
// e4m3fn's and e5m2's NaN 0x7f, or int8's -128. An element the kernel leaves
// unwritten holds that code and is found outside its range, except where the
// range admits it; a write of that same code into the padding goes unseen.
class Tensor {
 public:
  // A quantized y (an output): rows x cols bytes of the cast's format.
  Tensor(const QuantCast& cast, int64_t rows, int64_t cols, int64_t stride, ArrayLayout layout)
      : t_(DType::f32), cast_(cast), rows_(rows), cols_(cols), stride_(stride) {
    const std::size_t n = rows == 0 ? 0 : static_cast<std::size_t>((rows - 1) * stride + cols);
    array_.emplace<ByteArray>(n, layout, code_sentinel());
  }
  // An output: every element (padding included) the format's sentinel.
  Tensor(DType t, int64_t rows, int64_t cols, int64_t stride, ArrayLayout layout)
      : t_(t), rows_(rows), cols_(cols), stride_(stride) {
    const std::size_t n = rows == 0 ? 0 : static_cast<std::size_t>((rows - 1) * stride + cols);
    if (t == DType::f32) array_.emplace<FloatArray>(n, layout, sentinel32());
    else array_.emplace<HalfArray>(n, layout, sentinel16(t));
  }
  // An input: `values` (rows x cols, contiguous, values of the format), the padding NaN.
  Tensor(DType t, int64_t rows, int64_t cols, int64_t stride, ArrayLayout layout, const std::vector<float>& values)
      : Tensor(t, rows, cols, stride, layout) {
    std::visit(
        [&](auto& a) {
          for (int64_t r = 0; r + 1 < rows; ++r)
            for (int64_t c = cols; c < stride; ++c) set(a, at(r, c), std::numeric_limits<float>::quiet_NaN());
          for (int64_t r = 0; r < rows; ++r)
            for (int64_t c = 0; c < cols; ++c) set(a, at(r, c), values[static_cast<std::size_t>(r * cols + c)]);
          const auto* p = reinterpret_cast<const unsigned char*>(a.data());
          snapshot_.assign(p, p + a.size() * sizeof(a[0]));
        },
        array_);
  }

  void* data() {
    return std::visit([](auto& a) -> void* { return a.data(); }, array_);
  }
  bool guards_intact() const {
    return std::visit([](const auto& a) { return a.guards_intact(); }, array_);
  }
  // An input: the elements of its rows as they were (a write there is a
  // write to an input), and the padding between rows (a write there is
  // outside every array the kernel was given).
  bool rows_unchanged() const { return unchanged(false); }
  bool padding_unchanged() const { return unchanged(true); }
  // An output: whether an element of a row kept the sentinel, and whether the padding did not.
  bool any_unwritten() const {
    if (cast_) return false;  // judged by the element's range (above)
    return std::visit(
        [&](const auto& a) {
          for (int64_t r = 0; r < rows_; ++r)
            for (int64_t c = 0; c < cols_; ++c)
              if (is_sentinel(a, at(r, c))) return true;
          return false;
        },
        array_);
  }
  bool padding_kept() const {
    return std::visit(
        [&](const auto& a) {
          for (int64_t r = 0; r + 1 < rows_; ++r)
            for (int64_t c = cols_; c < stride_; ++c)
              if (!is_sentinel(a, at(r, c))) return false;
          return true;
        },
        array_);
  }
  // The rows, contiguous, widened.
  Readback read() const {
    Readback out;
    out.unwritten = any_unwritten();
    out.values = large_vector<float>(static_cast<std::size_t>(rows_ * cols_));
    std::visit(
        [&](const auto& a) {
          float* to = out.values.data();
          for (int64_t r = 0; r < rows_; ++r)
            for (int64_t c = 0; c < cols_; ++c) *to++ = value(a, at(r, c));
        },
        array_);
    return out;
  }

 private:
  std::size_t at(int64_t row, int64_t col) const { return static_cast<std::size_t>(row * stride_ + col); }
  uint8_t code_sentinel() const { return cast_->format == QuantFormat::int8 ? 0x80 : 0x7f; }
  // Element i of the array, as each kind of array holds it; the loops above
  // visit the variant once and take these for every element.
  void set(FloatArray& a, std::size_t i, float v) { a.data()[i] = v; }
  void set(HalfArray& a, std::size_t i, float v) { a.data()[i] = to_16(t_, v); }
  void set(ByteArray&, std::size_t, float) {}  // a quantized y is an output, never given values
  float value(const FloatArray& a, std::size_t i) const { return a[i]; }
  float value(const HalfArray& a, std::size_t i) const { return from_16(t_, a[i]); }
  // A code's value (quant_value); e4m3fn's NaN is the overflow of a
  // non-saturating cast, +-inf by its sign bit, as spec_policy.h's ranges have it.
  float value(const ByteArray& a, std::size_t i) const {
    const uint8_t code = a[i];
    const double v = quant_value(cast_->format, code);
    if (std::isnan(v) && cast_->format == QuantFormat::e4m3 && !cast_->saturate)
      return (code & 0x80) ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
    return static_cast<float>(v);
  }
  bool is_sentinel(const FloatArray& a, std::size_t i) const {
    return std::bit_cast<uint32_t>(a[i]) == std::bit_cast<uint32_t>(sentinel32());
  }
  bool is_sentinel(const HalfArray& a, std::size_t i) const { return a[i] == sentinel16(t_); }
  bool is_sentinel(const ByteArray& a, std::size_t i) const { return a[i] == code_sentinel(); }
  // Whether the bytes of every row (or of the padding after every row but
  // the last) are those of the snapshot: one comparison per row.
  bool unchanged(bool padding) const {
    const auto* now =
        static_cast<const unsigned char*>(std::visit([](const auto& a) -> const void* { return a.data(); }, array_));
    const std::size_t size = cast_ ? 1 : t_ == DType::f32 ? sizeof(float) : sizeof(uint16_t);
    for (int64_t r = 0; r < rows_; ++r) {
      const int64_t first = padding ? cols_ : 0, end = padding ? (r + 1 < rows_ ? stride_ : cols_) : cols_;
      if (end <= first) continue;
      const std::size_t offset = at(r, first) * size, bytes = static_cast<std::size_t>(end - first) * size;
      if (std::memcmp(now + offset, snapshot_.data() + offset, bytes) != 0) return false;
    }
    return true;
  }

  DType t_;
  std::optional<QuantCast> cast_;  // a quantized y's codes
  int64_t rows_, cols_, stride_;
  std::variant<FloatArray, HalfArray, ByteArray> array_{std::in_place_type<FloatArray>, 0, ArrayLayout{}, 0.0f};
  std::vector<unsigned char> snapshot_;
};

}  // namespace normcheck::evaluation
