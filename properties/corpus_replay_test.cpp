// Replays every saved counterexample of tests/corpus/ against every kernel of
// the table: what once broke a kernel stays checked on all of them. A file
// records its op (nc.op); its problem runs on the kernels of that op's family
// (LayerNorm forward and backward, or RMSNorm forward and backward), through
// evaluate() against the kernel's bound. A backward kernel on a file without
// dy gets dy = 1 everywhere. Controls are run and printed but expected to
// fail; a kernel whose InputRange excludes the problem, or that declines its
// shape, is skipped with the reason; a third-party kernel that fails is a
// finding, printed, not a failure.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <string>

#include "corpus.h"
#include "generators.h"

namespace normcheck::props {
namespace {

const std::filesystem::path kCorpusDir = NORMCHECK_CORPUS_DIR;

bool same_family(Op a, Op b) {
  const auto rms = [](Op op) { return op == Op::rmsnorm_fwd || op == Op::rmsnorm_bwd; };
  return rms(a) == rms(b);
}

Problem for_kernel(const Kernel& kernel, Problem p) {
  const bool backward = kernel.op == Op::layernorm_bwd || kernel.op == Op::rmsnorm_bwd;
  if (backward && p.dy.empty()) p.dy.assign(p.x.size(), 1.0f);
  if (!backward) p.dy.clear();
  if (kernel.op != Op::layernorm_fwd) p.beta.clear();  // only LayerNorm forward takes beta
  return p;
}

class CorpusReplay : public testing::TestWithParam<std::filesystem::path> {};

TEST_P(CorpusReplay, EveryKernelWithinBound) {
  const CorpusEntry entry = read_corpus_file(GetParam());
  for (const Kernel& kernel : kernel_table()) {
    if (entry.op && !same_family(*entry.op, kernel.op)) continue;
    for (const Problem& stored : entry.problems) {
      const Problem p = for_kernel(kernel, stored);
      if (const std::string why = declines(kernel, request_for(kernel, p)); !why.empty()) {
        std::cout << "[corpus] " << kernel.name << ": skipped, " << why << '\n';
        continue;
      }
      const Evaluation e = evaluate(kernel, p);
      std::cout << "[corpus] " << kernel.name << ": max error/bound " << e.max_error_over_bound
                << (e.pass ? " pass" : " FAIL") << '\n';
      if (kernel.origin == Origin::control) continue;
      if (kernel.origin == Origin::third_party) {
        if (!e.pass) std::cout << "[corpus] FINDING (third-party, not a failure): " << kernel.name << '\n';
        continue;
      }
      EXPECT_TRUE(e.pass) << kernel.name << " breaks its bound on " << GetParam().string()
                          << ": max error/bound " << e.max_error_over_bound << " at " << e.worst.output
                          << "[" << e.worst.row << "," << e.worst.col << "]";
    }
  }
}

std::string file_name(const testing::TestParamInfo<std::filesystem::path>& info) {
  std::string name = info.param.stem().string();
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusReplay, testing::ValuesIn(corpus_files(kCorpusDir)), file_name);

TEST(CorpusReplay, CorpusIsNotEmpty) {
  EXPECT_FALSE(corpus_files(kCorpusDir).empty()) << "no counterexamples in " << kCorpusDir;
}

}  // namespace
}  // namespace normcheck::props
