// The libFuzzer entry point (fuzz/libfuzzer/normcheck_fuzzer.cpp) driven
// without libFuzzer: LLVMFuzzerInitialize with NORMCHECK_FUZZ_PLUGIN naming a
// version-2 plugin, then LLVMFuzzerTestOneInput on byte strings drawn here
// (each op, gamma/beta, eps, rows, misalignment and row stride from the
// header bytes; payload floats N(0,1) + 3, whose bits the layout reads as x,
// dy, gamma, beta and the residual). examples/plugin/v2_norms.c's kernels
// (fused adds with their residual, a row stride on rmsnorm.strided) run to the
// end; three broken twins abort with their findings and problem files. Each runs in a child (a gtest death test: the entry point
// aborts on a finding, and a plugin loaded into a process stays there).
// The seed is printed and taken from NORMCHECK_SEED (test_seed.h).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "test_seed.h"

extern "C" int LLVMFuzzerInitialize(int*, char***);
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

constexpr int kInputs = 300;

// Loads `plugin` and runs kInputs inputs from `seed`; returns normally when no
// kernel failed (the entry point aborts otherwise).
void run_inputs(const char* plugin, uint64_t seed) {
  setenv("NORMCHECK_FUZZ_PLUGIN", plugin, 1);
  LLVMFuzzerInitialize(nullptr, nullptr);
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal;
  for (int i = 0; i < kInputs; ++i) {
    std::vector<uint8_t> bytes(4);
    for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
    bytes[2] = static_cast<uint8_t>(rng() % 200);  // cols - 1 < 200: quick cases
    bytes[3] = 0;
    for (int f = 0; f < 64; ++f) {
      const float v = 3 + normal(rng);
      uint8_t b[4];
      std::memcpy(b, &v, 4);
      bytes.insert(bytes.end(), b, b + 4);
    }
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
  }
}

TEST(LibFuzzerEntry, Version2PluginRunsEveryInput) {
  const uint64_t seed = normcheck::test::test_seed();
  EXPECT_EXIT({ run_inputs(NORMCHECK_V2_NORMS, seed); std::exit(0); }, ::testing::ExitedWithCode(0), "");
}

// Negative controls, one per part of a spec the bytes must carry: the
// rounding policy (the Llama RMSNorm that rounds once where its spec rounds at
// xhat), the residual (the fused add that normalizes the float sum where its
// spec rounds the sum to bf16 first) and the row stride (the strided RMSNorm
// that reads and writes its rows cols apart: the padding it writes is an
// out-of-bounds write). Each aborts with its finding and a problem file that
// carries the spec.
TEST(LibFuzzerEntry, BrokenVersion2TwinsAbortWithTheirFindings) {
  const uint64_t seed = normcheck::test::test_seed();
  EXPECT_DEATH({ run_inputs(NORMCHECK_V2_LLAMA_ROUNDS_ONCE, seed); std::exit(0); },
               "normcheck_fuzzer: broken.llama_rounds_once fails: y\\[row [0-9]+, col [0-9]+\\](.|\n)*nc.spec");
  EXPECT_DEATH({ run_inputs(NORMCHECK_V2_STORED_SUM_READS_FLOAT_SUM, seed); std::exit(0); },
               "normcheck_fuzzer: broken.stored_sum_reads_float_sum fails(.|\n)*nc.residual");
  EXPECT_DEATH({ run_inputs(NORMCHECK_V2_STRIDE_IGNORED, seed); std::exit(0); },
               "normcheck_fuzzer: broken.stride_ignored fails(.|\n)*nc.row_stride");
}

}  // namespace
