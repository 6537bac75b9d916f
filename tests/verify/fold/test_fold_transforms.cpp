// The folding library: rounding to storage once, the folds, the float32 check
// against its derived bound over random shapes, dtypes and the adversarial
// families, and the negative control (gamma on the wrong side) it must catch.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <bit>
#include <random>

#include "test_seed.h"
#include "fold/families.h"
#include "fold/fold.h"
#include "fold/fold_check.h"
#include "fold/round.h"
#include "normcheck/float_format.h"

namespace nf = normcheck::fold;
using normcheck::DType;

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr DType kDTypes[] = {DType::f32, DType::bf16, DType::f16};
}  // namespace

TEST(RoundToStorage, NearestEvenSubnormalsAndOverflow) {
  // f16: 65504 is the largest; 65519.99 rounds down, 65520 (the midpoint to
  // 65536) rounds to even, which is past the end: inf.
  EXPECT_EQ(nf::round_to_storage(DType::f16, 65519.99), 65504.0);
  EXPECT_EQ(nf::round_to_storage(DType::f16, 65520.0), kInf);
  EXPECT_EQ(nf::round_to_storage(DType::f16, -1e6), -kInf);
  // f16 subnormals: spacing 2^-24; 1.5 * 2^-24 is a tie, to even (2 * 2^-24).
  EXPECT_EQ(nf::round_to_storage(DType::f16, 1.5 * 0x1p-24), 0x1p-23);
  EXPECT_EQ(nf::round_to_storage(DType::f16, 0.49 * 0x1p-24), 0.0);
  // bf16: 8 significant bits; 1 + 2^-8 is the tie between 1 and 1 + 2^-7.
  EXPECT_EQ(nf::round_to_storage(DType::bf16, 1 + 0x1p-8), 1.0);
  EXPECT_EQ(nf::round_to_storage(DType::bf16, 1 + 0x1p-8 + 0x1p-40), 1 + 0x1p-7);
  // The same through the low part of a double-double: one rounding of hi + lo.
  EXPECT_EQ(nf::round_to_storage(DType::bf16, 1 + 0x1p-8, 0x1p-60), 1 + 0x1p-7);
  EXPECT_EQ(nf::round_to_storage(DType::bf16, 1 + 0x1p-8, -0x1p-60), 1.0);
  EXPECT_EQ(nf::round_to_storage(DType::bf16, -(1 + 0x1p-8), -0x1p-60), -(1 + 0x1p-7));
  // float32 agrees with the hardware's one rounding of a double.
  std::mt19937_64 rng(normcheck::test::test_seed());
  std::uniform_real_distribution<double> e(-160, 130);
  for (int k = 0; k < 20000; ++k) {
    const double v = std::exp2(e(rng)) * (k % 2 ? -1 : 1) * (1 + std::ldexp(static_cast<double>(rng() >> 12), -52));
    EXPECT_EQ(nf::round_to_storage(DType::f32, v), static_cast<double>(static_cast<float>(v))) << v;
    EXPECT_EQ(nf::round_to_storage(DType::f16, v), static_cast<double>(static_cast<_Float16>(v))) << v;
  }
}

TEST(RoundToStorage, BitsRoundTrip) {
  for (DType t : kDTypes)
    for (double v : {1.0, -0.3125, 65504.0, 0x1p-24, 0x1p-133, 0x1p-149}) {
      if (nf::round_to_storage(t, v) != v) continue;  // not a value of this format
      EXPECT_EQ(nf::value_from_bits(t, nf::storage_bits(t, v)), v) << v;
    }
}

namespace {

// An oracle independent of round_to_storage: the bf16 value nearest to v
// (ties to the even significand), searched among the bf16 neighbours of v's
// truncation. Finite, normal-range v only.
double bf16_nearest(double v) {
  const float f = static_cast<float>(v);
  const uint16_t t = static_cast<uint16_t>(std::bit_cast<uint32_t>(f) >> 16);
  double best = 0, best_gap = kInf;
  uint16_t best_bits = 0;
  for (int k = -2; k <= 2; ++k) {
    const uint16_t bits = static_cast<uint16_t>(t + k);
    const double c = normcheck::float_from_bf16(bits);
    const double gap = std::fabs(c - v);
    if (gap < best_gap || (gap == best_gap && (bits & 1) == 0 && (best_bits & 1) == 1)) {
      best = c, best_gap = gap, best_bits = bits;
    }
  }
  return best;
}

double oracle(DType t, double v) {
  switch (t) {
    case DType::f32: return static_cast<float>(v);
    case DType::f16: return static_cast<double>(static_cast<_Float16>(v));
    case DType::bf16: break;
  }
  return bf16_nearest(v);
}

}  // namespace

TEST(RoundToStorage, Bf16AgreesWithANearestNeighbourSearch) {
  std::mt19937_64 rng(normcheck::test::test_seed());
  std::uniform_real_distribution<double> e(-120, 120);
  for (int k = 0; k < 20000; ++k) {
    const double v = std::exp2(e(rng)) * (k % 2 ? -1 : 1) * (1 + std::ldexp(static_cast<double>(rng() >> 12), -52));
    EXPECT_EQ(nf::round_to_storage(DType::bf16, v), bf16_nearest(v)) << v;
  }
  // Exact ties: 1 + 2^-8 (to 1, even) and 1 + 3 * 2^-8 (to 1 + 2^-6, even).
  for (double v : {1 + 0x1p-8, 1 + 3 * 0x1p-8, -(1 + 0x1p-8)})
    EXPECT_EQ(nf::round_to_storage(DType::bf16, v), bf16_nearest(v)) << v;
}

TEST(FoldAffine, ProductsAreExactBeforeTheOneRounding) {
  // W_ij gamma_j for storage values is exact in double; the folded weight is
  // its one rounding to the storage format, checked against the hardware
  // (float32), the compiler's _Float16 and a nearest-neighbour search (bf16),
  // not against round_to_storage itself.
  std::mt19937_64 rng(normcheck::test::test_seed());
  for (DType t : kDTypes) {
    const nf::FoldCase c = nf::make_case(nf::Family::random, nf::NormKind::layer, t, 9, 5, rng);
    for (long i = 0; i < 5; ++i)
      for (long j = 0; j < 9; ++j)
        EXPECT_EQ(c.folded.w(i, j), oracle(t, c.original.w(i, j) * c.gamma(j)));
    // b' = W beta + b: compare with a long double sum (64 bits) rounded to storage;
    // they can differ only when the long double's rounding crosses a storage midpoint.
    for (long i = 0; i < 5; ++i) {
      long double s = c.original.b(i);
      for (long j = 0; j < 9; ++j) s += static_cast<long double>(c.original.w(i, j)) * c.beta(j);
      EXPECT_NEAR(c.folded.b(i), static_cast<double>(s), std::fabs(static_cast<double>(s)) * normcheck::unit_roundoff(t));
    }
  }
}

TEST(FoldAffine, RejectsMismatchedShapesAndPostLn) {
  nf::Linear l{nf::Matrix::Ones(3, 4), nf::Vector()};
  EXPECT_THROW(nf::fold_affine(l, nf::Vector::Ones(5), nf::Vector(), DType::f32), nf::FoldError);
  EXPECT_THROW(nf::fold_affine(l, nf::Vector::Ones(4), nf::Vector::Ones(3), DType::f32), nf::FoldError);
  EXPECT_NO_THROW(nf::require_foldable(nf::Placement::pre_ln, "ln"));
  EXPECT_NO_THROW(nf::require_foldable(nf::Placement::none, "ln"));
  try {
    nf::require_foldable(nf::Placement::post_ln, "blocks.0.ln_1");
    ADD_FAILURE() << "post-LN was folded";
  } catch (const nf::FoldError& e) {
    EXPECT_NE(std::string(e.what()).find("blocks.0.ln_1 is a Post-LN norm"), std::string::npos) << e.what();
  }
}

// The property: over random d, e, rows, every dtype, both norms and every
// family, folded and unfolded float32 results each stay within their derived
// bound of the exact result, so their difference within the sum of the two.
// The one exception is a fold that overflows (f16, near_overflow): W' holds
// inf, and check_fold reports it instead of a finite bound.
TEST(CheckFold, WithinTheDerivedBoundOverRandomShapesDtypesAndFamilies) {
  std::mt19937_64 rng(normcheck::test::test_seed());
  std::uniform_int_distribution<long> dim(2, 96), rows(4, 12);
  int overflowing = 0, checked = 0;
  double largest_use[3] = {0, 0, 0};  // max folded error / bound per dtype
  for (int trial = 0; trial < 60; ++trial)
    for (DType t : kDTypes)
      for (nf::Family f : nf::kFamilies)
        for (nf::NormKind n : {nf::NormKind::layer, nf::NormKind::rms}) {
          const long d = dim(rng), e = dim(rng) / 2 + 1;
          nf::FoldCase c = nf::make_case(f, n, t, d, e, rng);
          c.storage_activations = trial % 2 == 1;  // the norm's output in float32, or rounded to storage
          const auto xs = nf::make_xhat_rows(n, c.folded.w, rows(rng), rng);
          const nf::FoldCheck r = nf::check_fold(c, xs);
          SCOPED_TRACE(std::string(nf::to_string(f)) + " d=" + std::to_string(d) + " e=" + std::to_string(e) +
                       (c.storage_activations ? " storage activations" : ""));
          EXPECT_EQ(r.unfolded_overflows, 0);  // no family drives gamma xhat + beta past the range
          EXPECT_LE(r.unfolded_over_bound, 1.0);
          if (r.overflowed_weights) {
            ++overflowing;
            EXPECT_TRUE(t == DType::f16 && f == nf::Family::near_overflow);
            EXPECT_FALSE(r.within_bound());
            continue;
          }
          ++checked;
          largest_use[static_cast<int>(t)] = std::max(largest_use[static_cast<int>(t)], r.folded_over_bound);
          EXPECT_LE(r.folded_over_bound, 1.0) << r.worst;
          EXPECT_LE(r.diff_over_bound, 1.0) << r.worst;
          EXPECT_TRUE(r.within_bound());
        }
  EXPECT_GT(overflowing, 0);  // the f16 overflow family does overflow
  // The bounds are not vacuous: somewhere the folded error reaches a visible
  // share of its bound (measured 0.2-0.9; the worst case d u is rarely met by
  // a random sum, whose error grows like sqrt(d) u).
  for (double use : largest_use) EXPECT_GT(use, 0.05);
  EXPECT_GT(checked, 1000);
}

// Negative control: diag(gamma) W instead of W diag(gamma) (square W, so the
// shapes fit) breaks the bound on every dtype when gamma is not constant.
TEST(CheckFold, GammaOnTheWrongSideIsCaught) {
  std::mt19937_64 rng(normcheck::test::test_seed());
  for (DType t : kDTypes)
    for (nf::NormKind n : {nf::NormKind::layer, nf::NormKind::rms}) {
      nf::FoldCase c = nf::make_case(nf::Family::random, n, t, 16, 16, rng);
      c.folded = nf::fold_affine_wrong_side(c.original, c.gamma, c.beta, t);
      c.storage_activations = true;  // the looser of the two bounds
      const auto xs = nf::make_xhat_rows(n, c.folded.w, 8, rng);
      const nf::FoldCheck r = nf::check_fold(c, xs);
      EXPECT_GT(r.diff_over_bound, 1.0) << normcheck::to_string(t);
      EXPECT_FALSE(r.within_bound());
    }
}

// f16 with the norm's output stored in f16: gamma = 2^14 makes gamma xhat
// overflow 65504 on the spike rows (|xhat| ~ sqrt(d - 1)), so the unfolded
// model gives inf there; the folded weights W gamma (~16) are fine and the
// folded outputs stay within their bound of the exact result.
TEST(CheckFold, FoldingAvoidsAnF16ActivationOverflow) {
  std::mt19937_64 rng(normcheck::test::test_seed());
  const long d = 32, e = 8;
  nf::FoldCase c;
  c.storage = DType::f16;
  c.storage_activations = true;
  c.gamma = nf::Vector::Constant(d, 0x1p14);
  c.original.w = nf::Matrix(e, d);
  std::normal_distribution<double> n01(0, 1);
  for (long i = 0; i < c.original.w.size(); ++i) c.original.w.data()[i] = nf::round_to_storage(DType::f16, 0x1p-10 * n01(rng));
  c.folded = nf::fold_affine(c.original, c.gamma, c.beta, DType::f16);
  const nf::FoldCheck r = nf::check_fold(c, nf::make_xhat_rows(nf::NormKind::rms, c.folded.w, 8, rng));
  EXPECT_GT(r.unfolded_overflows, 0);
  EXPECT_GT(r.unfolded_nonfinite_outputs, 0);
  EXPECT_EQ(r.overflowed_weights, 0);
  EXPECT_EQ(r.nonfinite_outputs, 0);
  EXPECT_LE(r.folded_over_bound, 1.0);
  EXPECT_TRUE(r.within_bound());
}

// A second control: the right fold with beta dropped (b' = b) is caught too.
TEST(CheckFold, DroppedBetaIsCaught) {
  std::mt19937_64 rng(normcheck::test::test_seed());
  nf::FoldCase c = nf::make_case(nf::Family::random, nf::NormKind::layer, DType::f32, 24, 8, rng);
  c.folded = nf::fold_affine(c.original, c.gamma, nf::Vector(), DType::f32);
  const nf::FoldCheck r = nf::check_fold(c, nf::make_xhat_rows(nf::NormKind::layer, c.folded.w, 8, rng));
  EXPECT_GT(r.diff_over_bound, 1.0);
}

// Centring a writer: each centred column (or embedding row) sums to ~0 (the
// one storage rounding per entry leaves at most d u_s max|entry|), and LN of
// the sum of centred writers equals RMSNorm of it, same eps (in double).
TEST(CentreWriter, ColumnsSumToZeroAndLayerNormBecomesRmsNorm) {
  std::mt19937_64 rng(normcheck::test::test_seed());
  std::normal_distribution<double> n01(0, 1);
  const long d = 12, k = 5;
  for (DType t : kDTypes) {
    nf::Linear out{nf::Matrix(d, k), nf::Vector(d)}, embed{nf::Matrix(7, d), nf::Vector()};
    for (long i = 0; i < out.w.size(); ++i) out.w.data()[i] = nf::round_to_storage(t, 3 + n01(rng));
    for (long i = 0; i < d; ++i) out.b(i) = nf::round_to_storage(t, 2 + n01(rng));
    for (long i = 0; i < embed.w.size(); ++i) embed.w.data()[i] = nf::round_to_storage(t, 1 + n01(rng));
    const nf::Linear co = nf::centre_writer(out, nf::Axis::rows, t);
    const nf::Linear ce = nf::centre_writer(embed, nf::Axis::columns, t);
    const double us = normcheck::unit_roundoff(t);
    // |sum_i round(v_i - m)| <= sum_i u_s |v_i - m| (+ the double-double's 2^-100 level).
    for (long j = 0; j < k; ++j)
      EXPECT_LE(std::fabs(co.w.col(j).sum()), us * (out.w.col(j).array() - out.w.col(j).mean()).abs().sum() * (1 + 1e-9));
    for (long i = 0; i < 7; ++i)
      EXPECT_LE(std::fabs(ce.w.row(i).sum()), us * (embed.w.row(i).array() - embed.w.row(i).mean()).abs().sum() * (1 + 1e-9));
    EXPECT_THROW(nf::centre_writer(nf::Linear{embed.w, nf::Vector::Ones(7)}, nf::Axis::columns, t), nf::FoldError);
  }
  // float32 storage: h = embed[token] + W a + b; LN(h) vs RMSNorm(h') with h'
  // the centred writers' sum, eps 1e-5: equal up to the centred weights'
  // rounding (u = 2^-24 relative per entry), far below 1e-5.
  nf::Linear out{nf::Matrix(d, k), nf::Vector(d)}, embed{nf::Matrix(3, d), nf::Vector()};
  for (long i = 0; i < out.w.size(); ++i) out.w.data()[i] = nf::round_to_storage(DType::f32, n01(rng));
  for (long i = 0; i < d; ++i) out.b(i) = nf::round_to_storage(DType::f32, 5 + n01(rng));
  for (long i = 0; i < embed.w.size(); ++i) embed.w.data()[i] = nf::round_to_storage(DType::f32, 4 + n01(rng));
  const nf::Linear co = nf::centre_writer(out, nf::Axis::rows, DType::f32);
  const nf::Linear ce = nf::centre_writer(embed, nf::Axis::columns, DType::f32);
  Eigen::VectorXd a(k);
  for (long i = 0; i < k; ++i) a(i) = n01(rng);
  const Eigen::VectorXd h = embed.w.row(1).transpose() + out.w * a + out.b;
  const Eigen::VectorXd hc = ce.w.row(1).transpose() + co.w * a + co.b;
  // h and h' rounded to float32 (2^-24 relative each) for the exact norms.
  std::vector<float> hv(h.data(), h.data() + d), hcv(hc.data(), hc.data() + d);
  const auto ln = nf::normalize(nf::NormKind::layer, hv, 1e-5f);
  const auto rms = nf::normalize(nf::NormKind::rms, hcv, 1e-5f);
  for (long j = 0; j < d; ++j) EXPECT_NEAR(ln[j], rms[j], 1e-5) << j;
  // Without the centring, RMSNorm of h is not LayerNorm of h (h has mean ~9).
  const auto rms_raw = nf::normalize(nf::NormKind::rms, hv, 1e-5f);
  double worst = 0;
  for (long j = 0; j < d; ++j) worst = std::max(worst, std::fabs(static_cast<double>(ln[j]) - rms_raw[j]));
  EXPECT_GT(worst, 0.1);
}

// check_centring: the library's centring passes it for every dtype; three
// wrong "centrings" are caught: a zeroed column (sums to 0, entries wrong), the
// column left as it was (entries and sum wrong), and one entry's sign flipped.
TEST(CentreWriter, CheckCentringPassesTheFoldAndCatchesBadCentrings) {
  std::mt19937_64 rng(normcheck::test::test_seed());
  std::normal_distribution<double> n01(0, 1);
  for (DType t : kDTypes) {
    nf::Linear w{nf::Matrix(40, 6), nf::Vector(40)};
    for (long i = 0; i < w.w.size(); ++i) w.w.data()[i] = nf::round_to_storage(t, 1.5 + n01(rng));
    for (long i = 0; i < 40; ++i) w.b(i) = nf::round_to_storage(t, -2 + n01(rng));
    const nf::Linear c = nf::centre_writer(w, nf::Axis::rows, t);
    for (long j = 0; j < 6; ++j) {
      const nf::CentringCheck ok = nf::check_centring(w.w.col(j), c.w.col(j), t);
      EXPECT_TRUE(ok.ok()) << ok.sum_over_bound << " " << ok.entry_over_bound;
      EXPECT_FALSE(nf::check_centring(w.w.col(j), nf::Vector::Zero(40), t).ok());
      EXPECT_FALSE(nf::check_centring(w.w.col(j), w.w.col(j), t).ok());
      nf::Vector flipped = c.w.col(j);
      flipped(3) = -flipped(3);
      if (flipped(3) != c.w.col(j)(3)) {
        EXPECT_FALSE(nf::check_centring(w.w.col(j), flipped, t).ok());
      }
    }
    EXPECT_TRUE(nf::check_centring(w.b, c.b, t).ok());
  }
}
