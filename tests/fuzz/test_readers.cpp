// The hostile-file suite for normcheck's readers (fuzz/libfuzzer/readers.h):
// structure-aware and random mutations of a valid input of each kind
// (safetensors, problem and row files, fold specs, baselines, gen's op specs
// and domains). Each mutant is read or refused, never anything else: no
// crash, no other exception, no hang (each read is timed), and a refusal
// names the input, is bounded and carries no raw control byte. The paths,
// interruptions and the CLI's exit codes are tests/tools/normcheck/test_hostile_paths.cpp's.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "../support/test_seed.h"
#include "fold/safetensors.h"
#include "libfuzzer/readers.h"
#include "normcheck/row_file.h"

namespace normcheck::fuzz {
namespace {

constexpr int kMutantsPerReader = 4000;

std::string safetensors_seed() {
  fold::TensorFile f;
  f.metadata = {{"format", "pt"}, {"normcheck.case", "3"}};
  fold::Tensor a{"ln.weight", "F32", {4}, {}}, b{"fc.weight", "BF16", {2, 4}, {}};
  fold::set_tensor_values(a, {1, 2, 3, 4});
  fold::set_tensor_values(b, {1, -1, 0.5, 2, 0, 3, -2, 1});
  f.tensors = {a, b};
  return fold::serialize_safetensors(f);
}

const std::vector<std::string>& seeds(Reader r) {
  static const std::vector<std::vector<std::string>> all = {
      {safetensors_seed()},
      {"# found on a kernel\n# nc.op layernorm_bwd\n# nc.dtype f32\n# nc.eps 0x1.4f8b58p-17\n# nc.misalign 3\n"
       "# nc.gamma 1 -0.5 2\n# nc.dy 0.5 inf -1\n1.5 -0 0x1p-149\n",
       "# nc.op rmsnorm_fwd\n# nc.spec rmsnorm fwd dtype=bf16 gamma=bf16\n# nc.dtype bf16\n# nc.row_stride 4\n1 2 3\n"},
      {"1, 2.5 -0x1p-3 nan\n# a comment\ninf 3\t4\n\n-inf,0\n"},
      {R"({"norms": [{"name": "blocks.0.ln_1", "kind": "layernorm", "placement": "pre_ln",
           "weight": "ln.weight", "bias": "ln.bias",
           "consumers": [{"weight": "q.weight", "bias": "q.bias"}, {"weight": "k.weight", "new_bias": "k.bias", "layout": "in_out"}]}],
          "centre_writers": [{"weight": "embed.weight", "axis": "columns"}]})"},
      {"# columns: kernel op output max_error_over_bound max_ulp\n# workload quick seed 20261121 simd_target AVX3\n"
       "layernorm_fwd.twopass layernorm_fwd y 0.25 1.5\nrmsnorm_fwd.hwy rmsnorm_fwd y inf 2\n"},
      {"rmsnorm fwd dtype=bf16 gamma=bf16 round=xhat:bf16", "rmsnorm fwd quant=int8 scale=token",
       "layernorm fwd add"},
      {"eps>=1e-6 d=1..65536", "eps>=1e-6"},
  };
  return all.at(static_cast<std::size_t>(r));
}

// ---- mutations ----

std::string random_bytes(std::mt19937_64& rng, std::size_t n) {
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

// The header of a safetensors file and the file with another header (its
// length field rewritten), so that mutations of the JSON reach the JSON
// reader; a length field a mutation broke counts up to the end of the file.
uint64_t header_length(const std::string& file) {
  if (file.size() < 8) return 0;
  uint64_t n = 0;
  std::memcpy(&n, file.data(), 8);
  return std::min<uint64_t>(n, file.size() - 8);
}
std::string header_of(const std::string& file) { return file.size() < 8 ? file : file.substr(8, header_length(file)); }
std::string with_header(const std::string& file, const std::string& header) {
  const uint64_t n = header.size();
  std::string out(8, '\0');
  std::memcpy(out.data(), &n, 8);
  return out + header + (file.size() < 8 ? std::string() : file.substr(8 + header_length(file)));
}

// A change that knows the format: what the issue's hostile inputs were made of.
std::string structured(std::string s, std::mt19937_64& rng, bool json) {
  const auto at = [&] { return s.empty() ? std::size_t{0} : static_cast<std::size_t>(rng() % (s.size() + 1)); };
  switch (rng() % 10) {
    case 0: {  // deep nesting
      const std::size_t depth = 1 + rng() % 5000;
      return s.insert(at(), std::string(depth, '[') + std::string(depth, ']'));
    }
    case 1: {  // a key or a line given twice
      const std::size_t a = at(), b = std::min(s.size(), a + 1 + rng() % 40);
      return s.insert(b, s.substr(a, b - a));
    }
    case 2: return s.insert(at(), std::string(1 + rng() % 40, '9'));                    // huge numbers
    case 3: return s.insert(at(), std::string("\xef\xbb\xbf\x1b]0;t\x07\0\r", 11));     // BOM, control bytes
    case 4: return s.insert(at(), std::string(257 + rng() % 4000, 'x'));                // a long token
    case 5: return s.insert(at(), json ? "\"k\":1," : " 1.5 ");                         // a stray entry or value
    case 6: {  // many entries
      std::string many;
      for (int i = 0, n = 1 + static_cast<int>(rng() % 3000); i < n; ++i)
        many += json ? "\"t" + std::to_string(i) + "\":{}," : "# nc.dy 1 2 3\n";
      return s.insert(at(), many);
    }
    case 7: {  // drop a line or a key
      const std::size_t a = at(), end = s.find(json ? ',' : '\n', a);
      return s.erase(a, end == std::string::npos ? std::string::npos : end - a);
    }
    case 8: return s.insert(at(), json ? "-1" : "nc.op ");
    default: return s.insert(at(), json ? "1e999" : "0x1p999");
  }
}

// A change that knows nothing: flips, inserts, deletions, repeats, truncation.
std::string random(std::string s, std::mt19937_64& rng) {
  const auto at = [&] { return s.empty() ? std::size_t{0} : static_cast<std::size_t>(rng() % s.size()); };
  switch (rng() % 6) {
    case 0:
      if (!s.empty()) s[at()] ^= static_cast<char>(1u << (rng() % 8));
      return s;
    case 1: return s.insert(at(), random_bytes(rng, 1 + rng() % 16));
    case 2: return s.erase(at(), 1 + rng() % 32);
    case 3: {
      const std::size_t a = at();
      const std::string chunk = s.substr(a, 1 + rng() % 16);
      for (int k = 0, n = static_cast<int>(rng() % 64); k < n; ++k) s.insert(a, chunk);
      return s;
    }
    case 4: return s.substr(0, at());
    default:
      if (!s.empty()) s[at()] = static_cast<char>(rng());
      return s;
  }
}

std::string mutant(Reader r, std::mt19937_64& rng) {
  const std::vector<std::string>& from = seeds(r);
  std::string s = from[rng() % from.size()];
  const bool json = r == Reader::safetensors || r == Reader::fold_spec;
  for (int k = 0, n = 1 + static_cast<int>(rng() % 3); k < n; ++k) {
    if (r == Reader::safetensors && rng() % 4 != 0) {
      s = with_header(s, rng() % 2 ? structured(header_of(s), rng, true) : random(header_of(s), rng));
    } else {
      s = rng() % 2 ? structured(s, rng, json) : random(s, rng);
    }
  }
  return s;
}

// ---- the expectations ----

void expect_read_or_refused(Reader r, const std::string& input, double& slowest) {
  const auto start = std::chrono::steady_clock::now();
  std::string why;
  try {
    why = read_as(r, input);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "reader " << static_cast<int>(r) << " threw " << e.what() << " on " << testing::PrintToString(input.substr(0, 200));
    return;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  slowest = std::max(slowest, seconds);
  EXPECT_LT(seconds, 5.0) << "reader " << static_cast<int>(r) << " on " << input.size() << " bytes";
  if (why.empty()) return;
  EXPECT_EQ(why.rfind(std::string(kSource), 0), 0u) << why.substr(0, 300);
  EXPECT_LT(why.size(), 2048u) << why.substr(0, 300);
  for (const char c : why)
    if ((static_cast<unsigned char>(c) < 0x20 && c != '\n') || c == 0x7f) {
      ADD_FAILURE() << "reader " << static_cast<int>(r) << ": a raw control byte in " << testing::PrintToString(why.substr(0, 300));
      break;
    }
}

TEST(HostileReaders, TheSeedsAreRead) {
  for (int r = 0; r < kReaders; ++r)
    for (const std::string& s : seeds(static_cast<Reader>(r)))
      EXPECT_EQ(read_as(static_cast<Reader>(r), s), "") << "reader " << r << ": " << s;
}

TEST(HostileReaders, MutantsAreReadOrRefusedWithABoundedEscapedMessage) {
  std::mt19937_64 rng(test::fixed_seed(43));
  for (int r = 0; r < kReaders; ++r) {
    double slowest = 0;
    for (int i = 0; i < kMutantsPerReader && !HasFailure(); ++i) expect_read_or_refused(static_cast<Reader>(r), mutant(static_cast<Reader>(r), rng), slowest);
    std::cout << "reader " << r << ": " << kMutantsPerReader << " mutants, slowest " << slowest << " s\n";
  }
}

// The inputs of issue 43, each refused as bad input with a bounded message.
TEST(HostileReaders, TheIssuesInputsAreRefused) {
  double slowest = 0;
  const std::string deep = std::string(65'000, '[') + std::string(65'000, ']');
  const std::string st = safetensors_seed();
  std::string many_ones;  // 3 million elements: the whole value was a 6 MB message
  for (int i = 0; i < 3'000'000; ++i) many_ones += "1,";
  for (const auto& [r, input] : std::vector<std::pair<Reader, std::string>>{
           {Reader::safetensors, with_header(st, R"({"a":{"dtype":"F32","shape":)" + deep + R"(,"data_offsets":[0,4]}})")},
           {Reader::safetensors, with_header(st, "\xef\xbb\xbf" + header_of(st))},
           {Reader::fold_spec, R"({"norms":[)" + deep + "]}"},
           {Reader::fold_spec, R"({"norms":[[)" + many_ones + "1]]}"},
           {Reader::problem_file, "# nc.misalign 1.5\n# nc.op layernorm_fwd\n1 2\n"},
           {Reader::row_file, "1 2 " + std::string(16 << 20, '7') + "x\n"},
           {Reader::row_file, "1 \x1b]0;title\x07\n"}}) {
    EXPECT_NE(read_as(r, input), "") << static_cast<int>(r);
    expect_read_or_refused(r, input, slowest);
  }
}

}  // namespace
}  // namespace normcheck::fuzz
