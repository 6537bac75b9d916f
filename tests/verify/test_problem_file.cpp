// Problem files (verify/include/normcheck/row_file.h): a whole problem written
// by problem_file_text reads back to the same bits, plain row files keep
// their meaning, and a file that does not describe what normcheck would run
// is refused.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "normcheck/reference.h"
#include "normcheck/row_file.h"

namespace normcheck {
namespace {

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * 4) == 0);
}

Problem backward_problem() {
  Problem p;
  p.rows = 2;
  p.cols = 3;
  p.x = {1.5f, -0.0f, 0x1p-149f, 3e38f, -2.25f, 0x1.234566p-7f};
  p.dy = {0.5f, std::numeric_limits<float>::infinity(), -1.0f, 0.0f, 7.0f, -0x1p-130f};
  p.gamma = {1.0f, -0.5f, 0x1.fffffep+3f};
  p.eps = 0x1.4f8b58p-17f;
  p.misalign_floats = 3;
  return p;
}

TEST(ProblemFile, RoundTripsEveryBit) {
  const Problem p = backward_problem();
  const std::string text = problem_file_text(Op::layernorm_bwd, DType::f32, p, {"a note"}, "some.kernel");
  const ProblemFile f = parse_problem_file(text, "mem");
  ASSERT_TRUE(f.whole);
  ASSERT_EQ(f.op, Op::layernorm_bwd);
  EXPECT_EQ(f.dtype, DType::f32);
  EXPECT_EQ(f.kernel, "some.kernel");
  ASSERT_EQ(f.problems.size(), 1u);
  const Problem& q = f.problems[0];
  EXPECT_EQ(q.rows, 2);
  EXPECT_EQ(q.cols, 3);
  EXPECT_TRUE(same_bits(q.x, p.x));
  EXPECT_TRUE(same_bits(q.dy, p.dy));
  EXPECT_TRUE(same_bits(q.gamma, p.gamma));
  EXPECT_TRUE(q.beta.empty());
  EXPECT_EQ(std::bit_cast<uint32_t>(q.eps), std::bit_cast<uint32_t>(p.eps));
  EXPECT_EQ(q.misalign_floats, 3);
  EXPECT_NE(text.find("# nc.mean "), std::string::npos);
  EXPECT_NE(text.find("# nc.rstd "), std::string::npos);
}

// A backward problem with a NaN in x: its saved statistics are NaN, written
// as "nan" (sign and payload lost), and the file still reads back: any NaN
// stands for the statistic normcheck computes.
TEST(ProblemFile, ABackwardRowWithANanReadsBack) {
  for (const float nan : {std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN()}) {
    Problem p = backward_problem();
    p.x[0] = nan;
    const std::string text = problem_file_text(Op::layernorm_bwd, DType::f32, p, {}, "some.kernel");
    const ProblemFile f = parse_problem_file(text, "mem");
    ASSERT_EQ(f.problems.size(), 1u);
    EXPECT_TRUE(std::isnan(f.problems[0].x[0]));
  }
}

// A norm followed by a Linear: W (one nc.weight line per output) and b read
// back to the same bits, with out_features.
TEST(ProblemFile, NormLinearCarriesWeightAndBias) {
  Problem p;
  p.rows = 2;
  p.cols = 3;
  p.x = {1.5f, -0.0f, 0x1p-149f, 3.0f, -2.25f, 0x1.234566p-7f};
  p.gamma = {1.0f, -0.5f, 0x1.fffffep+3f};
  p.beta = {0.25f, 0.0f, -1.0f};
  p.out_features = 2;
  p.weight = {0.5f, -0x1p-140f, 2.0f, 1e-3f, 0.0f, -7.0f};
  p.bias = {0.125f, -3.0f};
  const std::string text = problem_file_text(Op::layernorm_linear_fwd, DType::f32, p, {});
  const ProblemFile f = parse_problem_file(text, "mem");
  ASSERT_EQ(f.op, Op::layernorm_linear_fwd);
  const Problem& q = f.problems.at(0);
  EXPECT_EQ(q.out_features, 2);
  EXPECT_TRUE(same_bits(q.weight, p.weight));
  EXPECT_TRUE(same_bits(q.bias, p.bias));
  EXPECT_TRUE(same_bits(q.beta, p.beta));
}

// A kernel with a spec of its own (op_spec.h): the spec, the residual (one
// line per row) and the row stride read back, bit for bit.
TEST(ProblemFile, ASpecsKernelCarriesItsSpecResidualAndStride) {
  Problem p;
  p.rows = 2;
  p.cols = 3;
  p.x = {1.5f, -0.0f, 0x1p-133f, 3.0f, -2.25f, 0x1.24p-7f};
  p.residual = {0x1p-9f, -1.0f, std::numeric_limits<float>::infinity(), 0.0f, 0x1.8p3f, -0x1p-140f};
  p.gamma = {1.0f, -0.5f, 2.0f};
  p.row_stride = 7;
  const OpSpec spec = parse_spec("rmsnorm fwd dtype=bf16 gamma=bf16 add round=sum:bf16,xhat:bf16").spec.value();
  const std::string text = problem_file_text(Op::rmsnorm_fwd, DType::bf16, p, {}, "k", &spec);
  const ProblemFile f = parse_problem_file(text, "mem");
  ASSERT_TRUE(f.spec);
  EXPECT_EQ(*f.spec, spec);
  const Problem& q = f.problems.at(0);
  EXPECT_TRUE(same_bits(q.residual, p.residual));
  EXPECT_EQ(q.row_stride, 7);
}

TEST(ProblemFile, ASpecsFileRefusesWhatDoesNotFit) {
  const std::string add = "# nc.op rmsnorm_fwd\n# nc.spec rmsnorm fwd add\n";
  EXPECT_THROW(parse_problem_file(add + "1 2 3\n", "mem"), RowFileError);                          // no residual
  EXPECT_THROW(parse_problem_file(add + "# nc.residual 1 2\n1 2 3\n", "mem"), RowFileError);        // width
  EXPECT_THROW(parse_problem_file(add + "# nc.residual 1 2 3\n# nc.residual 1 2 3\n1 2 3\n", "mem"),
               RowFileError);                                                                     // rows
  EXPECT_NO_THROW(parse_problem_file(add + "# nc.residual 1 2 3\n1 2 3\n", "mem"));
  EXPECT_THROW(parse_problem_file("# nc.op rmsnorm_fwd\n# nc.residual 1 2 3\n1 2 3\n", "mem"),
               RowFileError);                                                                     // no add
  EXPECT_THROW(parse_problem_file("# nc.op layernorm_fwd\n# nc.spec rmsnorm fwd\n1 2 3\n", "mem"),
               RowFileError);                                                                     // another op
  EXPECT_THROW(parse_problem_file("# nc.op rmsnorm_fwd\n# nc.spec rmsnorm sideways\n1 2 3\n", "mem"),
               RowFileError);                                                                     // not a spec
  EXPECT_THROW(parse_problem_file("# nc.op rmsnorm_fwd\n# nc.row_stride 2\n1 2 3\n", "mem"),
               RowFileError);                                                                     // stride < d
}

TEST(ProblemFile, NormLinearRefusesWhatDoesNotFit) {
  const std::string head = "# nc.op rmsnorm_linear_fwd\n";
  EXPECT_THROW(parse_problem_file(head + "1 2 3\n", "mem"), RowFileError);  // no nc.weight
  EXPECT_THROW(parse_problem_file(head + "# nc.weight 1 2\n1 2 3\n", "mem"), RowFileError);  // width
  EXPECT_THROW(parse_problem_file(head + "# nc.weight 1 2 3\n# nc.bias 1 2\n1 2 3\n", "mem"),
               RowFileError);  // one output, two biases
  EXPECT_THROW(parse_problem_file(head + "# nc.dtype bf16\n# nc.weight 1 2 3\n1 2 3\n", "mem"), RowFileError);
  EXPECT_THROW(parse_problem_file("# nc.op rmsnorm_fwd\n# nc.weight 1 2 3\n1 2 3\n", "mem"), RowFileError);
  EXPECT_NO_THROW(parse_problem_file(head + "# nc.weight 1 2 3\n# nc.weight 0 0 1\n# nc.bias 1 2\n1 2 3\n", "mem"));
}

TEST(ProblemFile, RmsNormBackwardCarriesRrms) {
  Problem p = backward_problem();
  p.misalign_floats = 0;
  const std::string text = problem_file_text(Op::rmsnorm_bwd, DType::f32, p, {});
  EXPECT_NE(text.find("# nc.rrms "), std::string::npos);
  EXPECT_EQ(parse_problem_file(text, "mem").op, Op::rmsnorm_bwd);
}

TEST(ProblemFile, PlainRowFilesStayRowsOfTheirOwn) {
  const ProblemFile f = parse_problem_file("1 2 3\n# a comment\n4, 5\n", "plain");
  EXPECT_FALSE(f.whole);
  ASSERT_EQ(f.problems.size(), 2u);
  EXPECT_EQ(f.problems[0].cols, 3);
  EXPECT_EQ(f.problems[1].cols, 2);
  EXPECT_EQ(f.problems[1].eps, 1e-5f);
}

// Negative controls: statistics other than the correctly rounded ones, an
// unknown key or op, and widths that do not match are refused, with the source.
TEST(ProblemFile, RefusesWhatItCannotReplay) {
  const Problem p = backward_problem();
  std::string text = problem_file_text(Op::layernorm_bwd, DType::f32, p, {});
  const auto at = text.find("# nc.rstd ");
  ASSERT_NE(at, std::string::npos);
  const auto end = text.find('\n', at);
  std::string wrong = text;
  wrong.replace(at, end - at, "# nc.rstd 1 1");
  EXPECT_THROW(parse_problem_file(wrong, "wrong_stats"), RowFileError);
  EXPECT_THROW(parse_problem_file("# nc.colour blue\n1 2\n", "k"), RowFileError);
  EXPECT_THROW(parse_problem_file("# nc.op batchnorm\n1 2\n", "k"), RowFileError);
  EXPECT_THROW(parse_problem_file("# nc.op layernorm_fwd\n# nc.gamma 1 2 3\n1 2\n", "k"), RowFileError);
  EXPECT_THROW(parse_problem_file("# nc.op layernorm_bwd\n1 2\n", "k"), RowFileError);  // no dy
  try {
    parse_problem_file("# nc.op layernorm_fwd\n# nc.eps -1\n1 2\n", "where.txt");
    FAIL() << "a negative eps was accepted";
  } catch (const RowFileError& e) {
    EXPECT_NE(std::string(e.what()).find("where.txt:2"), std::string::npos) << e.what();
  }
}

// Read strictly: nc. lines without nc.op mean nothing and are refused (they
// were dropped, the rows run with eps 1e-5 and no gamma); integers are
// integers; every line is consumed whole.
TEST(ProblemFile, ReadsStrictly) {
  const auto refused = [](const std::string& text, const std::string& reason) {
    try {
      parse_problem_file(text, "strict.txt");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const RowFileError& e) {
      EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).rfind("strict.txt", 0), 0u) << e.what();
    }
  };
  refused("# nc.eps 0x1p-3\n# nc.gamma 2 2\n# nc.spec layernorm fwd\n1 2\n", "without an nc.op line");
  refused("# nc.op layernorm_fwd\n# nc.misalign 1.5\n1 2\n", "nc.misalign takes one integer in [0, 16), not '1.5'");
  refused("# nc.op layernorm_fwd\n# nc.row_stride 1.5\n1 2\n", "nc.row_stride takes one integer >= 0, not '1.5'");
  refused("# nc.op layernorm_fwd extra\n1 2\n", "nc.op takes one op name");
  refused("# nc.op layernorm_fwd\n# nc.dtype f32 f16\n1 2\n", "nc.dtype takes one dtype name");
  refused("# nc.op layernorm_fwd\n# nc.misalign 1 2\n1 2\n", "nc.misalign takes one integer");
  EXPECT_EQ(parse_problem_file("# nc.op layernorm_fwd\n# nc.misalign 3\n1 2\n", "ok").problems.at(0).misalign_floats, 3);
}

// A token past kMaxTokenBytes is refused with its line, and no message echoes
// a token whole or a control byte raw.
TEST(RowFile, MessagesAreBoundedAndEscaped) {
  const std::string token = "\x1b]0;x\x07" + std::string(1'000'000, '1');
  try {
    parse_rows("1 2\n3 " + token + "\n", "big.txt");
    FAIL() << "a million-byte token was accepted";
  } catch (const RowFileError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("big.txt:2:", 0), 0u) << what;
    EXPECT_NE(what.find("more than the 256"), std::string::npos) << what;
    EXPECT_LT(what.size(), 400u);
    EXPECT_EQ(what.find('\x1b'), std::string::npos);
  }
  try {
    parse_rows("1 \x1b]0;x\x07\n", "ctl.txt");
    FAIL() << "a control byte was accepted";
  } catch (const RowFileError& e) {
    EXPECT_NE(std::string(e.what()).find("'\\x1b]0;x\\x07'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace normcheck
