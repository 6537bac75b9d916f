// excerpt() and escape_bytes(): what a message quotes of a file's bytes.
#include <gtest/gtest.h>

#include <string>

#include "normcheck/excerpt.h"

namespace normcheck {
namespace {

TEST(Excerpt, EscapesControlBytesAndBytesThatAreNotUtf8) {
  EXPECT_EQ(excerpt("plain text, é"), "plain text, é");
  EXPECT_EQ(excerpt("\x1b]0;title\x07"), "\\x1b]0;title\\x07");
  EXPECT_EQ(excerpt(std::string("a\0b\x7f\xff", 5)), "a\\x00b\\x7f\\xff");
  EXPECT_EQ(escape_bytes("tab\there\xc3", false), "tab\there\\xc3");  // json_text's form: controls kept
}

TEST(Excerpt, CapsAtACharacterBoundaryAndSaysTheLength) {
  EXPECT_EQ(excerpt(std::string(1'000'000, 'x'), 4), "xxxx... (1000000 bytes)");
  EXPECT_EQ(excerpt("ab\xc3\xa9z", 3), "ab... (5 bytes)");  // é is not cut in two
  EXPECT_EQ(excerpt("abc", 3), "abc");
}

}  // namespace
}  // namespace normcheck
