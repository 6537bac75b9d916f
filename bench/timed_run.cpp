#include "timed_run.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace normcheck::bench {
namespace {

std::string read_whole_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TimedRun run_timed(const std::vector<std::string>& argv, const std::filesystem::path& scratch) {
  const std::string out_path = (scratch / "stdout").string(), err_path = (scratch / "stderr").string();
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&files, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&files, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  TimedRun run;
  pid_t pid = 0;
  const auto begin = std::chrono::steady_clock::now();
  const int error = posix_spawn(&pid, args[0], &files, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&files);
  if (error != 0) throw std::runtime_error("cannot run " + argv[0] + ": " + std::strerror(error));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw std::runtime_error("waitpid on " + argv[0] + ": " + std::strerror(errno));
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  if (WIFEXITED(status))
    run.exit_code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status))
    run.signal = WTERMSIG(status);
  run.out = read_whole_file(out_path);
  run.err = read_whole_file(err_path);
  return run;
}

}  // namespace normcheck::bench
