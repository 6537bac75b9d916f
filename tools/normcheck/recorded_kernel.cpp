#include "recorded_kernel.h"

#include <cstring>
#include <stdexcept>

#include "case_files.h"
#include "normcheck/call_buffers.h"
#include "normcheck/bounds.h"

namespace normcheck::cli {
namespace {

struct Recording {
  const fold::TensorFile* outputs = nullptr;
  NormKind norm{};
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
  copy_into(call->y, "y");
  copy_into(call->residual_out, "residual_out");
  copy_into(call->mean, "mean");
  copy_into(call->rstd, std::string(to_string(TensorName::stat, current.norm)));
  if (current.scale_out) copy_into(call->scale, kScaleTensor);  // a dynamic scale (static: an input)
}

}  // namespace

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
  current = {&outputs, spec.norm, scale_is_output(spec)};
}

RecordedKernel::~RecordedKernel() { current = {}; }

}  // namespace normcheck::cli
