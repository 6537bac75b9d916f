// normcheck: one executable, one subcommand per file (see command.h).
// Exit codes everywhere: 0 all good, 1 a finding, 2 bad usage or bad input.
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>

#include "command.h"

namespace {

// Set when main returns: its exit code is normcheck's.
std::atomic<bool> main_returned{false};

// A third-party library that calls exit() inside normcheck (libgomp, under
// oneDNN's rows, when it cannot start threads) must not choose the exit code:
// 1 would read as a finding. Any exit but main's return ends with 2, bad
// input or environment, after the library's own message.
void exit_not_chosen_by_a_library() {
  if (main_returned.load()) return;
  static constexpr char kMessage[] =
      "normcheck: a library called exit() inside normcheck (its reason, if it gave one, is above); "
      "normcheck exits 2\n";
  [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, kMessage, sizeof kMessage - 1);
  ::_exit(normcheck::cli::kExitUsage);
}

int run(int argc, char** argv) {
  using namespace normcheck::cli;
  CLI::App app{"normcheck: numerical verification of LayerNorm / RMSNorm kernels"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Help for every subcommand");

  Action action;
  // The one ordered list of subcommands.
  add_list_command(app, action);
  add_check_command(app, action);
  add_fuzz_command(app, action);
  add_identify_command(app, action);
  add_accuracy_command(app, action);
  add_gen_command(app, action);
  add_judge_command(app, action);
  add_bench_command(app, action);
  add_claims_command(app, action);
  add_fold_command(app, action);
  add_report_command(app, action);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);  // prints the message
    return kExitUsage;
  }
  try {
    return action();
  } catch (const UsageError& e) {
    std::cerr << "normcheck: " << e.what() << "\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "normcheck: error: " << e.what() << "\n";
    return kExitUsage;
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::atexit(exit_not_chosen_by_a_library);
  const int code = run(argc, argv);
  main_returned.store(true);
  return code;
}
