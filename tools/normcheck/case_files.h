// The file protocol of `normcheck gen` and `normcheck judge` (docs/judge.md):
// a directory of problems, each a pair of safetensors files,
//   case-NNN.inputs.safetensors   written by gen: x, residual, gamma, beta
//   case-NNN.outputs.safetensors  written by the user's harness: y,
//                                 residual_out, mean, rstd / rrms
// every tensor the spec has, in the spec's dtype (F32, BF16, F16), x-shaped
// tensors [rows, cols], gamma and beta [cols], the statistics [rows]. A
// quantized spec (op_spec.h, Quantization) has y as its codes, one byte each:
// U8 (fp8: the raw bytes; F8_E4M3 / F8_E5M2 are read too) or I8 (int8), and
// a tensor `scale`, F32: with scale=static an input of shape [1] (gen writes
// the problem's scale), with scale=token or block:G an output of shape
// [rows, scales_per_row] (the scales the kernel computed). The
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

// The protocol's version, written as metadata "normcheck.protocol".
inline constexpr const char* kCaseProtocol = "1";

// The seed problems are drawn with when none is given (nor NORMCHECK_SEED):
// `normcheck gen`'s, and the Python module's, so that both draw the same
// problems by default.
inline constexpr uint64_t kDefaultCaseSeed = 20261127;

std::string inputs_file_name(int64_t index);   // "case-000.inputs.safetensors"
std::string outputs_file_name(int64_t index);  // "case-000.outputs.safetensors"
std::string finding_file_name(int64_t index);  // "case-000.finding.txt": judge's problem file of a finding

// The name of a tensor in the files: x, residual, gamma, beta, y,
// residual_out, mean, and the statistic as rstd (LayerNorm) or rrms (RMSNorm).
std::string tensor_file_name(TensorName t, NormKind norm);

// The inputs and outputs of a forward spec in the files, in this order (the
// ones the spec has).
std::vector<TensorName> input_tensors(const OpSpec& spec);
std::vector<TensorName> output_tensors(const OpSpec& spec);

// The tensor of a quantized spec's scale in the files (above), and whether
// the spec has it as an input (scale=static) or an output (a dynamic scale).
inline constexpr const char* kScaleTensor = "scale";
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
};

// The problem as the files hold it: x, residual, gamma and beta rounded to
// their formats in `spec` (to nearest even), gamma and beta present even where
// `p` has none (gamma 1, or 0 under weight=1+gamma; beta 0: the weight and
// bias an absent one means), dy dropped.
Problem stored_problem(const OpSpec& spec, const Problem& p);

// The inputs file of `c`: every input tensor of its spec, the values of
// stored_problem(), and the metadata. Throws std::invalid_argument for a spec
// that is not a forward norm.
fold::TensorFile inputs_file(const CaseInputs& c);

// Reads and checks an inputs file.
CaseInputs read_inputs(const std::filesystem::path& path);

// Reads the outputs file of `c` and checks that it holds every output tensor
// of the spec with the spec's dtype and shape (and nothing else): a
// quantized y's codes and a dynamic scale too.
fold::TensorFile read_outputs(const std::filesystem::path& path, const CaseInputs& c);

}  // namespace normcheck::cli
