#include "case_files.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "fold/round.h"
#include "normcheck/excerpt.h"
#include "normcheck/input_file.h"
#include "recorded_kernel.h"
#include "normcheck/row_file.h"

namespace normcheck::cli {
namespace {

// A file as messages name it: its path as given, escaped, as the safetensors reader's messages do.
std::string named(const std::filesystem::path& path) { return path_text(path); }

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// A tensor of format t holding v, whose values are t's storage values
// (stored_problem's): set_tensor_values writes their bits exactly.
fold::Tensor make_tensor(const std::string& name, DType t, std::vector<int64_t> shape, const std::vector<float>& v) {
  fold::Tensor out{name, std::string(fold::dtype_name(t)), std::move(shape), {}};
  fold::set_tensor_values(out, std::vector<double>(v.begin(), v.end()));
  return out;
}

// The tensor `name` of `file`, checked against the dtypes it may have (the
// first is the one messages name) and the shapes it may have.
const fold::Tensor& checked(const fold::TensorFile& file, const std::filesystem::path& path, const std::string& name,
                            const std::vector<std::string>& dtypes, const std::vector<std::vector<int64_t>>& shapes) {
  const fold::Tensor* t = file.find(name);
  if (!t) throw CaseFileError(named(path) + ": no tensor '" + name + "'");
  bool known = false;
  for (const std::string& d : dtypes) known = known || t->dtype == d;
  if (!known) {
    std::string said = dtypes.front();
    for (std::size_t i = 1; i < dtypes.size(); ++i) said += (i + 1 < dtypes.size() ? ", " : " or ") + dtypes[i];
    throw CaseFileError(named(path) + ": tensor '" + name + "' is " + t->dtype + ", the spec says " + said);
  }
  if (std::find(shapes.begin(), shapes.end(), t->shape) == shapes.end()) {
    std::string expected;
    for (std::size_t i = 0; i < shapes.size(); ++i) expected += (i ? " or " : "") + shape_text(shapes[i]);
    throw CaseFileError(named(path) + ": tensor '" + name + "' has shape " + shape_text(t->shape) + ", expected " +
                        expected);
  }
  return *t;
}
const fold::Tensor& checked(const fold::TensorFile& file, const std::filesystem::path& path, const std::string& name,
                            const std::vector<std::string>& dtypes, const std::vector<int64_t>& shape) {
  return checked(file, path, name, dtypes, std::vector<std::vector<int64_t>>{shape});
}
const fold::Tensor& checked(const fold::TensorFile& file, const std::filesystem::path& path, const std::string& name,
                            DType dtype, const std::vector<int64_t>& shape) {
  return checked(file, path, name, {std::string(fold::dtype_name(dtype))}, shape);
}

// The shape of a dynamic scale: rows x the scales of a row.
std::vector<int64_t> scale_shape(const OpSpec& spec, int64_t rows, int64_t cols) {
  return {rows, scales_per_row(*spec.quant, cols)};
}

// Every tensor of `file` is one of `expected`.
void no_other_tensors(const fold::TensorFile& file, const std::filesystem::path& path,
                      const std::vector<std::string>& expected) {
  for (const fold::Tensor& t : file.tensors) {
    bool known = false;
    for (const std::string& name : expected) known = known || t.name == name;
    if (!known) {
      std::string list;
      for (const std::string& name : expected) list += (list.empty() ? "" : ", ") + name;
      throw CaseFileError(named(path) + ": tensor '" + excerpt(t.name) + "' is not one of the spec's (" + list + ")");
    }
  }
}

fold::TensorFile read_file(const std::filesystem::path& path) {
  try {
    return fold::read_safetensors(path);
  } catch (const fold::SafetensorsError& e) {
    throw CaseFileError(e.what());
  }
}

const std::string& metadata(const fold::TensorFile& file, const std::filesystem::path& path, const std::string& key) {
  const auto it = file.metadata.find(key);
  if (it == file.metadata.end()) throw CaseFileError(named(path) + ": no __metadata__ entry '" + key + "'");
  return it->second;
}

// A decimal integer below 2^64 (a seed may be any of them).
uint64_t unsigned_metadata(const fold::TensorFile& file, const std::filesystem::path& path, const std::string& key) {
  const std::string& text = metadata(file, path, key);
  uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size())
    throw CaseFileError(named(path) + ": __metadata__ '" + key + "' is \"" + excerpt(text) +
                        "\", not a decimal integer in [0, 2^64)");
  return value;
}

std::string case_file_name(int64_t index, const char* suffix) {
  char name[64];
  std::snprintf(name, sizeof name, "case-%03lld.%s", static_cast<long long>(index), suffix);
  return name;
}

std::vector<float> as_floats(const fold::Tensor& t) {
  const std::vector<double> v = fold::tensor_values(t);
  return std::vector<float>(v.begin(), v.end());  // storage values of F32, BF16 or F16: exact in float
}

}  // namespace

std::string inputs_file_name(int64_t index) { return case_file_name(index, "inputs.safetensors"); }
std::string outputs_file_name(int64_t index) { return case_file_name(index, "outputs.safetensors"); }
std::string finding_file_name(int64_t index) { return case_file_name(index, "finding.txt"); }

std::string tensor_file_name(const OpSpec& spec, TensorName t) {
  if (spec.direction == Direction::bwd && (t == TensorName::residual || t == TensorName::residual_out))
    return "dresidual";
  return std::string(to_string(t, spec.norm));
}

std::vector<int64_t> tensor_shape(TensorName t, int64_t rows, int64_t cols) {
  switch (t) {
    case TensorName::gamma:
    case TensorName::beta:
    case TensorName::dgamma:
    case TensorName::dbeta: return {cols};
    case TensorName::mean:
    case TensorName::stat: return {rows};
    default: return {rows, cols};
  }
}

bool file_holds_reference_x(const OpSpec& spec) { return spec.direction == Direction::bwd && spec.from_y; }

bool scale_is_input(const OpSpec& spec) { return spec.quant && !spec.quant->dynamic(); }
bool scale_is_output(const OpSpec& spec) { return spec.quant && spec.quant->dynamic(); }
bool has_scale_inv(const OpSpec& spec) { return spec.quant && spec.quant->apply == ScaleApply::multiply; }
bool has_amax(const OpSpec& spec) { return spec.quant && spec.quant->amax; }

std::vector<std::string> file_dtypes(const OpSpec& spec, TensorName t) {
  if (t != TensorName::y || !spec.quant) return {std::string(fold::dtype_name(spec.dtype_of(t)))};
  switch (spec.quant->cast.format) {
    case QuantFormat::e4m3: return {"U8", "F8_E4M3"};
    case QuantFormat::e5m2: return {"U8", "F8_E5M2"};
    case QuantFormat::int8: return {"I8"};
  }
  throw std::logic_error("file_dtypes: no such quantized format");
}

std::vector<TensorName> input_tensors(const OpSpec& spec) {
  std::vector<TensorName> out;
  if (spec.direction == Direction::bwd) {
    for (TensorName t : {TensorName::dy, TensorName::x, TensorName::y, TensorName::beta, TensorName::residual,
                         TensorName::gamma, TensorName::mean, TensorName::stat})
      if (spec.has(t)) out.push_back(t);
    return out;
  }
  for (TensorName t : {TensorName::x, TensorName::residual, TensorName::gamma, TensorName::beta})
    if (spec.has(t)) out.push_back(t);
  return out;
}

std::vector<TensorName> output_tensors(const OpSpec& spec) {
  std::vector<TensorName> out;
  const bool bwd = spec.direction == Direction::bwd;
  for (TensorName t : bwd ? std::vector<TensorName>{TensorName::dx, TensorName::dgamma, TensorName::dbeta,
                                                    TensorName::residual_out}
                          : std::vector<TensorName>{TensorName::y, TensorName::residual_out, TensorName::mean,
                                                    TensorName::stat})
    if (spec.has(t)) out.push_back(t);
  return out;
}

Problem stored_problem(const OpSpec& spec, const Problem& p) {
  const auto stored = [&spec](TensorName t, const std::vector<float>& v) {
    std::vector<float> out(v.size());
    for (std::size_t i = 0; i < v.size(); ++i)
      out[i] = static_cast<float>(fold::round_to_storage(spec.dtype_of(t), v[i]));
    return out;
  };
  Problem out = p;
  const auto cols = static_cast<std::size_t>(p.cols);
  if (spec.direction == Direction::bwd) out.dy = stored(TensorName::dy, p.dy);
  else out.dy.clear();
  if (!scale_is_input(spec)) out.scale = 0;  // a dynamic scale is the kernel's output
  out.x = stored(TensorName::x, p.x);
  out.residual = spec.has(TensorName::residual) ? stored(TensorName::residual, p.residual) : std::vector<float>();
  out.gamma = !spec.has(TensorName::gamma) ? std::vector<float>()
              : !p.gamma.empty()           ? stored(TensorName::gamma, p.gamma)
                                           : std::vector<float>(cols, spec.weight == Weight::one_plus_gamma ? 0.0f : 1.0f);
  out.beta = !spec.has(TensorName::beta) ? std::vector<float>()
             : !p.beta.empty()           ? stored(TensorName::beta, p.beta)
                                         : std::vector<float>(cols, 0.0f);
  return out;
}

fold::TensorFile inputs_file(const CaseInputs& c) {
  const OpSpec& spec = c.spec;
  if (spec.linear) throw std::invalid_argument("inputs_file: " + to_text(spec) + " is a norm followed by a Linear");
  const Problem p = stored_problem(spec, c.problem);
  fold::TensorFile file;
  if (spec.direction == Direction::bwd) {
    BackwardCallInputs call = backward_call_inputs(spec, p);
    if (!call.declined.empty())
      throw std::invalid_argument("inputs_file: evaluate() declines the problem: " + call.declined);
    file.tensors = std::move(call.tensors);
    if (file_holds_reference_x(spec))
      file.tensors.push_back(make_tensor("x", spec.dtype_of(TensorName::x), {p.rows, p.cols}, p.x));
  } else {
    for (TensorName t : input_tensors(spec)) {
      const std::vector<float>& values = t == TensorName::x          ? p.x
                                         : t == TensorName::residual ? p.residual
                                         : t == TensorName::gamma    ? p.gamma
                                                                     : p.beta;
      file.tensors.push_back(
          make_tensor(tensor_file_name(spec, t), spec.dtype_of(t), tensor_shape(t, p.rows, p.cols), values));
    }
  }
  if (scale_is_input(spec)) {
    if (!(p.scale > 0) || std::isinf(p.scale))
      throw std::invalid_argument("inputs_file: " + to_text(spec) + " quantizes y by a static scale: the problem has none");
    file.tensors.push_back(make_tensor(kScaleTensor, DType::f32, {1}, {p.scale}));
  }
  file.tensors.push_back(make_tensor(kEpsTensor, DType::f32, {1}, {p.eps}));
  file.metadata = {{"normcheck.protocol", kCaseProtocol},
                   {"normcheck.spec", to_text(spec)},
                   {"normcheck.seed", std::to_string(c.seed)},
                   {"normcheck.case", std::to_string(c.index)},
                   {"normcheck.eps", format_float_exact(p.eps)},
                   {"normcheck.rows", std::to_string(p.rows)},
                   {"normcheck.cols", std::to_string(p.cols)},
                   {"normcheck.domain", c.domain}};
  if (!c.input_class.empty()) file.metadata["normcheck.input_class"] = c.input_class;
  return file;
}

CaseInputs read_inputs(const std::filesystem::path& path) {
  const fold::TensorFile file = read_file(path);
  CaseInputs c;
  const std::string& version = metadata(file, path, "normcheck.protocol");
  if (version != kCaseProtocol && version != kForwardCaseProtocol)
    throw CaseFileError(named(path) + ": protocol version \"" + excerpt(version) + "\", this normcheck reads versions " +
                        kForwardCaseProtocol + " and " + kCaseProtocol);
  const SpecParse parsed = parse_spec(metadata(file, path, "normcheck.spec"));
  if (!parsed.spec) throw CaseFileError(named(path) + ": __metadata__ 'normcheck.spec' is not a spec: " +
                                                  excerpt(parsed.error, 4 * kExcerptBytes));
  c.spec = *parsed.spec;
  if (c.spec.linear) throw CaseFileError(named(path) + ": the spec " + to_text(c.spec) + " is a norm followed by a Linear");
  const bool bwd = c.spec.direction == Direction::bwd;
  if (bwd && version != kCaseProtocol)
    throw CaseFileError(named(path) + ": protocol version " + version + " has no backward specs (version " +
                        kCaseProtocol + " has)");
  c.seed = unsigned_metadata(file, path, "normcheck.seed");
  c.index = static_cast<int64_t>(unsigned_metadata(file, path, "normcheck.case"));
  c.domain = metadata(file, path, "normcheck.domain");
  if (const auto it = file.metadata.find("normcheck.input_class"); it != file.metadata.end()) c.input_class = it->second;
  Problem& p = c.problem;
  try {
    p.eps = parse_float_token(metadata(file, path, "normcheck.eps"));
  } catch (const std::invalid_argument& e) {
    throw CaseFileError(named(path) + ": __metadata__ 'normcheck.eps': " + e.what());
  }
  if (!(p.eps >= 0) || std::isinf(p.eps)) throw CaseFileError(named(path) + ": eps must be finite and >= 0");
  const uint64_t rows = unsigned_metadata(file, path, "normcheck.rows");
  const uint64_t cols = unsigned_metadata(file, path, "normcheck.cols");
  // (2^31 each: beyond any file's tensors, and rows x cols stays far from int64's end)
  if (rows < 1 || cols < 1 || rows > (uint64_t{1} << 31) || cols > (uint64_t{1} << 31))
    throw CaseFileError(named(path) + ": the shape " + std::to_string(rows) + " x " + std::to_string(cols) +
                        " is not one of 1 to 2^31 rows and columns");
  p.rows = static_cast<int64_t>(rows);
  p.cols = static_cast<int64_t>(cols);
  std::vector<std::string> names;
  std::vector<TensorName> read = input_tensors(c.spec);
  if (file_holds_reference_x(c.spec)) read.push_back(TensorName::x);
  for (TensorName t : read) {
    const std::string name = tensor_file_name(c.spec, t);
    names.push_back(name);
    const std::vector<float> v =
        as_floats(checked(file, path, name, c.spec.dtype_of(t), tensor_shape(t, p.rows, p.cols)));
    if (t == TensorName::x) p.x = v;
    if (t == TensorName::dy) p.dy = v;
    if (t == TensorName::residual) p.residual = v;
    if (t == TensorName::gamma) p.gamma = v;
    if (t == TensorName::beta) p.beta = v;
  }
  if (bwd) {
    // the saved statistics and y are normcheck's for these inputs, bit for bit
    const BackwardCallInputs call = backward_call_inputs(c.spec, p);
    for (const fold::Tensor& given : call.tensors) {
      const fold::Tensor* in_file = file.find(given.name);
      if (in_file && in_file->bytes == given.bytes) continue;
      std::size_t at = 0;
      const std::size_t width = given.bytes.size() / static_cast<std::size_t>(std::max<int64_t>(1, given.elements()));
      while (in_file && at + width <= given.bytes.size() &&
             std::equal(given.bytes.begin() + at, given.bytes.begin() + at + width, in_file->bytes.begin() + at))
        at += width;
      throw CaseFileError(named(path) + ": tensor '" + given.name + "' differs at element " +
                          std::to_string(at / width) + " from what normcheck gives a kernel of the spec for these "
                          "inputs (the forward's values from x, correctly rounded, then to " + given.dtype +
                          "): the inputs file was changed after gen wrote it");
    }
  }
  if (scale_is_input(c.spec)) {
    names.push_back(kScaleTensor);
    p.scale = as_floats(checked(file, path, kScaleTensor, DType::f32, {1}))[0];
    if (!(p.scale > 0) || std::isinf(p.scale))
      throw CaseFileError(named(path) + ": tensor '" + std::string(kScaleTensor) + "' is " + format_float_exact(p.scale) +
                          ": a static scale is finite and > 0");
  }
  if (file.find(kEpsTensor)) {  // written by gen beside the metadata's eps; the same float
    names.push_back(kEpsTensor);
    const float eps = as_floats(checked(file, path, kEpsTensor, DType::f32, {1}))[0];
    if (std::bit_cast<uint32_t>(eps) != std::bit_cast<uint32_t>(p.eps))
      throw CaseFileError(named(path) + ": tensor '" + std::string(kEpsTensor) + "' is " + format_float_exact(eps) +
                          ", __metadata__ 'normcheck.eps' says " + format_float_exact(p.eps) +
                          ": the inputs file was changed after gen wrote it");
  }
  no_other_tensors(file, path, names);
  return c;
}

fold::TensorFile read_outputs(const std::filesystem::path& path, const CaseInputs& c) {
  // every output tensor: its name, the dtypes it may have, its shape
  struct Wanted {
    std::string name;
    std::vector<std::string> dtypes;
    std::vector<std::vector<int64_t>> shapes;  // the first is the one messages name
  };
  std::vector<Wanted> outputs;
  for (TensorName t : output_tensors(c.spec)) {
    std::vector<std::vector<int64_t>> shapes = {tensor_shape(t, c.problem.rows, c.problem.cols)};
    // a statistic per row also as a column, [rows, 1] (ONNX's Mean and InvStdDev keep the reduced axis)
    if (t == TensorName::mean || t == TensorName::stat) shapes.push_back({c.problem.rows, 1});
    outputs.push_back({tensor_file_name(c.spec, t), file_dtypes(c.spec, t), shapes});
  }
  if (scale_is_output(c.spec))
    outputs.push_back({kScaleTensor, {"F32"}, {scale_shape(c.spec, c.problem.rows, c.problem.cols)}});
  if (has_scale_inv(c.spec)) outputs.push_back({kScaleInvTensor, {"F32"}, {{1}}});
  if (has_amax(c.spec)) outputs.push_back({kAmaxTensor, {"F32"}, {{1}}});
  std::vector<std::string> names;
  std::string wanted;  // what the harness writes, for the message of a missing file
  for (const Wanted& w : outputs) {
    names.push_back(w.name);
    wanted += (wanted.empty() ? "" : ", ") + w.name + " (" + w.dtypes.front() + " " + shape_text(w.shapes.front()) + ")";
  }
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))  // what is there but is not a regular file, read_file names
    throw CaseFileError(named(path) + ": no such file; the harness writes the tensors " + wanted + " there");
  fold::TensorFile file = read_file(path);
  for (const Wanted& w : outputs) checked(file, path, w.name, w.dtypes, w.shapes);
  no_other_tensors(file, path, names);
  return file;
}

}  // namespace normcheck::cli
