// An op as data: what a normalization kernel computes, which tensors it reads
// and writes in which number format, and where it rounds on the way.
//
// A spec describes the op, not an algorithm: two kernels with one spec
// compute the same function of their inputs and are held to the same exact
// reference; how each sums or divides is its bound's business. Every kernel
// of the table has a spec (spec_of(), below), and one short text form of it is
// what `normcheck list` prints and what a user writes (docs/ops.md):
//
//   layernorm fwd
//   rmsnorm fwd dtype=bf16 gamma=bf16 round=xhat:bf16           (Hugging Face's LlamaRMSNorm)
//   rmsnorm fwd dtype=bf16 add round=sum:bf16 weight=1+gamma    (a fused add + Gemma RMSNorm)
//
// The forward of a spec, in the order its stages run (the rounding points
// are the names in brackets; an unnamed stage is not rounded):
//   s      = x + residual                        [sum]   with `add`; otherwise s = x
//   mu     = mean(s)                                     LayerNorm only
//   r      = 1 / sqrt(mean((s - mu)^2) + eps)    [r]     RMSNorm: 1 / sqrt(mean(s^2) + eps)
//   xhat   = (s - mu) r                          [xhat]  RMSNorm: s r
//   w      = gamma, or 1 + gamma                 [weight]
//   scaled = w xhat                              [scaled]
//   y      = scaled + beta, rounded to y's dtype
// with residual_out = s rounded to its dtype, and mean, rstd (rrms) rounded to
// theirs. The backward with `add` (flash-attention's and Liger-Kernel's fused
// add backward) reads x as the forward's s, and `residual` as the gradient
// arriving at the forward's residual_out (the residual stream's, dresidual);
// it writes dx = the norm's gradient + dresidual, and `residual_out` as the
// same gradient for the forward's residual input, in that tensor's format. A rounding point says the kernel rounds that value to a format and
// goes on from the rounded value (vLLM's fused add normalizes the sum it
// stores: round=sum:bf16; FlashInfer's normalizes its float32 sum:
// round=sum:f32). The same spec without its rounding points is the op in
// exact arithmetic, with only the outputs rounded: what the kernel's users
// are owed. The backward takes dy and the saved statistics and gives dx, dgamma
// and dbeta; `from=y` reads the forward's output y (and beta) in place of x
// (Apex's memory_efficient), xhat being (y - beta) / w. A norm followed by a
// Linear (`linear`) gives z = W y + b. A quantized forward (`quant=`) writes y
// as 8-bit codes: y, in y's dtype, divided by a scale and cast to fp8 or int8
// (struct Quantization below).
#pragma once

#include <array>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "normcheck/float_format.h"
#include "normcheck/kernel.h"

namespace normcheck {

enum class NormKind { layernorm, rmsnorm };
enum class Direction { fwd, bwd };

// The weight the normalized value is multiplied by (text: weight=none|gamma|1+gamma).
enum class Weight {
  none,
  gamma,
  one_plus_gamma,  // (1 + gamma): Gemma's RMSNorm, TransformerEngine's zero_centered_gamma
};

// Every tensor an op can read or write. Which of them a spec has follows from
// the spec (has()).
enum class TensorName {
  x, residual, gamma, beta, dy,                 // inputs
  y, residual_out, mean, stat, dx, dgamma, dbeta,  // outputs (stat: rstd or rrms)
  w, b, z,                                      // a norm followed by a Linear: W, its bias, its output
};
inline constexpr std::size_t kTensorNameCount = 15;

// The intermediate values a kernel may round to a storage format: on its way
// to y (the forward's stages above), or in the backward:
//   xhat    xhat recomputed from x and the saved statistics        (also a forward stage)
//   dyw     g = w dy, the upstream gradient times the weight
//   dw_row  each row's dgamma term dy xhat, before it is summed over the rows
// (Liger-Kernel's RMSNorm backward in its llama mode: dW += T(dy T(x r)):
// round=xhat:bf16,dw_row:bf16).
enum class RoundingPoint { sum, r, xhat, weight, scaled, dyw, dw_row };
inline constexpr std::size_t kRoundingPointCount = 7;

// How a backward sums dgamma and dbeta over the rows (text: reduce=block:R:P):
// partials of R consecutive rows, each summed in the accumulator's format and
// stored in format P, then summed in float32 (every shipped GPU backward:
// per-block partials, then a final pass). Without it: one sum over the rows in
// any order.
struct Reduction {
  int64_t rows = 0;          // R
  DType partial = DType::f32;  // P
  friend bool operator==(const Reduction&, const Reduction&) = default;
};

// Where the scale of a quantized output comes from (text: scale=...).
enum class ScaleKind {
  given,      // scale=static: one float32 scale for the whole tensor, an input
  per_token,  // scale=token: one per row, computed by the kernel and written (rows x 1)
  per_block,  // scale=block:G: one per row and block of G columns, written (rows x ceil(d / G))
};

// How a quantized y's scale s is applied before the cast (text: scale_apply=...).
enum class ScaleApply {
  inverse,   // t = fl32(y * fl32(1 / s)): s dequantizes (y ~ q s), its inverse is formed once (vLLM)
  divide,    // t = fl32(y / s): the same s, divided by (vLLM's per-token fp8, to match FBGEMM)
  multiply,  // t = fl32(y * s): s quantizes, and the kernel writes scale_inv = fl32(1 / s), which
             // dequantizes (TransformerEngine's fp8 `scale` and `scale_inv`); a static scale only
};

// A forward whose y is written as 8-bit codes (text: quant=e4m3|e5m2|int8 and
// the words below; docs/ops.md, "Quantized outputs"). y_i is the forward's
// output in y's dtype: that dtype is the format the value has before the cast
// (bf16 for a kernel that rounds y to bf16 and then quantizes it, f32 for one
// that casts its float32 value). The kernel writes
//   q_i = cast(t_i),  t_i = fl32(y_i * fl32(1 / s))   (the default: multiply by the inverse)
//                     t_i = fl32(y_i / s)             (scale_apply=divide)
//                     t_i = fl32(y_i * s)             (scale_apply=multiply)
// and, for a dynamic scale, s = max(fl32(min(a, scale_ub) / qmax), scale_min)
// with a = max |y_i| over the row (token) or the block, y_i in y's dtype, and
// qmax the format's largest value (448, 57344, 127).
//
// A NaN y_i (a row with a non-finite input, a NaN gamma) has a NaN t_i, whose
// code is the format's NaN (e4m3fn S.1111.111, e5m2 S.11111.xx with xx != 0);
// int8 has none. `nan=clamp` declares the convention of vLLM and FlashInfer
// instead: t is clamped as fmaxf(-qmax, fminf(t, qmax)) before an fp8 cast,
// and fminf(NaN, qmax) = qmax, so a NaN t is written as +qmax's code; an int8
// t goes through cvt.rni.sat.s8.f32, which converts NaN to 0. A scale or
// amax over values that include a NaN is NaN under every spec
// (docs/semantics.md, "Quantized outputs on a non-finite row").
struct Quantization {
  QuantCast cast;                  // the format, saturation (fp8), ties and clamp (int8)
  ScaleKind scale = ScaleKind::given;
  int64_t group = 0;               // per_block: columns per block (scale=block:G)
  ScaleApply apply = ScaleApply::inverse;  // scale_apply=inverse|divide|multiply
  float scale_ub = std::numeric_limits<float>::infinity();  // scale_ub=V (dynamic only)
  float scale_min = 0;             // scale_min=V (dynamic only)
  bool nan_clamp = false;          // nan=clamp: a NaN t is written as +qmax's code (fp8) or 0 (int8)
  // amax: the kernel also writes amax = max |y_i| over the whole tensor, y_i
  // in y's dtype (1 x 1, float32; TransformerEngine's amax for delayed scaling)
  bool amax = false;
  bool dynamic() const { return scale != ScaleKind::given; }
  friend bool operator==(const Quantization&, const Quantization&) = default;
};

struct OpSpec {
  NormKind norm = NormKind::layernorm;
  Direction direction = Direction::fwd;
  bool add = false;     // a residual added to x in front of the norm, the sum an output (backward: above)
  Weight weight = Weight::gamma;
  bool bias = true;     // LayerNorm's beta; RMSNorm takes none unless the spec says `bias`
  bool linear = false;  // followed by a Linear: z = W y + b (float32, forward only)
  // The forward writes mean (LayerNorm) and rstd / rrms, and the backward
  // reads them; `stats=none`: neither (a backward then recomputes them from x
  // and eps, as ggml's rms_norm_back does).
  bool stats = true;
  // A backward that reads y, the forward's output in y's format, and beta
  // instead of x and the saved mean (text: from=y): it recovers
  // xhat = (y - beta) / w, and only the saved rstd / rrms of the statistics.
  bool from_y = false;
  // A forward whose y is written as 8-bit codes (struct Quantization).
  std::optional<Quantization> quant;
  // The format every sum of the kernel accumulates in (text: acc=D; empty:
  // float32): a backward's row sums mean(g), mean(g xhat) and its column sums
  // dgamma, dbeta (Liger-Kernel's casting mode none sums in the input's format).
  std::optional<DType> acc;
  // A backward's reduction of dgamma and dbeta over the rows (struct Reduction).
  std::optional<Reduction> reduce;
  // The format of each tensor (meaningful where has() is true).
  std::array<DType, kTensorNameCount> dtype{};
  // The format a rounding point rounds to; empty: the value is not rounded there.
  std::array<std::optional<DType>, kRoundingPointCount> round{};

  DType dtype_of(TensorName t) const { return dtype[static_cast<std::size_t>(t)]; }
  std::optional<DType> rounding_at(RoundingPoint p) const { return round[static_cast<std::size_t>(p)]; }
  // Whether the op reads or writes tensor t.
  bool has(TensorName t) const;

  friend bool operator==(const OpSpec&, const OpSpec&) = default;
};

// The spec with the defaults of the text form for this norm and direction:
// float32 everywhere, weight gamma, LayerNorm with beta, RMSNorm without,
// no residual add, no rounding point.
OpSpec default_spec(NormKind norm, Direction direction);

// The text form (docs/ops.md): "<norm> <direction>" and then, in any order,
// `dtype=D` (x, residual, y, residual_out, dy, dx), `<tensor>=D` for one
// tensor, `add`, `weight=none|gamma|1+gamma`, `bias`
// (`bias=none` for a LayerNorm without beta), `round=<point>:D[,<point>:D]`,
// `stats=none`, `from=y`, `linear`, `acc=D`, `reduce=block:R:P`, and for a quantized y `quant=e4m3|e5m2|int8`,
// `scale=static|token|block:G`, `scale_apply=inverse|divide|multiply`, `ties=even|away`,
// `qmin=-128|-127`, `saturate=none`, `scale_ub=V`, `scale_min=V`, `nan=clamp`, `amax`. D is f32,
// bf16 or f16.
struct SpecParse {
  std::optional<OpSpec> spec;
  std::string error;  // why the text is not a spec, naming the word at fault (empty on success)
};
SpecParse parse_spec(std::string_view text);

// The canonical text form: the defaults left out, the words in a fixed order.
// parse_spec(to_text(s)).spec == s for every valid s.
std::string to_text(const OpSpec& spec);

// Why `spec` is not a valid spec (a stage or tensor it does not have, a
// rounding point with nothing to round), or empty. parse_spec() returns only
// valid specs; a spec built in code is checked with this.
std::string spec_error(const OpSpec& spec);

// The spec of each op of the table in storage dtype t: x, y, dy, dx in t,
// every other tensor float32 (plugin.h). Every kernel row's spec.
OpSpec spec_of(Op op, DType t);
inline OpSpec spec_of(const Kernel& k) { return k.spec ? *k.spec : spec_of(k.op, k.dtype); }

// The table's op of a spec's norm, direction and Linear: the op of a kernel
// row whose spec is `spec` (kernel.h: Kernel::spec).
Op op_of(const OpSpec& spec);

// The norm's input s of one element that a kernel following the spec's policy
// normalizes: x without `add`; with it x + residual (x and residual values of
// their formats, their sum formed in double), rounded where the spec rounds
// it (round=sum:T; +-inf past T's largest finite value), else rounded to
// float32 (as a float32 kernel's sum is: a float holds it, for the callers'
// statistics and conventions).
float norm_input(const OpSpec& spec, float x, float residual);

// The op and storage dtype of the table whose spec this is (the inverse of
// spec_of), or empty: a spec the table's ops do not cover (a kernel of it is
// judged by its policy's admissible range, spec_policy.h).
std::optional<std::pair<Op, DType>> table_op(const OpSpec& spec);

std::string_view to_string(TensorName t, NormKind norm);  // stat: "rstd" (LayerNorm) or "rrms"
std::string_view to_string(RoundingPoint p);
std::string_view to_string(NormKind n);
std::string_view to_string(QuantFormat f);  // "e4m3", "e5m2", "int8"
// The number of scales a quantized forward's row has (1, or ceil(cols / G) per block).
int64_t scales_per_row(const Quantization& q, int64_t cols);
std::string_view to_string(Direction d);

}  // namespace normcheck
