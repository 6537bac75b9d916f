// safetensors files: an 8-byte little-endian header length N, N bytes of JSON
// ({name: {dtype, shape, data_offsets: [begin, end]}, "__metadata__": {...}}),
// then the tensors' bytes, little-endian, offsets relative to the byte after
// the header.
//
// read_safetensors() trusts nothing: a file shorter than its header, a header
// that is not a JSON object of well-formed entries, offsets out of the buffer,
// a byte count that disagrees with dtype x shape, overlapping tensors, or bytes
// no tensor owns all throw SafetensorsError with the reason.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "normcheck/kernel.h"

namespace normcheck::fold {

struct SafetensorsError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Tensor {
  std::string name;
  std::string dtype;           // the file's dtype string: "F32", "BF16", "F16", "I64", ...
  std::vector<int64_t> shape;
  std::string bytes;           // raw little-endian data
  int64_t elements() const;
};

struct TensorFile {
  std::vector<Tensor> tensors;  // in the file's data order
  std::map<std::string, std::string> metadata;
  Tensor* find(std::string_view name);
  const Tensor* find(std::string_view name) const;
};

// Parses a whole file's bytes (`what` names it in messages).
TensorFile parse_safetensors(std::string_view file, const std::string& what);
// Reads and parses `path`.
TensorFile read_safetensors(const std::filesystem::path& path);
// The file's bytes: tensors in order, contiguous, header padded with spaces to
// a multiple of 8 bytes.
std::string serialize_safetensors(const TensorFile& file);
// Writes serialize_safetensors(file) to `path` whole or not at all (io.h).
void write_safetensors(const std::filesystem::path& path, const TensorFile& file);

// "F32" -> f32, "BF16" -> bf16, "F16" -> f16; false for any other dtype.
bool float_dtype(std::string_view dtype, DType& out);
std::string_view dtype_name(DType t);

// A float tensor's values (exact, as doubles) and back (values must already be
// storage values of the tensor's dtype: round_to_storage's results).
std::vector<double> tensor_values(const Tensor& t);
void set_tensor_values(Tensor& t, const std::vector<double>& values);

}  // namespace normcheck::fold
