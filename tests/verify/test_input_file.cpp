// read_input_file: regular files only (a FIFO, a device, a directory refused
// at once, never blocking or read), the size limit checked before reading,
// each refusal naming the file.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "normcheck/input_file.h"

namespace normcheck {
namespace {

namespace fs = std::filesystem;

class ReadInputFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("normcheck_input_test_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  // The message read_input_file throws for `path`, or "" when it reads it.
  static std::string refusal(const fs::path& path, uint64_t max_bytes = 1 << 20) {
    try {
      read_input_file(path, max_bytes);
    } catch (const InputFileError& e) {
      return e.what();
    }
    return "";
  }
  fs::path dir_;
};

TEST_F(ReadInputFile, ReadsARegularFileAndASymlinkToOne) {
  std::ofstream(dir_ / "a.txt", std::ios::binary) << std::string("1 2\0 3", 6);
  fs::create_symlink(dir_ / "a.txt", dir_ / "link.txt");
  EXPECT_EQ(read_input_file(dir_ / "a.txt", 6), std::string("1 2\0 3", 6));
  EXPECT_EQ(read_input_file(dir_ / "link.txt", 6), std::string("1 2\0 3", 6));
  std::ofstream(dir_ / "empty.txt");
  EXPECT_EQ(read_input_file(dir_ / "empty.txt", 0), "");
}

// A FIFO blocked std::ifstream's open() until a writer came: it is refused at once.
TEST_F(ReadInputFile, RefusesAFifoWithoutBlocking) {
  ASSERT_EQ(::mkfifo((dir_ / "fifo").c_str(), 0600), 0);
  fs::create_symlink(dir_ / "fifo", dir_ / "to_fifo");
  const auto start = std::chrono::steady_clock::now();
  for (const char* name : {"fifo", "to_fifo"}) {
    const std::string why = refusal(dir_ / name);
    EXPECT_NE(why.find((dir_ / name).string() + ": a FIFO, not a regular file"), std::string::npos) << why;
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

// /dev/zero was read whole (until memory ran out): a device is refused unread.
TEST_F(ReadInputFile, RefusesDevicesAndDirectories) {
  EXPECT_NE(refusal("/dev/zero").find("/dev/zero: a character device, not a regular file"), std::string::npos);
  EXPECT_NE(refusal(dir_).find(dir_.string() + ": a directory"), std::string::npos) << refusal(dir_);
  EXPECT_NE(refusal(dir_ / "absent").find("absent: cannot open for reading: No such file"), std::string::npos);
}

TEST_F(ReadInputFile, RefusesAFileAboveTheLimitBeforeReadingIt) {
  std::ofstream(dir_ / "big.txt") << std::string(1001, 'x');
  EXPECT_EQ(read_input_file(dir_ / "big.txt", 1001).size(), 1001u);
  const std::string why = refusal(dir_ / "big.txt", 1000);
  EXPECT_NE(why.find("big.txt: 1001 bytes, more than the 1000 bytes"), std::string::npos) << why;
}

TEST_F(ReadInputFile, RefusesAnUnreadableFileWithTheReason) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads every file";
  std::ofstream(dir_ / "secret.txt") << "1";
  fs::permissions(dir_ / "secret.txt", fs::perms::none);
  EXPECT_NE(refusal(dir_ / "secret.txt").find("secret.txt: cannot open for reading: Permission denied"),
            std::string::npos);
}

// A path's control bytes reach the message escaped.
TEST_F(ReadInputFile, NamesThePathEscaped) {
  const std::string why = refusal(dir_ / "a\x1b]0;x\x07");
  EXPECT_EQ(why.find('\x1b'), std::string::npos) << why;
  EXPECT_NE(why.find("a\\x1b]0;x\\x07"), std::string::npos) << why;
}

}  // namespace
}  // namespace normcheck
