// Runs the real `normcheck` binary (its path comes from CMake: see
// normcheck_uses_cli in cmake/NormcheckTesting.cmake) and captures its exit code,
// stdout and stderr, for the end-to-end tests of every subcommand.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>

namespace normcheck::test_support {

struct CliRun {
  int exit_code = -1;  // -1: killed by a signal (a crash)
  std::string out, err;
};

inline std::string read_whole_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A directory of this test process's own, for inputs and captured output:
// made on first use, removed with everything in it when the process exits
// normally (a crashed test leaves it behind to be looked at).
inline const std::filesystem::path& scratch_dir() {
  struct Scratch {
    Scratch() : path(std::filesystem::temp_directory_path() / ("normcheck_test_" + std::to_string(::getpid()))) {
      std::filesystem::create_directories(path);
    }
    ~Scratch() {
      std::error_code ignored;  // nothing to report to at exit; a leftover directory is harmless
      std::filesystem::remove_all(path, ignored);
    }
    std::filesystem::path path;
  };
  static const Scratch scratch;
  return scratch.path;
}

// `command` run as written by /bin/sh -c (std::system), its output captured;
// a line the shell cannot parse exits 2 with the shell's message uncaptured.
inline CliRun run_shell(const std::string& command) {
  const auto dir = scratch_dir();
  std::filesystem::remove(dir / "out");  // not the previous run's, should this one not start
  std::filesystem::remove(dir / "err");
  const std::string full =
      "{ " + command + "\n} >" + (dir / "out").string() + " 2>" + (dir / "err").string();
  const int status = std::system(full.c_str());
  CliRun run;
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.out = read_whole_file(dir / "out");
  run.err = read_whole_file(dir / "err");
  return run;
}

// `args` is passed through the shell as written after the binary's path.
inline CliRun run_normcheck(const std::string& args) {
  return run_shell(std::string(NORMCHECK_BINARY) + " " + args);
}

}  // namespace normcheck::test_support
