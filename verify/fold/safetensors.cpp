#include "safetensors.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <climits>

#include <nlohmann/json.hpp>

#include "json_input.h"
#include "normcheck/excerpt.h"
#include "normcheck/input_file.h"
#include "normcheck/io.h"
#include "round.h"

namespace normcheck::fold {
namespace {

static_assert(std::endian::native == std::endian::little, "safetensors data is read as native little-endian");

// Bytes per element of every dtype the format defines.
int element_bytes(std::string_view dtype) {
  static const std::map<std::string, int, std::less<>> sizes = {
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E4M3", 1}, {"F8_E5M2", 1}, {"I16", 2}, {"U16", 2},
      {"F16", 2},  {"BF16", 2}, {"I32", 4}, {"U32", 4},     {"F32", 4},     {"I64", 8}, {"U64", 8},
      {"F64", 8}};
  const auto it = sizes.find(dtype);
  return it == sizes.end() ? 0 : it->second;
}

// A shape as messages write it, bounded: its first 8 entries (an integer as
// it is, anything else by its type), then how many there are.
std::string shape_text(const nlohmann::json& shape) {
  std::string out = "[";
  std::size_t i = 0;
  for (const auto& v : shape) {
    if (i == 8) {
      out += ", ... (" + std::to_string(shape.size()) + " entries)";
      break;
    }
    out += (i++ ? ", " : "") + (v.is_number_unsigned() ? v.dump() : describe_json(v));
  }
  return out + "]";
}

// Header sizes above this are refused (the reference implementation's limit):
// a lying length field must not make us allocate gigabytes.
constexpr uint64_t kMaxHeader = 100'000'000;

}  // namespace

int64_t Tensor::elements() const {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

Tensor* TensorFile::find(std::string_view name) {
  for (Tensor& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}
const Tensor* TensorFile::find(std::string_view name) const {
  for (const Tensor& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

bool float_dtype(std::string_view dtype, DType& out) {
  if (dtype == "F32") out = DType::f32;
  else if (dtype == "BF16") out = DType::bf16;
  else if (dtype == "F16") out = DType::f16;
  else return false;
  return true;
}

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::f32: break;
    case DType::bf16: return "BF16";
    case DType::f16: return "F16";
  }
  return "F32";
}

TensorFile parse_safetensors(std::string_view file, const std::string& what) {
  auto fail = [&what](const std::string& why) { return SafetensorsError(what + ": " + why); };
  if (file.size() < 8) throw fail("truncated: " + std::to_string(file.size()) + " bytes, less than the 8-byte header length");
  uint64_t header_len = 0;
  std::memcpy(&header_len, file.data(), 8);
  if (header_len > kMaxHeader) throw fail("header length " + std::to_string(header_len) + " is beyond the 100 MB limit");
  if (header_len > file.size() - 8)
    throw fail("truncated: the header says " + std::to_string(header_len) + " bytes of JSON, the file has " +
               std::to_string(file.size() - 8) + " after the length");
  const std::string_view header = file.substr(8, header_len);
  const std::string_view data = file.substr(8 + header_len);
  // The reference implementation refuses a byte order mark (serde_json reads
  // JSON text, which has none); any key given twice, at any level, is refused
  // rather than "the last wins".
  if (header.substr(0, 3) == "\xef\xbb\xbf") throw fail("the header starts with a UTF-8 byte order mark");
  nlohmann::json doc;
  try {
    doc = parse_json_input(header);
  } catch (const JsonInputError& e) {
    throw fail(std::string("the header: ") + e.what());
  }
  if (!doc.is_object()) throw fail("the header is " + describe_json(doc) + ", not a JSON object");

  TensorFile out;
  struct Span {
    uint64_t begin, end;
    std::string name;
  };
  std::vector<Span> spans;
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    const std::string& name = it.key();
    const nlohmann::json& entry = it.value();
    if (name == "__metadata__") {
      if (!entry.is_object()) throw fail("__metadata__ is not an object");
      for (auto m = entry.begin(); m != entry.end(); ++m) {
        if (!m.value().is_string())
          throw fail("__metadata__ value '" + excerpt(m.key()) + "' is " + describe_json(m.value()) + ", not a string");
        out.metadata[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    const std::string where = "tensor '" + excerpt(name) + "'";
    if (!entry.is_object()) throw fail(where + " is " + describe_json(entry) + ", not an object");
    for (const char* key : {"dtype", "shape", "data_offsets"})
      if (!entry.contains(key)) throw fail(where + " has no " + key);
    if (!entry["dtype"].is_string()) throw fail(where + ": dtype is " + describe_json(entry["dtype"]) + ", not a string");
    Tensor t;
    t.name = name;
    t.dtype = entry["dtype"].get<std::string>();
    const int esize = element_bytes(t.dtype);
    if (esize == 0) throw fail(where + ": unknown dtype '" + excerpt(t.dtype) + "'");
    if (!entry["shape"].is_array()) throw fail(where + ": shape is " + describe_json(entry["shape"]) + ", not an array");
    // The byte count, checked for overflow before anything uses it: a shape
    // whose product wraps 2^64 could otherwise match small data_offsets.
    uint64_t bytes = static_cast<uint64_t>(esize);
    for (const auto& s : entry["shape"]) {
      if (!s.is_number_unsigned()) throw fail(where + ": shape holds " + describe_json(s) + ", not a non-negative integer");
      const uint64_t v = s.get<uint64_t>();
      if (v > uint64_t{INT64_MAX} || (v != 0 && bytes > UINT64_MAX / v))
        throw fail(where + ": shape " + shape_text(entry["shape"]) + " holds more bytes than 2^64");
      bytes *= v;
      t.shape.push_back(static_cast<int64_t>(v));
    }
    const auto& off = entry["data_offsets"];
    if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() || !off[1].is_number_unsigned())
      throw fail(where + ": data_offsets is not a pair of non-negative integers");
    const uint64_t begin = off[0].get<uint64_t>(), end = off[1].get<uint64_t>();
    if (begin > end) throw fail(where + ": data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) + "] run backwards");
    if (end > data.size())
      throw fail(where + ": data_offsets end " + std::to_string(end) + " is past the data (" +
                 std::to_string(data.size()) + " bytes): truncated file or wrong offsets");
    if (end - begin != bytes)
      throw fail(where + ": " + t.dtype + " with shape " + shape_text(entry["shape"]) + " needs " +
                 std::to_string(bytes) + " bytes, data_offsets give " + std::to_string(end - begin));
    t.bytes.assign(data.substr(begin, end - begin));
    spans.push_back({begin, end, name});
    out.tensors.push_back(std::move(t));
  }
  // The tensors must tile the data: sorted by offset, each starts where the
  // previous ended, the last ends at the end of the file.
  std::vector<std::size_t> order(spans.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return spans[a].begin != spans[b].begin ? spans[a].begin < spans[b].begin : spans[a].end < spans[b].end;
  });
  uint64_t at = 0;
  for (std::size_t k = 0; k < order.size(); ++k) {
    const Span& s = spans[order[k]];
    if (s.begin < at)
      throw fail("tensors '" + excerpt(spans[order[k - 1]].name) + "' and '" + excerpt(s.name) + "' overlap (bytes " +
                 std::to_string(s.begin) + ".." + std::to_string(at) + ")");
    if (s.begin > at)
      throw fail("bytes " + std::to_string(at) + ".." + std::to_string(s.begin) + " of the data belong to no tensor");
    at = s.end;
  }
  if (at != data.size())
    throw fail("bytes " + std::to_string(at) + ".." + std::to_string(data.size()) + " of the data belong to no tensor");
  std::vector<Tensor> sorted;
  for (std::size_t k : order) sorted.push_back(std::move(out.tensors[k]));
  out.tensors = std::move(sorted);
  return out;
}

TensorFile read_safetensors(const std::filesystem::path& path) {
  std::string bytes;
  try {
    bytes = read_input_file(path, kMaxTensorInput);
  } catch (const InputFileError& e) {
    throw SafetensorsError(e.what());
  }
  return parse_safetensors(bytes, path_text(path));
}

std::string serialize_safetensors(const TensorFile& file) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!file.metadata.empty()) header["__metadata__"] = file.metadata;
  uint64_t at = 0;
  for (const Tensor& t : file.tensors) {
    header[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {at, at + t.bytes.size()}}};
    at += t.bytes.size();
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  const uint64_t n = text.size();
  std::string out(8, '\0');
  std::memcpy(out.data(), &n, 8);
  out += text;
  for (const Tensor& t : file.tensors) out += t.bytes;
  return out;
}

void write_safetensors(const std::filesystem::path& path, const TensorFile& file) {
  write_file_atomically(path, serialize_safetensors(file));
}

std::vector<double> tensor_values(const Tensor& t) {
  DType dt;
  if (!float_dtype(t.dtype, dt)) throw SafetensorsError("tensor '" + t.name + "' is " + t.dtype + ", not F32, BF16 or F16");
  const int esize = storage_bytes(dt);
  std::vector<double> out(t.bytes.size() / esize);
  for (std::size_t i = 0; i < out.size(); ++i) {
    uint32_t bits = 0;
    std::memcpy(&bits, t.bytes.data() + i * esize, esize);
    out[i] = value_from_bits(dt, bits);
  }
  return out;
}

void set_tensor_values(Tensor& t, const std::vector<double>& values) {
  DType dt;
  if (!float_dtype(t.dtype, dt)) throw SafetensorsError("tensor '" + t.name + "' is " + t.dtype + ", not F32, BF16 or F16");
  const int esize = storage_bytes(dt);
  t.bytes.assign(values.size() * esize, '\0');
  for (std::size_t i = 0; i < values.size(); ++i) {
    const uint32_t bits = storage_bits(dt, values[i]);
    std::memcpy(t.bytes.data() + i * esize, &bits, esize);
  }
}

}  // namespace normcheck::fold
