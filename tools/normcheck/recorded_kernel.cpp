#include "recorded_kernel.h"

#include <cstring>
#include <stdexcept>

#include "case_files.h"
#include "fold/safetensors.h"
#include "normcheck/bounds.h"
#include "normcheck/call_buffers.h"

namespace normcheck::cli {
namespace {

struct Recording {
  const fold::TensorFile* outputs = nullptr;
  const OpSpec* spec = nullptr;
  bool scale_out = false;  // the spec's scale is an output (a dynamic one)
};
Recording current;

// The recorded tensor `name` into the call's tensor `t`, row by row (the
// call's rows may be further apart than the file's).
void copy_into(const nc_tensor& t, const std::string& name) {
  if (!t.data) return;
  const fold::Tensor* recorded = current.outputs->find(name);
  if (!recorded) throw std::logic_error("recorded kernel: no tensor '" + name + "' (read_outputs checks them)");
  const auto row_bytes = static_cast<std::size_t>(t.cols * nc_dtype_bytes(t.dtype));
  if (recorded->bytes.size() != row_bytes * static_cast<std::size_t>(t.rows))
    throw std::logic_error("recorded kernel: tensor '" + name + "' does not have the call's size");
  auto* base = static_cast<unsigned char*>(t.data);
  for (int64_t r = 0; r < t.rows; ++r)
    std::memcpy(base + r * t.row_stride * nc_dtype_bytes(t.dtype), recorded->bytes.data() + r * row_bytes, row_bytes);
}

void replay(const nc_call* call) {
  for (TensorName t : output_tensors(*current.spec)) copy_into(call_tensor(*call, t), tensor_file_name(*current.spec, t));
  if (current.scale_out) copy_into(call->scale, kScaleTensor);  // a dynamic scale (static: an input)
  if (has_scale_inv(*current.spec)) copy_into(call->scale_inv, kScaleInvTensor);
  if (has_amax(*current.spec)) copy_into(call->amax, kAmaxTensor);
}

// backward_call_inputs' recording: the spec and where the call's inputs go.
struct Capture {
  const OpSpec* spec = nullptr;
  std::vector<fold::Tensor>* tensors = nullptr;
};
Capture capture;

void record_inputs(const nc_call* call) {
  for (TensorName t : input_tensors(*capture.spec)) {
    const nc_tensor& in = call_tensor(*call, t);
    if (!in.data) throw std::logic_error("backward_call_inputs: the call has no " + tensor_file_name(*capture.spec, t));
    const DType format = capture.spec->dtype_of(t);
    const std::size_t width = nc_dtype_bytes(in.dtype);
    const auto row_bytes = static_cast<std::size_t>(in.cols) * width;
    fold::Tensor out{tensor_file_name(*capture.spec, t), std::string(fold::dtype_name(format)),
                     tensor_shape(t, in.rows, in.cols), std::string(row_bytes * static_cast<std::size_t>(in.rows), '\0')};
    const auto* base = static_cast<const char*>(in.data);
    for (int64_t r = 0; r < in.rows; ++r)
      std::memcpy(out.bytes.data() + static_cast<std::size_t>(r) * row_bytes,
                  base + static_cast<std::size_t>(r * in.row_stride) * width, row_bytes);
    capture.tensors->push_back(std::move(out));
  }
}

}  // namespace

const nc_tensor& call_tensor(const nc_call& call, TensorName t) {
  switch (t) {
    case TensorName::x: return call.x;
    case TensorName::residual: return call.residual;
    case TensorName::gamma: return call.gamma;
    case TensorName::beta: return call.beta;
    case TensorName::dy: return call.dy;
    case TensorName::y: return call.y;
    case TensorName::residual_out: return call.residual_out;
    case TensorName::mean: return call.mean;
    case TensorName::stat: return call.rstd;
    case TensorName::dx: return call.dx;
    case TensorName::dgamma: return call.dgamma;
    case TensorName::dbeta: return call.dbeta;
    default: throw std::logic_error("call_tensor: a norm followed by a Linear has no version-2 call");
  }
}

BackwardCallInputs backward_call_inputs(const OpSpec& spec, const Problem& p) {
  if (spec.direction != Direction::bwd) throw std::logic_error("backward_call_inputs: " + to_text(spec) + " is a forward");
  if (capture.spec) throw std::logic_error("backward_call_inputs: one recording at a time");
  BackwardCallInputs out;
  Kernel row = harness_row(spec, InputRange{});  // every input: the caller's domain is not this function's business
  row.fn = SpecKernelFn(record_inputs);
  capture = {&spec, &out.tensors};
  EvaluateOptions options;
  options.outputs_only = true;  // the call's inputs, not a verdict
  try {
    out.declined = evaluate(row, p, options).declined;
  } catch (...) {
    capture = {};
    throw;
  }
  capture = {};
  if (!out.declined.empty()) out.tensors.clear();
  return out;
}

Kernel harness_row(const OpSpec& spec, const InputRange& domain) {
  const Op op = op_of(spec);
  const DType dtype = spec.dtype_of(TensorName::x);
  return Kernel{.name = kHarnessKernelName,
                .op = op,
                .origin = Origin::plugin,
                .dtype = dtype,
                .algorithm = "outputs a harness wrote to files (normcheck judge)",
                .fn = SpecKernelFn(replay),
                .bound = plugin_bound(op, dtype),
                .range = domain,
                .family = Family::external,
                .spec = &spec};
}

RecordedKernel::RecordedKernel(const OpSpec& spec, const InputRange& domain, const fold::TensorFile& outputs)
    : spec_(spec), row_(harness_row(spec_, domain)) {
  if (current.outputs) throw std::logic_error("RecordedKernel: one recording at a time");
  current = {&outputs, &spec_, scale_is_output(spec_)};
}

RecordedKernel::~RecordedKernel() { current = {}; }

}  // namespace normcheck::cli
