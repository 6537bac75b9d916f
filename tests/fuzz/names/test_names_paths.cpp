// A plugin's kernel names are data: `normcheck fuzz` on kernels named like
// paths or like shell syntax (names_plugin.c) saves every finding directly
// inside --corpus, prints replay commands that a POSIX shell runs as the
// replay and nothing else, writes --json whatever bytes a path holds, and
// resolves relative paths before a plugin's constructor can chdir().
// Every fuzz run is short (--cases 50, fixed seed): each kernel is wrong on
// every problem, so its finding comes with the first case.

#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "normcheck_cli.h"

namespace normcheck {
namespace {

namespace fs = std::filesystem;

using test_support::CliRun;
using test_support::read_whole_file;
using test_support::run_shell;
using test_support::scratch_dir;

// `s` as one word of a POSIX shell (the test's own quoting, not normcheck's).
std::string sq(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string normcheck_command(const std::string& args) { return sq(NORMCHECK_BINARY) + " " + args; }

// A fresh directory of the scratch area.
fs::path fresh_dir(const std::string& name) {
  const fs::path dir = scratch_dir() / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::vector<std::string> entries(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  return names;
}

// The lines of `text` that start with `prefix`, without it.
std::vector<std::string> lines_after(const std::string& text, const std::string& prefix) {
  std::vector<std::string> found;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(prefix, 0) == 0) found.push_back(line.substr(prefix.size()));
  return found;
}

const std::string kLongName = "long." + std::string(295, 'x');  // names_plugin.c's 300-byte name

// Shows: names with '/', '../' and 300 bytes (over NAME_MAX) give their
// findings (exit 1, not 2); each is saved directly inside --corpus under a name
// of [A-Za-z0-9._-] alone, nothing is written beside the corpus, the file
// names the real kernel (the next run replays it from the corpus: the problem
// file's reader gives the name back), and the JSON's reproduce command replays it.
TEST(CliNames, PathLikeNamesAreSavedInsideTheCorpus) {
  const fs::path dir = fresh_dir("paths");
  const fs::path corpus = dir / "corpus";
  const std::string fuzz = normcheck_command("fuzz --plugin " + sq(NAMES_PATHS_PLUGIN) +
                                             " --seed 7 --json --corpus " + sq(corpus.string()));
  const CliRun run = run_shell(fuzz + " --cases 50");
  ASSERT_EQ(run.exit_code, 1) << run.err;
  const auto doc = nlohmann::json::parse(run.out);
  const std::set<std::string> expected = {"a/b", "../escape", kLongName};
  std::set<std::string> kernels;
  for (const auto& f : doc["findings"]) {
    const std::string kernel = f["kernel"].get<std::string>();
    kernels.insert(kernel);
    EXPECT_EQ(f["label"], "accuracy") << kernel;
    const fs::path input = f["input"].get<std::string>();
    EXPECT_EQ(input.parent_path(), corpus) << kernel;
    const std::string file = input.filename().string();
    EXPECT_LE(file.size(), 80 + std::string(".accuracy.0123456789abcdef.txt").size()) << file;
    EXPECT_EQ(file.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"),
              std::string::npos) << file;
    EXPECT_NE(read_whole_file(input).find("# nc.kernel " + kernel + "\n"), std::string::npos) << file;
    const CliRun replay = run_shell(f["reproduce"].get<std::string>());
    EXPECT_EQ(replay.exit_code, 1) << f["reproduce"] << "\n" << replay.err;
    EXPECT_NE(replay.out.find("    accuracy: "), std::string::npos) << replay.out;
  }
  EXPECT_EQ(kernels, expected);
  EXPECT_EQ(entries(dir), std::vector<std::string>{"corpus"});
  for (const auto& e : fs::directory_iterator(corpus)) EXPECT_TRUE(e.is_regular_file()) << e.path();

  const CliRun again = run_shell(fuzz + " --cases 1");
  ASSERT_EQ(again.exit_code, 1) << again.err;
  const auto replayed = nlohmann::json::parse(again.out);
  std::set<std::string> from_corpus;
  for (const auto& f : replayed["findings"])
    if (f["from_corpus"].get<bool>()) from_corpus.insert(f["kernel"].get<std::string>());
  EXPECT_EQ(from_corpus, expected);
}

// Shows: every `reproduce:` line fuzz prints, run by /bin/sh -c exactly as
// printed, replays its finding (exit 1, `accuracy`, the kernel named in the
// table) and runs nothing the name spells: x;touch${IFS}pwned,
// $(>pwned_dollar) and `>pwned_tick` create no file, and paren( is no
// syntax error. The next run replays each name's file from the corpus.
TEST(CliNames, PrintedReplayLinesAreShellQuoted) {
  const fs::path dir = fresh_dir("shell");
  const fs::path cwd = dir / "cwd";
  fs::create_directories(cwd);
  const CliRun run = run_shell(normcheck_command("fuzz --plugin " + sq(NAMES_SHELL_PLUGIN) +
                                                 " --cases 50 --seed 7 --corpus " + sq((dir / "corpus").string())));
  ASSERT_EQ(run.exit_code, 1) << run.err;
  const std::vector<std::string> names = {"x;touch${IFS}pwned", "paren(", "$(>pwned_dollar)", "`>pwned_tick`"};
  // Each kernel has one finding per input class it was found in (at least one).
  const std::vector<std::string> lines = lines_after(run.out, "    reproduce: ");
  ASSERT_GE(lines.size(), names.size()) << run.out;
  std::set<std::string> replayed_names;
  for (const std::string& line : lines) {
    const CliRun replay = run_shell("cd " + sq(cwd.string()) + " && " + line);
    EXPECT_EQ(replay.exit_code, 1) << line << "\n" << replay.err;
    EXPECT_NE(replay.out.find("    accuracy: "), std::string::npos) << line << "\n" << replay.out;
    for (const std::string& name : names)
      if (replay.out.find("\n" + name + " ") != std::string::npos) replayed_names.insert(name);
  }
  EXPECT_EQ(replayed_names, std::set<std::string>(names.begin(), names.end())) << run.out;
  EXPECT_EQ(entries(cwd), std::vector<std::string>{}) << "a replay line ran part of a kernel's name";

  // The corpus files give these names back too: the next run replays each.
  const CliRun again = run_shell(normcheck_command("fuzz --plugin " + sq(NAMES_SHELL_PLUGIN) +
                                                   " --cases 1 --seed 7 --json --corpus " +
                                                   sq((dir / "corpus").string())));
  ASSERT_EQ(again.exit_code, 1) << again.err;
  const auto replayed = nlohmann::json::parse(again.out);
  std::set<std::string> from_corpus;
  for (const auto& f : replayed["findings"])
    if (f["from_corpus"].get<bool>()) from_corpus.insert(f["kernel"].get<std::string>());
  EXPECT_EQ(from_corpus, std::set<std::string>(names.begin(), names.end()));
}

// Shows: a plugin path and a corpus path holding bytes that are not UTF-8 do
// not make --json fail after the run: list, fuzz and check print JSON that
// parses (exit 0, 1, 1), each such byte written as the text \xNN; the text
// output keeps the bytes, so its replay line still runs.
TEST(CliNames, JsonCarriesPathsThatAreNotUtf8) {
  const fs::path dir = fresh_dir("bytes\xff");
  const fs::path plugin = dir / "lib\xfe.so";
  fs::copy_file(NAMES_CHDIR_PLUGIN, plugin);  // NAMES_TEST_CHDIR unset: its constructor stays put
  const fs::path corpus = dir / "corpus";

  const CliRun list = run_shell(normcheck_command("list --json --plugin " + sq(plugin.string())));
  ASSERT_EQ(list.exit_code, 0) << list.err;
  bool listed = false;
  const auto listing = nlohmann::json::parse(list.out);
  for (const auto& k : listing["kernels"])
    if (k["name"] == "names.chdir") {
      listed = true;
      EXPECT_NE(k["algorithm"].get<std::string>().find("lib\\xfe.so"), std::string::npos) << k["algorithm"];
    }
  EXPECT_TRUE(listed) << list.out;

  const std::string fuzz = normcheck_command("fuzz --plugin " + sq(plugin.string()) + " --seed 7 --corpus " +
                                             sq(corpus.string()));
  const CliRun found = run_shell(fuzz + " --cases 50 --json");
  ASSERT_EQ(found.exit_code, 1) << found.err;
  const auto doc = nlohmann::json::parse(found.out);
  ASSERT_GE(doc["findings"].size(), 1u) << found.out;  // one per input class found
  for (const auto& f : doc["findings"]) {
    const std::string input = f["input"].get<std::string>();
    EXPECT_NE(input.find("bytes\\xff/corpus/names.chdir.accuracy."), std::string::npos) << input;
    EXPECT_NE(f["reproduce"].get<std::string>().find("lib\\xfe.so"), std::string::npos);
  }

  ASSERT_EQ(entries(corpus).size(), doc["findings"].size());
  const fs::path file = corpus / entries(corpus).front();
  const CliRun check = run_shell(normcheck_command("check --json --input " + sq(file.string()) + " --plugin " +
                                                   sq(plugin.string())));
  ASSERT_EQ(check.exit_code, 1) << check.err;
  const auto checked = nlohmann::json::parse(check.out);
  EXPECT_NE(checked["input"].get<std::string>().find("bytes\\xff"), std::string::npos) << checked["input"];
  EXPECT_EQ(checked["kernels"][0]["label"], "accuracy");

  const CliRun text = run_shell(fuzz + " --cases 1");  // the finding again, from the corpus
  ASSERT_EQ(text.exit_code, 1) << text.err;
  const std::vector<std::string> lines = lines_after(text.out, "    reproduce: ");
  ASSERT_GE(lines.size(), entries(corpus).size()) << text.out;
  EXPECT_EQ(run_shell(lines[0]).exit_code, 1) << lines[0];
}

// Shows: relative --plugin, --corpus and --input are resolved before the
// plugin is loaded. The plugin's constructor chdir()s elsewhere (it runs in
// normcheck's process), yet the finding is saved under the --corpus meant,
// nothing lands in the directory it moved to, the printed replay line works
// from another directory, and `check` with a relative --input and --plugin
// reads the files meant.
TEST(CliNames, RelativePathsDoNotFollowAPluginsChdir) {
  const fs::path dir = fresh_dir("chdir");
  const fs::path cwd = dir / "cwd", elsewhere = dir / "elsewhere";
  fs::create_directories(cwd / "plugins");
  fs::create_directories(elsewhere);
  fs::copy_file(NAMES_CHDIR_PLUGIN, cwd / "plugins" / "libnames_chdir.so");
  const std::string in_cwd = "cd " + sq(cwd.string()) + " && NAMES_TEST_CHDIR=" + sq(elsewhere.string()) + " ";

  const CliRun run = run_shell(in_cwd + normcheck_command("fuzz --plugin plugins/libnames_chdir.so --cases 50 "
                                                          "--seed 7 --corpus corpus"));
  ASSERT_EQ(run.exit_code, 1) << run.err;
  EXPECT_EQ(entries(elsewhere), std::vector<std::string>{}) << "the corpus followed the plugin's chdir()";
  ASSERT_TRUE(fs::is_directory(cwd / "corpus"));
  const std::vector<std::string> saved = entries(cwd / "corpus");
  ASSERT_GE(saved.size(), 1u);  // one per input class found

  const std::vector<std::string> lines = lines_after(run.out, "    reproduce: ");
  ASSERT_EQ(lines.size(), saved.size()) << run.out;
  const CliRun replay = run_shell("cd " + sq(dir.string()) + " && NAMES_TEST_CHDIR=" + sq(elsewhere.string()) +
                                  " " + lines[0]);
  EXPECT_EQ(replay.exit_code, 1) << lines[0] << "\n" << replay.err;
  EXPECT_NE(replay.out.find("    accuracy: "), std::string::npos) << replay.out;

  const CliRun check = run_shell(in_cwd + normcheck_command("check --json --input corpus/" + sq(saved.front()) +
                                                            " --plugin plugins/libnames_chdir.so"));
  ASSERT_EQ(check.exit_code, 1) << check.err;
  EXPECT_EQ(nlohmann::json::parse(check.out)["kernels"][0]["label"], "accuracy");
}

}  // namespace
}  // namespace normcheck
