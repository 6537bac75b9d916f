// write_file_atomically: the file holds the new content whole, failures throw
// with the path and the OS reason, and no temporary file is left behind.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "normcheck/io.h"

namespace normcheck {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

int entries(const fs::path& dir) {
  int n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}

class WriteFileAtomically : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("normcheck_io_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(WriteFileAtomically, WritesAndReplacesWhole) {
  const fs::path p = dir_ / "out.json";
  write_file_atomically(p, "first version, longer than the second\n");
  EXPECT_EQ(read(p), "first version, longer than the second\n");
  write_file_atomically(p, std::string("se\0cond", 7));
  EXPECT_EQ(read(p), std::string("se\0cond", 7));
  write_file_atomically(p, "");
  EXPECT_EQ(read(p), "");
  EXPECT_EQ(entries(dir_), 1);  // no temporary left
}

TEST_F(WriteFileAtomically, MissingDirectoryThrowsWithPathAndReason) {
  const fs::path p = dir_ / "no_such_dir" / "out.txt";
  try {
    write_file_atomically(p, "x");
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(p.string()), std::string::npos) << what;
    EXPECT_NE(what.find("No such file or directory"), std::string::npos) << what;
  }
  EXPECT_EQ(entries(dir_), 0);
}

// The rename step fails when the target is a non-empty directory: the old
// target survives and the temporary is removed.
TEST_F(WriteFileAtomically, FailedRenameLeavesNoTemporary) {
  const fs::path p = dir_ / "target";
  fs::create_directories(p / "inside");
  EXPECT_THROW(write_file_atomically(p, "x"), std::runtime_error);
  EXPECT_TRUE(fs::is_directory(p / "inside"));
  EXPECT_EQ(entries(dir_), 1);
}

TEST_F(WriteFileAtomically, RelativePathWritesInTheWorkingDirectory) {
  const fs::path before = fs::current_path();
  fs::current_path(dir_);
  write_file_atomically("plain.txt", "relative");
  fs::current_path(before);
  EXPECT_EQ(read(dir_ / "plain.txt"), "relative");
  EXPECT_EQ(entries(dir_), 1);
}

// The pid of a process that has ended (and been reaped).
pid_t dead_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  return child;
}

// A SIGKILLed writer leaves its temporary file; the next write into that
// directory removes it, and keeps a live process's and any other name.
TEST_F(WriteFileAtomically, RemovesTheTemporariesOfAKilledWriter) {
  const pid_t dead = dead_pid();
  const std::string stale = ".case-0001.finding.txt.tmp." + std::to_string(dead) + ".3.0";
  const std::string live = ".model.safetensors.tmp." + std::to_string(::getppid()) + ".0.0";
  const std::vector<std::string> kept = {live, ".x.tmp.12a.0.0", "x.tmp." + std::to_string(dead) + ".0.0",
                                         ".x.tmp." + std::to_string(dead) + ".0", "notes.txt"};
  for (const std::string& name : kept) std::ofstream(dir_ / name) << "x";
  std::ofstream(dir_ / stale) << "partial";
  write_file_atomically(dir_ / "out.txt", "whole");
  EXPECT_FALSE(fs::exists(dir_ / stale));
  for (const std::string& name : kept) EXPECT_TRUE(fs::exists(dir_ / name)) << name;
}

// SIGTERM (and SIGINT, SIGHUP) in the middle of writes: the process ends by
// the signal, and its temporary file is gone.
TEST_F(WriteFileAtomically, ASignalMidWriteLeavesNoTemporary) {
  for (int sig : {SIGTERM, SIGINT}) {
    const pid_t child = ::fork();
    if (child == 0) {
      const std::string big(64 << 20, 'x');
      for (;;) write_file_atomically(dir_ / "big.bin", big);
    }
    // the signal goes as soon as a temporary file exists (a loaded machine may take seconds)
    const auto has_temp = [&] {
      for (const auto& e : fs::directory_iterator(dir_))
        if (e.path().filename().string().find(".tmp.") != std::string::npos) return true;
      return false;
    };
    for (int waited = 0; !has_temp() && waited < 30'000; waited += 1) ::usleep(1000);
    ::kill(child, sig);
    int status = 0;
    ::waitpid(child, &status, 0);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == sig) << status;
    for (const auto& e : fs::directory_iterator(dir_))
      EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << e.path();
  }
}

}  // namespace
}  // namespace normcheck
