// Adversarial generators for the property suites (RapidCheck).
//
// RapidCheck's own float generator never produces NaN, inf, -0 or subnormals
// and stays under ~1e19. These generators draw floats uniformly over bit
// patterns plus weighted specials, and rows from the families where LayerNorm
// kernels are known to break (docs/properties.md lists them). Every generator
// respects a kernel's InputRange exactly, and every shrink stays inside it:
// shrinking only removes rows or columns and moves floats toward 0, 1 and short
// mantissas, never to a larger magnitude than max(|v|, 1).
//
// Included only by property test sources: it pulls in <rapidcheck.h>.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <rapidcheck.h>

#include "normcheck/evaluate.h"
#include "normcheck/op_spec.h"
#include "row_families.h"  // Rng, FloatLimits, draw_float, RowFamily, draw_row
#include "normcheck/kernel.h"

namespace normcheck::props {

// Shrinks toward 0, then +-1, the integer part, fewer mantissa bits, and an
// exponent closer to 0. Candidates never exceed max(|v|, 1) in magnitude;
// non-finite values shrink to 0 and 1.
rc::Seq<float> shrink_float(float v);

// A shrinking float generator over draw_float.
rc::Gen<float> gen_float(FloatLimits limits);

// Options for a whole problem.
struct GenOptions {
  Op op = Op::layernorm_fwd;
  InputRange range;                 // of the kernel under test
  bool nonfinite = true;            // may put NaN/inf into x (and dy); needs range.handles_nonfinite
  bool force_nonfinite = false;     // every problem has a NaN/inf in some row of x
  std::optional<float> eps;         // fixed eps; default: one of {0, 1e-12, 1e-6, 1e-5, 1e-2}
  bool affine = true;               // may generate gamma (and beta for LayerNorm forward)
  bool beta = false;                // beta for a backward too (a spec from=y reads it)
  bool unit_gamma = false;          // gamma empty (== 1) and no beta
  bool nonconstant = false;         // every row has two distinct values (sigma > 0)
  int max_rows = 4;
  int64_t max_d = 65536;
  // The caller's shapes (rows, cols): each problem is one of them, drawn
  // uniformly, in place of the size-driven rows and d (and of long rows);
  // its values come from the same row families. The caller keeps them inside
  // the kernel's d range. Empty: the size-driven draw.
  std::vector<std::pair<int64_t, int64_t>> shapes;
  bool residual = false;            // a residual of the row's family beside x (a spec with `add`)
  bool row_stride = false;          // rows further apart than cols on a third of the problems
  // Rows longer than max_d: with long_d > max_d, one problem in long_one_in
  // of those drawn at RapidCheck's largest size (100), or every problem with
  // always_long, is one or two rows of d log-uniform in (max_d, long_d],
  // inside the kernel's declared d range (a kernel whose max_d is max_d or
  // less gets no long rows). Not for a norm followed by a Linear (d <= 1024).
  int64_t long_d = 0;
  int long_one_in = 1;
  bool always_long = false;
  // A forward whose y is quantized (op_spec.h): its quantization and weight.
  // Each problem then carries a static scale (Problem::scale) around the
  // tensor's absolute maximum over qmax, and one in five each aims row 0's
  // values at the midpoints between codes, puts the static scale at the
  // saturation edge, makes a dynamic scale's scale_ub or scale_min bind, or
  // ties the row's absolute maximum (quant_gen.cpp, draw_quantized).
  std::optional<Quantization> quant;
  Weight weight = Weight::gamma;
  // Backward problems of many rows: with many_rows_one_in > 0, one backward
  // problem in many_rows_one_in is N rows, N log-uniform in [256,
  // many_rows_max], of d uniform in [1, 64] (inside the kernel's d range):
  // dgamma and dbeta summed over a batch's rows, kept cheap by the short rows.
  int many_rows_one_in = 0;
  int64_t many_rows_max = 65536;
};

// The options of a kernel of the table: its op and declared domain (|x|,
// eps and d stay inside it), non-finite inputs only when it says it handles
// them, a residual when its spec adds one, row strides when it takes them,
// beta for a backward that reads it (from=y).
GenOptions kernel_options(const Kernel& kernel);

// A batch of many rows (GenOptions::many_rows_one_in), p.rows x p.cols,
// appended to p.x and p.dy (and to p.residual when `residual`): activations
// and a gradient with a mean per channel, x_ij = m_j + N(0, 1), dy_ij = b_j +
// N(0, 1), m_j ~ N(0, 4), b_j ~ N(0.5, 1/4), each value clamped to
// |v| <= limit, so that each column's dy xhat and dy have a mean and dgamma
// and dbeta grow with the rows, as a real batch's do.
void draw_batch(Rng& rng, double limit, bool residual, Problem& p);

// The static scale and the quantization edges of GenOptions::quant, on a problem drawn without them.
void draw_quantized(const GenOptions& opts, Rng& rng, Problem& p);

// Problems for opts.op. RapidCheck's size (0..100) caps d at about 2^(size/6),
// so early cases are small and d = 65536 is reached only rarely, at the end;
// longer rows come from GenOptions::long_d.
rc::Gen<Problem> gen_problem(const GenOptions& opts);

// Shrinks: one row, then all rows but one, fewer columns (one of k = 2, 4, .., 64 chunks), contiguous
// rows, misalignment 0, gamma/beta dropped, then (problems of <= 256 floats) each float of x, dy, the
// residual, gamma, beta.
rc::Seq<Problem> shrink_problem(const Problem& problem);

// What a generated problem contains, for RC_TAG: |mu|/sigma bucket, d bucket,
// specials. Computed in double from the floats (a classification, not a check).
std::vector<std::string> tags_of(const Problem& problem);

}  // namespace normcheck::props

namespace normcheck {
// RapidCheck prints counterexamples with this: every array as hex floats, so a
// reader can paste them into `normcheck check --input`.
void showValue(const Problem& problem, std::ostream& os);
}  // namespace normcheck
