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

// `args` is passed through the shell as written after the binary's path.
inline CliRun run_normcheck(const std::string& args) {
  const auto dir = scratch_dir();
  const std::string command = std::string(NORMCHECK_BINARY) + " " + args + " >" + (dir / "out").string() +
                              " 2>" + (dir / "err").string();
  const int status = std::system(command.c_str());
  CliRun run;
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.out = read_whole_file(dir / "out");
  run.err = read_whole_file(dir / "err");
  return run;
}

}  // namespace normcheck::test_support
