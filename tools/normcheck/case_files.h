// The file protocol of `normcheck gen` and `normcheck judge` (docs/judge.md):
// a directory of problems, each a pair of safetensors files,
//   case-NNN.inputs.safetensors   written by gen: x, residual, gamma, beta
//                                 (a backward: dy, x or y and beta,
//                                 dresidual, gamma, mean, rstd / rrms)
//   case-NNN.outputs.safetensors  written by the user's harness: y,
//                                 residual_out, mean, rstd / rrms (a
//                                 backward: dx, dgamma, dbeta, dresidual)
// every tensor the spec has, in the spec's dtype (F32, BF16, F16), x-shaped
// tensors [rows, cols], gamma, beta, dgamma, dbeta [cols], the statistics
// [rows]. A backward's inputs are those evaluate() gives a kernel of the
// spec (backward_call_inputs(), recorded_kernel.h): the saved statistics
// and a from=y backward's y are normcheck's, computed from x, which the
// file holds for the judge's reference even where the kernel reads y. A
// quantized spec (op_spec.h, Quantization) has y as its codes, one byte each:
// U8 (fp8: the raw bytes; F8_E4M3 / F8_E5M2 are read too) or I8 (int8), and
// a tensor `scale`, F32: with scale=static an input of shape [1] (gen writes
// the problem's scale), with scale=token or block:G an output of shape
// [rows, scales_per_row] (the scales the kernel computed); with
// scale_apply=multiply an output `scale_inv`, F32 [1], and with the word
// amax an output `amax`, F32 [1]. The
// inputs' __metadata__ holds the spec's text, the seed, the case number, eps
// and the declared domain, so the judge needs nothing but the directory.
//
// Every reader here trusts nothing: a missing, truncated or malformed file, a
// missing tensor, a wrong dtype or shape throws CaseFileError whose message
// names the file and the tensor (the command turns it into exit 2).
#pragma once

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "fold/safetensors.h"
#include "normcheck/evaluate.h"
#include "normcheck/kernel.h"
#include "normcheck/op_spec.h"

namespace normcheck::cli {

struct CaseFileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The protocol's version, written as metadata "normcheck.protocol": 2 has
// backward specs. A forward case is the same in both, and the judge reads
// version 1 files of forward specs too.
inline constexpr const char* kCaseProtocol = "2";
inline constexpr const char* kForwardCaseProtocol = "1";

// The seed problems are drawn with when none is given (nor NORMCHECK_SEED):
// `normcheck gen`'s, and the Python module's, so that both draw the same
// problems by default.
inline constexpr uint64_t kDefaultCaseSeed = 20261127;

std::string inputs_file_name(int64_t index);   // "case-000.inputs.safetensors"
std::string outputs_file_name(int64_t index);  // "case-000.outputs.safetensors"
std::string finding_file_name(int64_t index);  // "case-000.finding.txt": judge's problem file of a finding

// The name of a tensor of `spec` in the files (and in the Python module's
// calls): x, residual, gamma, beta, y, residual_out, mean, and the statistic
// as rstd (LayerNorm) or rrms (RMSNorm); a backward's dy, dx, dgamma, dbeta,
// and with `add` its residual and residual_out as "dresidual" (the input:
// the gradient arriving at the forward's residual_out; the output: the
// gradient written for the forward's residual input).
std::string tensor_file_name(const OpSpec& spec, TensorName t);

// The shape of tensor t in a problem of rows x cols: [cols] per column
// (gamma, beta, dgamma, dbeta), [rows] per row (mean, rstd / rrms), else
// [rows, cols].
std::vector<int64_t> tensor_shape(TensorName t, int64_t rows, int64_t cols);

// The inputs a kernel of the spec is called with and the outputs it writes,
// in this order (the ones the spec has). A backward's inputs: dy, x (from=y:
// y and beta), residual (dresidual), gamma, mean, rstd / rrms.
std::vector<TensorName> input_tensors(const OpSpec& spec);
std::vector<TensorName> output_tensors(const OpSpec& spec);

// Whether the inputs file of `spec` holds x beside the kernel's inputs: a
// backward from=y, whose kernel reads y, and whose reference needs x.
bool file_holds_reference_x(const OpSpec& spec);

// The tensor of a quantized spec's scale in the files (above), and whether
// the spec has it as an input (scale=static) or an output (a dynamic scale).
inline constexpr const char* kScaleTensor = "scale";
// A quantized spec's outputs of one float, F32 [1]: scale_inv = fl32(1 / s)
// (scale_apply=multiply) and the tensor's amax (the word amax).
inline constexpr const char* kScaleInvTensor = "scale_inv";
inline constexpr const char* kAmaxTensor = "amax";
bool has_scale_inv(const OpSpec& spec);
bool has_amax(const OpSpec& spec);

// eps as a tensor of every inputs file, F32 [1], beside the metadata's C99
// hex float: a harness in a language without a hex-float parser (JavaScript)
// reads it from there. Both hold the same float; judge refuses a file where
// they differ.
inline constexpr const char* kEpsTensor = "eps";
bool scale_is_input(const OpSpec& spec);
bool scale_is_output(const OpSpec& spec);

// The safetensors dtypes tensor t of the spec may have in the files, the one
// gen names first: its format's (F32, BF16, F16); a quantized y's codes U8
// (fp8; or F8_E4M3 / F8_E5M2, safetensors' own name of the format) or I8.
std::vector<std::string> file_dtypes(const OpSpec& spec, TensorName t);

// One problem as gen writes it and judge reads it back.
struct CaseInputs {
  OpSpec spec;
  Problem problem;     // x, residual, gamma, beta as the file's values (exact); eps; a static scale
  uint64_t seed = 0;
  int64_t index = 0;
  std::string domain;  // the domain text the problems were drawn inside (normcheck/kernel.h)
  // gen --accuracy-rows: the input class whose realistic rows the case is
  // (fuzz/accuracy_baseline.h), metadata "normcheck.input_class"; empty
  // (no entry) for a drawn case.
  std::string input_class;
};

// The problem as the files hold it: x, residual, gamma and beta (a backward:
// and dy) rounded to their formats in `spec` (to nearest even), gamma and beta
// present even where `p` has none (gamma 1, or 0 under weight=1+gamma; beta
// 0: the weight and bias an absent one means); a forward's dy dropped.
Problem stored_problem(const OpSpec& spec, const Problem& p);

// The inputs file of `c`: every input tensor of its spec, the values of
// stored_problem() (a backward: as backward_call_inputs() gives them, and x
// where file_holds_reference_x()), and the metadata. Throws
// std::invalid_argument for a norm followed by a Linear, and for a backward
// problem evaluate() declines (its reason).
fold::TensorFile inputs_file(const CaseInputs& c);

// Reads and checks an inputs file. A backward's saved statistics and y must
// be, bit for bit, those evaluate() gives a kernel for the file's x, dy,
// gamma and eps (backward_call_inputs()): a file whose harness read other
// inputs than the judge's kernel row is given is refused, naming the tensor.
CaseInputs read_inputs(const std::filesystem::path& path);

// Reads the outputs file of `c` and checks that it holds every output tensor
// of the spec with the spec's dtype and shape (and nothing else): a
// quantized y's codes and a dynamic scale too.
fold::TensorFile read_outputs(const std::filesystem::path& path, const CaseInputs& c);

}  // namespace normcheck::cli
