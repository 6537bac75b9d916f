// A harness as a user writes one for `normcheck judge` (docs/judge.md): for
// each case-NNN.inputs.safetensors of DIR it reads the inputs, calls a kernel
// and writes case-NNN.outputs.safetensors beside it. The kernels are the
// example plugin's C functions (examples/plugin/v2_norms.c or one broken twin
// of broken/v2_broken.c), linked into this program and called with an
// nc_call built from the file's tensors: what a harness on another device
// does with its own kernel.
//
//   judge_harness DIR KERNEL     exit 0: every case written; 2: bad usage or input
//
// It reads the protocol from the files alone (tensor names, dtypes, shapes,
// eps in the metadata), with normcheck's safetensors reader and writer.
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "fold/safetensors.h"
#include "normcheck/plugin.h"
#include "normcheck/row_file.h"

extern "C" const nc_kernel_v2* normcheck_plugin_kernels_v2(int* n);

namespace {

namespace fs = std::filesystem;
namespace nf = normcheck::fold;

int32_t abi_dtype(const std::string& dtype) { return dtype == "F32" ? NC_F32 : dtype == "BF16" ? NC_BF16 : NC_F16; }
int64_t element_bytes(const std::string& dtype) { return dtype == "F32" ? 4 : 2; }

// A descriptor of a tensor of the file ([rows, cols] or [n]: per-column tensors are 1 x n).
nc_tensor descriptor(nf::Tensor& t, bool per_row) {
  const int64_t rows = t.shape.size() == 2 ? t.shape[0] : per_row ? t.shape[0] : 1;
  const int64_t cols = t.shape.size() == 2 ? t.shape[1] : per_row ? 1 : t.shape[0];
  return {t.bytes.data(), abi_dtype(t.dtype), rows, cols, cols};
}

// The output tensor `name` in `dtype`, shape [rows, cols] or [rows].
nf::Tensor output(const std::string& name, const std::string& dtype, std::vector<int64_t> shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return {name, dtype, std::move(shape), std::string(static_cast<std::size_t>(n * element_bytes(dtype)), '\0')};
}

int run_case(const fs::path& inputs_path, nc_kernel_v2_fn fn, const std::string& y_dtype) {
  nf::TensorFile in = nf::read_safetensors(inputs_path);
  nf::Tensor* x = in.find("x");
  if (!x || x->shape.size() != 2) {
    std::fprintf(stderr, "%s: no 2-d tensor x\n", inputs_path.c_str());
    return 2;
  }
  const int64_t rows = x->shape[0], cols = x->shape[1];
  const bool layernorm = in.metadata.at("normcheck.spec").rfind("layernorm", 0) == 0;
  nc_call call{};
  call.size = sizeof(nc_call);
  call.rows = rows, call.cols = cols;
  call.eps = normcheck::parse_float_token(in.metadata.at("normcheck.eps"));
  call.x = descriptor(*x, false);
  if (nf::Tensor* t = in.find("residual")) call.residual = descriptor(*t, false);
  if (nf::Tensor* t = in.find("gamma")) call.gamma = descriptor(*t, false);
  if (nf::Tensor* t = in.find("beta")) call.beta = descriptor(*t, false);

  // The outputs: y (in the format the spec gives it, argv), residual_out with
  // a residual, and the statistics in float32 (the specs of these kernels).
  nf::TensorFile out;
  out.tensors.push_back(output("y", y_dtype, {rows, cols}));
  if (call.residual.data) out.tensors.push_back(output("residual_out", x->dtype, {rows, cols}));
  if (layernorm) out.tensors.push_back(output("mean", "F32", {rows}));
  out.tensors.push_back(output(layernorm ? "rstd" : "rrms", "F32", {rows}));
  for (nf::Tensor& t : out.tensors) {
    nc_tensor d = descriptor(t, t.shape.size() == 1);
    if (t.name == "y") call.y = d;
    if (t.name == "residual_out") call.residual_out = d;
    if (t.name == "mean") call.mean = d;
    if (t.name == "rstd" || t.name == "rrms") call.rstd = d;
  }
  fn(&call);
  std::string name = inputs_path.filename().string();
  name.replace(name.find(".inputs."), 8, ".outputs.");
  nf::write_safetensors(inputs_path.parent_path() / name, out);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: judge_harness DIR KERNEL Y_DTYPE (F32, BF16 or F16)\n");
    return 2;
  }
  int n = 0;
  const nc_kernel_v2* kernels = normcheck_plugin_kernels_v2(&n);
  nc_kernel_v2_fn fn = nullptr;
  for (int i = 0; i < n; ++i)
    if (std::string(kernels[i].name) == argv[2]) fn = kernels[i].fn;
  if (!fn) {
    std::fprintf(stderr, "judge_harness: no kernel '%s'\n", argv[2]);
    return 2;
  }
  try {
    for (const fs::directory_entry& e : fs::directory_iterator(argv[1])) {
      const std::string file = e.path().filename().string();
      if (file.find(".inputs.safetensors") == std::string::npos) continue;
      if (const int rc = run_case(e.path(), fn, argv[3]); rc != 0) return rc;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "judge_harness: %s\n", e.what());
    return 2;
  }
  return 0;
}
