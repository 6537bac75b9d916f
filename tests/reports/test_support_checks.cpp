// The checkers the report tests rely on must be able to fail: the schema
// validator rejects documents that break the real schema, the XML parser
// rejects malformed XML, and the PNG decoder reads back pixels it was given.
#include <zlib.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "json_schema_subset.h"
#include "png_decode.h"
#include "xml_parse.h"

namespace normcheck::test_support {
namespace {

using nlohmann::json;

json schema() {
  std::ifstream in(NORMCHECK_RESULTS_SCHEMA);
  return json::parse(in);
}

// The smallest document the schema accepts.
json minimal_results() {
  return json::parse(R"({"schema": "normcheck-report", "schema_version": 3, "seed": 1, "quick": true,
    "started_utc": "2026-01-01T00:00:00Z", "seconds": 1.5, "simd_target": "AVX2",
    "workload": {"lengths": [3], "rows_per_family": 1, "eps": [1e-5, 0]},
    "timings": {"accuracy_seconds": 1, "fuzz_seconds": 0, "claims_seconds": 0, "bench_seconds": 0},
    "kernels": [], "fuzz": null, "claims": [], "bench": null, "baseline": null})");
}

TEST(SchemaValidator, AcceptsAValidDocument) { EXPECT_TRUE(validate(minimal_results(), schema()).empty()); }

TEST(SchemaValidator, RejectsBrokenDocuments) {
  json missing = minimal_results();
  missing.erase("kernels");
  EXPECT_FALSE(validate(missing, schema()).empty());
  json wrong_type = minimal_results();
  wrong_type["seed"] = "one";
  EXPECT_FALSE(validate(wrong_type, schema()).empty());
  json wrong_version = minimal_results();
  wrong_version["schema_version"] = 2;  // the previous version
  EXPECT_FALSE(validate(wrong_version, schema()).empty());
  json bad_claim = minimal_results();
  bad_claim["claims"] = json::parse(R"([{"id": "S1", "verdict": "MAYBE", "figure": "", "source": "", "title": "",
                                        "explanation": "", "seconds": 0, "series": []}])");
  const auto errors = validate(bad_claim, schema());
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("/claims/0/verdict"), std::string::npos) << errors[0];
}

TEST(SchemaValidator, RefusesKeywordsItWouldIgnore) {
  EXPECT_THROW(validate(json(1), json::parse(R"({"minimum": 2})")), std::invalid_argument);
}

TEST(XmlParser, ReadsElementsAttributesAndEntities) {
  const auto root = parse_xml(
      "<?xml version=\"1.0\"?>\n<a x=\"1 &amp; 2\"><b/><b>t&lt;u</b><c y='q'></c></a>\n");
  EXPECT_EQ(root.name, "a");
  EXPECT_EQ(root.attributes.at("x"), "1 & 2");
  ASSERT_EQ(root.all("b").size(), 2u);
  EXPECT_EQ(root.all("b")[1]->text, "t<u");
}

TEST(XmlParser, RejectsMalformedXml) {
  for (const char* bad : {"<a><b></a>", "<a>", "<a x=1></a>", "<a>&bogus;</a>", "<a></a><b/>", "<a x='1' x='2'/>"})
    EXPECT_THROW(parse_xml(bad), std::runtime_error) << bad;
}

// A PNG of 3 x 2 pixels, colour type 2, each row with another filter.
std::string tiny_png() {
  const unsigned char rows[2][1 + 9] = {{0, 255, 0, 0, 0, 255, 0, 0, 0, 255},
                                        {2, 0, 0, 0, 10, 10, 10, 255, 255, 0}};  // up: adds the row above
  uLongf size = compressBound(sizeof rows);
  std::string z(size, '\0');
  compress(reinterpret_cast<Bytef*>(z.data()), &size, &rows[0][0], sizeof rows);
  z.resize(size);
  const auto chunk = [](const std::string& type, const std::string& data) {
    std::string c;
    for (int s = 24; s >= 0; s -= 8) c += static_cast<char>((data.size() >> s) & 255);
    c += type + data;
    const uLong crc = crc32(crc32(0, nullptr, 0), reinterpret_cast<const Bytef*>(type.data() + 0), 4);
    const uLong full = crc32(crc, reinterpret_cast<const Bytef*>(data.data()), data.size());
    for (int s = 24; s >= 0; s -= 8) c += static_cast<char>((full >> s) & 255);
    return c;
  };
  const std::string ihdr{0, 0, 0, 3, 0, 0, 0, 2, 8, 2, 0, 0, 0};
  return std::string("\x89PNG\r\n\x1a\n", 8) + chunk("IHDR", ihdr) + chunk("IDAT", z) + chunk("IEND", "");
}

TEST(PngDecoder, ReadsBackThePixels) {
  const Image img = decode_png(tiny_png());
  ASSERT_EQ(img.width, 3);
  ASSERT_EQ(img.height, 2);
  EXPECT_EQ(img.at(0, 0)[0], 255);
  EXPECT_EQ(img.at(2, 0)[2], 255);
  EXPECT_EQ(img.at(0, 1)[0], 255) << "up filter: 0 + 255";
  EXPECT_EQ(img.at(1, 1)[0], 10) << "up filter: 10 + 0";
  EXPECT_EQ(img.at(1, 1)[1], 9) << "up filter: (10 + 255) mod 256";
  EXPECT_THROW(decode_png("not a png"), std::runtime_error);
}

}  // namespace
}  // namespace normcheck::test_support
