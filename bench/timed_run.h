// One run of another program, timed on the wall clock from its start to its
// exit, with what it printed. normcheck_fuzz_throughput times whole
// `normcheck fuzz` processes this way, so that both builds are measured through
// their command lines, whatever their insides.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace normcheck::bench {

struct TimedRun {
  int exit_code = -1;  // -1: ended by a signal
  int signal = 0;      // the signal that ended it
  double seconds = 0;  // from posix_spawn to waitpid's return
  std::string out, err;
};

// Runs argv[0] (a path) with argv[1..], stdin from /dev/null, stdout and
// stderr into files under `scratch` (read back once it exits, so no pipe can
// fill and stall it). Throws std::runtime_error when it cannot be started.
TimedRun run_timed(const std::vector<std::string>& argv, const std::filesystem::path& scratch);

}  // namespace normcheck::bench
