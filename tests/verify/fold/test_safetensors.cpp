// safetensors reading and writing: a round trip keeps every tensor's bytes,
// and each way a file can be bad is refused with its reason.
#include <gtest/gtest.h>

#include <chrono>

#include "fold/safetensors.h"
#include "fold_files.h"

namespace nf = normcheck::fold;
namespace ft = normcheck::fold_test;
using normcheck::DType;

namespace {

void expect_refused(const std::string& bytes, const std::string& reason) {
  try {
    nf::parse_safetensors(bytes, "test.safetensors");
    ADD_FAILURE() << "accepted; expected: " << reason;
  } catch (const nf::SafetensorsError& e) {
    EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
  }
}

// 2 x 2 F32 "a" at [0, 16) and 3 F16 "b" at [16, 22).
const std::string kData(22, '\x01');

}  // namespace

TEST(Safetensors, RoundTripKeepsBytesShapesDtypesAndMetadata) {
  for (DType t : {DType::f32, DType::bf16, DType::f16}) {
    const nf::TensorFile f = ft::pre_ln_block(t, 6, 4, 1);
    const std::string bytes = nf::serialize_safetensors(f);
    uint64_t n = 0;
    std::memcpy(&n, bytes.data(), 8);
    EXPECT_EQ(n % 8, 0u);  // header padded to 8 bytes
    const nf::TensorFile g = nf::parse_safetensors(bytes, "round trip");
    ASSERT_EQ(g.tensors.size(), f.tensors.size());
    for (std::size_t i = 0; i < f.tensors.size(); ++i) {
      EXPECT_EQ(g.tensors[i].name, f.tensors[i].name);
      EXPECT_EQ(g.tensors[i].dtype, f.tensors[i].dtype);
      EXPECT_EQ(g.tensors[i].shape, f.tensors[i].shape);
      EXPECT_EQ(g.tensors[i].bytes, f.tensors[i].bytes);
    }
    EXPECT_EQ(g.metadata.at("format"), "pt");
    // Values: bits -> double -> bits is the identity.
    for (const auto& tensor : g.tensors) {
      if (tensor.dtype == "I64") continue;
      nf::Tensor copy = tensor;
      nf::set_tensor_values(copy, nf::tensor_values(tensor));
      EXPECT_EQ(copy.bytes, tensor.bytes);
    }
  }
}

TEST(Safetensors, AcceptsAWellFormedHandWrittenFile) {
  const std::string header =
      R"({"a":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},"b":{"dtype":"F16","shape":[3],"data_offsets":[16,22]}})";
  const nf::TensorFile f = nf::parse_safetensors(ft::raw_file(header, kData), "ok");
  ASSERT_EQ(f.tensors.size(), 2u);
  EXPECT_EQ(f.tensors[1].shape, std::vector<int64_t>{3});
}

TEST(Safetensors, RefusesTruncatedFiles) {
  expect_refused("abc", "truncated: 3 bytes");
  const std::string header = R"({"a":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}})";
  const std::string whole = ft::raw_file(header, std::string(16, '\0'));
  expect_refused(whole.substr(0, 8 + header.size() - 5), "truncated: the header says");
  expect_refused(whole.substr(0, whole.size() - 3), "past the data");
}

TEST(Safetensors, RefusesWrongOffsetsOverlapsAndGaps) {
  expect_refused(ft::raw_file(R"({"a":{"dtype":"F32","shape":[2,2],"data_offsets":[16,0]}})", kData), "run backwards");
  expect_refused(ft::raw_file(R"({"a":{"dtype":"F32","shape":[2,2],"data_offsets":[8,24]}})", kData), "past the data");
  expect_refused(ft::raw_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                              std::string(12, '\0')),
                 "overlap");
  expect_refused(ft::raw_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[12,20]}})",
                              std::string(20, '\0')),
                 "bytes 8..12 of the data belong to no tensor");
  expect_refused(ft::raw_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", std::string(12, '\0')),
                 "bytes 8..12 of the data belong to no tensor");
}

TEST(Safetensors, RefusesAHeaderThatLiesAboutShapesOrDtypes) {
  // F32 [2, 3] needs 24 bytes; the offsets give 16.
  expect_refused(ft::raw_file(R"({"a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,16]}})", std::string(16, '\0')),
                 "needs 24 bytes, data_offsets give 16");
  // Says F16 for 16 bytes of 4 elements: F16 x 4 is 8 bytes.
  expect_refused(ft::raw_file(R"({"a":{"dtype":"F16","shape":[4],"data_offsets":[0,16]}})", std::string(16, '\0')),
                 "needs 8 bytes");
  expect_refused(ft::raw_file(R"({"a":{"dtype":"F33","shape":[4],"data_offsets":[0,16]}})", std::string(16, '\0')),
                 "unknown dtype 'F33'");
  expect_refused(ft::raw_file(R"({"a":{"dtype":"F32","shape":[-4],"data_offsets":[0,16]}})", std::string(16, '\0')),
                 "not a non-negative integer");
  expect_refused(ft::raw_file(R"({"a":{"dtype":"F32","shape":[4]}})", std::string(16, '\0')), "has no data_offsets");
}

TEST(Safetensors, RefusesHeadersThatAreNotWellFormedJsonObjects) {
  expect_refused(ft::raw_file("{not json", ""), "not valid JSON");
  expect_refused(ft::raw_file("[1,2]", ""), "not a JSON object");
  expect_refused(ft::raw_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
                              std::string(4, '\0')),
                 "the key \"a\" is given twice");
  std::string huge(8, '\0');
  const uint64_t n = uint64_t{1} << 40;
  std::memcpy(huge.data(), &n, 8);
  expect_refused(huge, "beyond the 100 MB limit");
}

// A shape nested tens of thousands of levels deep: the parse is bounded by the
// depth limit, and no message serializes the value (dump() recursed once per
// level and overflowed the stack).
TEST(Safetensors, RefusesDeepNestingWithoutSerializingIt) {
  const int depth = 100'000;
  const std::string shape = std::string(depth, '[') + std::string(depth, ']');
  expect_refused(ft::raw_file(R"({"a":{"dtype":"F32","shape":[)" + shape + R"(],"data_offsets":[0,4]}})", std::string(4, '\0')),
                 "nested more than 64 levels deep");
  // within the limit, a shape element that is an array is named by its type
  expect_refused(ft::raw_file(R"({"a":{"dtype":"F32","shape":[[[1]]],"data_offsets":[0,4]}})", std::string(4, '\0')),
                 "tensor 'a': shape holds an array of 1 element, not a non-negative integer");
}

// Duplicate detection is linear: 100,000 empty tensors (a 6 MB header, which
// the quadratic check took over 60 s on) parse in well under the time a test has.
TEST(Safetensors, ManyTensorsParseInLinearTime) {
  std::string header = "{";
  const int n = 100'000;
  for (int i = 0; i < n; ++i)
    header += (i ? "," : "") + std::string("\"t") + std::to_string(i) + R"(":{"dtype":"F32","shape":[0],"data_offsets":[0,0]})";
  header += "}";
  const auto start = std::chrono::steady_clock::now();
  const nf::TensorFile f = nf::parse_safetensors(ft::raw_file(header, ""), "many");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(f.tensors.size(), static_cast<std::size_t>(n));
  EXPECT_LT(seconds, 30.0);  // about 0.5 s in a release build
}

// As strict as the reference implementation: no byte order mark, no key given
// twice at any level, a shape's byte count checked for overflow first and the
// tensor named.
TEST(Safetensors, RefusesWhatTheReferenceImplementationRefuses) {
  const std::string one = R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";
  expect_refused(ft::raw_file("\xef\xbb\xbf" + one, std::string(4, '\0')), "byte order mark");
  expect_refused(ft::raw_file(R"({"a":{"dtype":"F32","dtype":"F16","shape":[1],"data_offsets":[0,4]}})", std::string(4, '\0')),
                 "the key \"dtype\" is given twice");
  expect_refused(ft::raw_file(R"({"__metadata__":{"k":"1","k":"2"},"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
                              std::string(4, '\0')),
                 "the key \"k\" is given twice");
  // 2^62 x 4 elements of 4 bytes: 2^66 bytes wraps to 0, which empty data_offsets would match
  expect_refused(ft::raw_file(R"({"big":{"dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,0]}})", ""),
                 "tensor 'big': shape [4611686018427387904, 4] holds more bytes than 2^64");
  // the message names the shape bounded, however long it is
  std::string ones;
  for (int i = 0; i < 1'000'000; ++i) ones += ",1";
  expect_refused(ft::raw_file(R"({"big":{"dtype":"F32","shape":[4611686018427387904,4)" + ones + R"(],"data_offsets":[0,0]}})", ""),
                 "shape [4611686018427387904, 4, 1, 1, 1, 1, 1, 1, ... (1000002 entries)] holds more bytes than 2^64");
}

// Names and values from the file reach a message escaped and capped.
TEST(Safetensors, MessagesQuoteNamesEscapedAndCapped) {
  try {
    nf::parse_safetensors(ft::raw_file("{\"" + std::string("\\u001b]0;title\\u0007") + std::string(100'000, 'n') +
                                           R"(":{"dtype":"X","shape":[1],"data_offsets":[0,4]}})",
                                       std::string(4, '\0')),
                          "test.safetensors");
    ADD_FAILURE() << "accepted";
  } catch (const nf::SafetensorsError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.find('\x1b'), std::string::npos);
    EXPECT_EQ(what.find('\x07'), std::string::npos);
    EXPECT_NE(what.find("\\x1b]0;title\\x07"), std::string::npos) << what;
    EXPECT_LT(what.size(), 400u) << what;
  }
}
