// tools/normcheck/json_text.h: what every --json writer passes its document
// through, so that a path or a plugin's text that is not UTF-8 never makes
// nlohmann::json's dump() throw after a run.

#include <random>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "json_text.h"
#include "test_seed.h"

namespace normcheck::cli {
namespace {

// Shows: well-formed UTF-8 (1 to 4 bytes, up to U+10FFFF) is kept byte for byte.
TEST(JsonText, KeepsValidUtf8) {
  for (const std::string s : {"", "plain ascii", "caf\xc3\xa9", "\xe2\x82\xac", "\xed\x9f\xbf", "\xf0\x9f\x98\x80",
                              "\xf4\x8f\xbf\xbf"})
    EXPECT_EQ(json_text(s), s);
}

// Shows: each byte outside a well-formed sequence becomes the text \xNN:
// a lone continuation byte, overlong forms, a surrogate, beyond U+10FFFF,
// bytes that never occur, a sequence cut short (the valid bytes after it stay).
TEST(JsonText, EscapesEachByteThatIsNotUtf8) {
  EXPECT_EQ(json_text("a\xff" "b"), "a\\xffb");
  EXPECT_EQ(json_text("\x80"), "\\x80");
  EXPECT_EQ(json_text("\xc0\xaf"), "\\xc0\\xaf");
  EXPECT_EQ(json_text("\xe0\x80\xaf"), "\\xe0\\x80\\xaf");
  EXPECT_EQ(json_text("\xed\xa0\x80"), "\\xed\\xa0\\x80");
  EXPECT_EQ(json_text("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");
  EXPECT_EQ(json_text("\xf5"), "\\xf5");
  EXPECT_EQ(json_text("\xe2\x82" "x"), "\\xe2\\x82x");
}

// Shows: json_safe reaches every string of a document, keys included, and
// leaves the rest alone; on random bytes the result always dumps.
TEST(JsonText, SafeDocumentsAlwaysDump) {
  const nlohmann::json doc = {{"path", "/tmp/\xfe.so"}, {"list", {"ok", "\xff", 3}}, {"k\xff", true}};
  EXPECT_THROW((void)doc.dump(), nlohmann::json::type_error);
  const nlohmann::json safe = json_safe(doc);
  EXPECT_EQ(safe["path"], "/tmp/\\xfe.so");
  EXPECT_EQ(safe["list"], nlohmann::json({"ok", "\\xff", 3}));
  EXPECT_EQ(safe["k\\xff"], true);

  std::mt19937_64 rng(normcheck::test::test_seed());
  for (int i = 0; i < 2000; ++i) {
    std::string s(rng() % 12, '\0');
    for (char& c : s) c = static_cast<char>(rng());
    EXPECT_NO_THROW((void)json_safe(nlohmann::json(s)).dump());
  }
}

}  // namespace
}  // namespace normcheck::cli
