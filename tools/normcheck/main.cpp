// normcheck: one executable, one subcommand per file (see command.h).
// Exit codes everywhere: 0 all good, 1 a finding, 2 bad usage or bad input.
#include <cstdio>
#include <exception>
#include <iostream>

#include "command.h"

int main(int argc, char** argv) {
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
