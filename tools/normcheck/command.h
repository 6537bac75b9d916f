// The subcommands of `normcheck`. Each lives in its own file and adds itself
// to the CLI11 app; main.cpp holds the one ordered list of them.
#pragma once

#include <filesystem>
#include <functional>
#include <stdexcept>

#include <CLI/CLI.hpp>

namespace normcheck::cli {

// What main runs when the subcommand was chosen; returns the exit code
// (0 all good, 1 a finding, 2 bad usage or input).
using Action = std::function<int()>;

// Thrown for bad input found after parsing (unreadable file, bad token, unknown
// kernel name, ...): main prints "normcheck: <what>" on stderr and exits 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline constexpr int kExitOk = 0;
inline constexpr int kExitFinding = 1;
inline constexpr int kExitUsage = 2;

// report::prepare_report_folder(out) (reports/writers.h), a folder that cannot
// be made (a file in the way) a UsageError: `report --out` and `judge --report`.
std::filesystem::path report_folder_or_usage(const std::filesystem::path& out);  // report.cpp
// report::check_report_folder(out), its failure a UsageError: the check alone, nothing made.
void check_report_folder_or_usage(const std::filesystem::path& out);  // report.cpp

void add_list_command(CLI::App& app, Action& action);    // list.cpp
void add_check_command(CLI::App& app, Action& action);   // check.cpp
void add_bench_command(CLI::App& app, Action& action);   // bench.cpp
void add_claims_command(CLI::App& app, Action& action);  // claims.cpp
void add_fold_command(CLI::App& app, Action& action);    // fold.cpp
void add_report_command(CLI::App& app, Action& action);  // report.cpp
void add_fuzz_command(CLI::App& app, Action& action);    // fuzz.cpp
void add_identify_command(CLI::App& app, Action& action);  // identify.cpp
void add_gen_command(CLI::App& app, Action& action);       // gen.cpp
void add_judge_command(CLI::App& app, Action& action);     // judge.cpp
void add_accuracy_command(CLI::App& app, Action& action);  // accuracy.cpp

}  // namespace normcheck::cli
