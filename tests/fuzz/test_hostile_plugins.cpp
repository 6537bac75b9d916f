// Hostile plugins: what `normcheck list/check/fuzz --plugin X` does when X
// attacks the process that loads it instead of just computing a wrong answer.
// Each plugin (tests/fuzz/hostile/, built by tests/fuzz/CMakeLists.txt as
// libhostile_<name>.so) carries the same correct two-pass LayerNorm and RMSNorm
// forward (norms.c) plus one behaviour (behaviours.c): exiting, crashing or
// hanging while loading or listing, leaving processes behind, changing the
// floating-point environment, printing, burning CPU, overflowing its stack,
// corrupting the heap, crashing from a stray thread, unloading badly, moving
// the working directory.
//
// The expectations are those of a kernel host process: the plugin is never
// mapped into normcheck's own process, a load failure is refused with its
// cause (exit 2, "plugin refused: ..."), what the plugin does to the process
// it runs in is reported against the plugin's kernels, and nothing it does
// changes normcheck's output, exit status or verdict on any other kernel.
// Every command runs the real binary through /bin/sh in a process group of
// its own, under a guard that kills the group, so that a command that would
// hang fails its test instead of holding up the suite.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "normcheck_cli.h"

namespace normcheck {
namespace {

namespace fs = std::filesystem;
using test_support::read_whole_file;
using test_support::scratch_dir;

// ---- Running commands ------------------------------------------------------

struct Outcome {
  int exit_code = -1;      // -1: ended by a signal, or by the guard
  bool timed_out = false;  // the guard killed it
  double seconds = 0;
  std::string out, err;
};

std::string quoted(const std::string& s) {
  std::string q = "'";
  for (const char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

fs::path scratch_file(const std::string& stem) {
  static int counter = 0;
  return scratch_dir() / (stem + "." + std::to_string(++counter));
}

// Runs `/bin/sh -c command` in a process group of its own, stdin from
// /dev/null, stdout and stderr to files, in `cwd` or else in a fresh scratch
// directory (so that fuzz's default corpus, ./normcheck-corpus, is never
// shared between runs: a saved finding would be replayed). Still running
// after guard_seconds: the whole group is killed and timed_out is set. When
// the shell has ended, what is left of its group is killed too, unless
// end_group is false (a test that looks for leftovers first ends them itself).
Outcome run_shell(const std::string& command, double guard_seconds, const fs::path& cwd = {}, bool end_group = true) {
  const fs::path out = scratch_file("out"), err = scratch_file("err");
  const fs::path dir = cwd.empty() ? scratch_file("cwd") : cwd;
  fs::create_directories(dir);
  const std::string out_s = out.string(), err_s = err.string(), cwd_s = dir.string();
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {  // async-signal-safe calls only: the test process may have threads
    setpgid(0, 0);
    if (chdir(cwd_s.c_str()) != 0) _exit(127);
    const int in = open("/dev/null", O_RDONLY);
    const int o = open(out_s.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = open(err_s.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || o < 0 || e < 0) _exit(127);
    dup2(in, 0);
    dup2(o, 1);
    dup2(e, 2);
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  setpgid(pid, pid);  // as the child does: whichever runs first
  Outcome run;
  int status = 0;
  for (;;) {
    if (waitpid(pid, &status, WNOHANG) == pid) break;
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > guard_seconds) {
      run.timed_out = true;
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      break;
    }
    usleep(10000);
  }
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (end_group) kill(-pid, SIGKILL);
  run.exit_code = !run.timed_out && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.out = read_whole_file(out);
  run.err = read_whole_file(err);
  return run;
}

std::string tail(const std::string& s, std::size_t n) { return s.size() <= n ? s : "..." + s.substr(s.size() - n); }

// For failure messages.
std::string describe(const Outcome& run) {
  std::ostringstream s;
  s << "exit " << run.exit_code << (run.timed_out ? " (killed by the test's guard)" : "") << " after " << run.seconds
    << " s\n--- stderr:\n"
    << tail(run.err, 3000) << "\n--- stdout:\n"
    << run.out.substr(0, 2000);
  return s.str();
}

std::string normcheck_command(const std::string& args) { return quoted(NORMCHECK_BINARY) + " " + args; }

Outcome normcheck(const std::string& args, double guard_seconds = 300) {
  return run_shell(normcheck_command(args), guard_seconds);
}

std::string plugin(const std::string& path) { return "--plugin " + quoted(path); }

// A row file for `check`: an ordinary row, a short one, and one with a large
// common offset (which only a two-pass mean survives).
fs::path row_file() {
  const fs::path path = scratch_dir() / "rows.txt";
  std::ofstream(path) << "1 2 3 4 5 6 7 8\n-0.5 0.25 3 1e-3 7\n100000 100001 99999 100002 100000.5\n";
  return path;
}

// ---- Reading `fuzz --json` -------------------------------------------------

struct Finding {
  std::string kernel, label, detail, input, reproduce;
};

// The findings of a `fuzz --json` run; parsed is false (and a failure added)
// when stdout is not one JSON document of that shape.
struct Findings {
  bool parsed = false;
  std::vector<Finding> all;

  std::vector<Finding> on(const std::string& kernel_prefix) const {
    std::vector<Finding> some;
    for (const Finding& f : all)
      if (f.kernel.rfind(kernel_prefix, 0) == 0) some.push_back(f);
    return some;
  }
  const Finding* labelled(const std::string& kernel_prefix, const std::string& label) const {
    for (const Finding& f : all)
      if (f.kernel.rfind(kernel_prefix, 0) == 0 && f.label == label) return &f;
    return nullptr;
  }
};

Findings findings_of(const Outcome& run) {
  Findings result;
  try {
    const auto doc = nlohmann::json::parse(run.out);
    for (const auto& f : doc.at("findings"))
      result.all.push_back({f.at("kernel").get<std::string>(), f.at("label").get<std::string>(),
                            f.at("detail").get<std::string>(),
                            // null: a finding with no problem (a library's loading)
                            f.at("input").is_null() ? std::string() : f.at("input").get<std::string>(),
                            f.at("reproduce").get<std::string>()});
    result.parsed = true;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "fuzz --json did not print its JSON document: " << e.what() << "\n" << describe(run);
  }
  return result;
}

std::string list_of(const std::vector<Finding>& findings) {
  std::string s;
  for (const Finding& f : findings) s += "\n  " + f.kernel + ": " + f.label + ": " + f.detail;
  return s.empty() ? " (none)" : s;
}

// ---- Processes a plugin leaves behind --------------------------------------

// The sleepers (behaviours.c: process name hostile_sleeper) whose pids are in
// pid_file and that are still running (a zombie has ended).
std::vector<pid_t> running_sleepers(const fs::path& pid_file) {
  std::vector<pid_t> running;
  std::ifstream in(pid_file);
  for (pid_t pid; in >> pid;) {
    const fs::path proc = "/proc/" + std::to_string(pid);
    std::string comm, stat = read_whole_file(proc / "stat");
    std::ifstream(proc / "comm") >> comm;
    const auto paren = stat.rfind(')');
    const bool zombie = paren != std::string::npos && stat.size() > paren + 2 && stat[paren + 2] == 'Z';
    if (comm == "hostile_sleeper" && !zombie) running.push_back(pid);
  }
  return running;
}

// The sleepers still running `settle_seconds` after the command ended (time
// for a SIGKILL sent at its end to land), each of which is then killed, so
// that a failing test leaves nothing behind.
std::vector<pid_t> sleepers_left(const fs::path& pid_file, double settle_seconds = 3) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(settle_seconds);
  std::vector<pid_t> running = running_sleepers(pid_file);
  while (!running.empty() && std::chrono::steady_clock::now() < until) {
    usleep(50000);
    running = running_sleepers(pid_file);
  }
  for (const pid_t pid : running) kill(pid, SIGKILL);
  return running;
}

// `normcheck <args> | cat` with the sleepers' pid file set; returns the run
// (cat's output as out) and normcheck's own exit status as exit_code.
Outcome piped_through_cat(const std::string& args, const fs::path& pid_file, double guard_seconds) {
  const fs::path status = scratch_file("status");
  Outcome run = run_shell("HOSTILE_PID_FILE=" + quoted(pid_file.string()) + "; export HOSTILE_PID_FILE; { " +
                              normcheck_command(args) + "; echo $? >" + quoted(status.string()) + "; } | cat",
                          guard_seconds, {}, false);
  const std::string code = read_whole_file(status);
  run.exit_code = run.timed_out || code.empty() ? -1 : std::stoi(code);
  return run;
}

// ---- Load failures ---------------------------------------------------------

// `list`, `check` and `fuzz` on the plugin each exit 2 with "plugin refused:"
// and `reason` on stderr, each within `max_seconds`.
void expect_refused_everywhere(const char* path, const std::string& reason, const std::string& extra = "",
                               double max_seconds = 120) {
  const std::string rows = row_file().string();
  for (const std::string& command :
       {std::string("list"), "check --input " + quoted(rows), std::string("fuzz --cases 20 --seed 1")}) {
    SCOPED_TRACE(command);
    const Outcome run = normcheck(command + " " + plugin(path) + extra, std::max(60.0, 2 * max_seconds));
    const bool refused = run.exit_code == 2 && run.err.find("plugin refused:") != std::string::npos &&
                         run.err.find(reason) != std::string::npos;
    EXPECT_TRUE(refused) << "expected exit 2 with 'plugin refused:' and '" << reason << "' on stderr\n"
                         << describe(run);
    EXPECT_LT(run.seconds, max_seconds) << describe(run);
  }
}

// A constructor that calls exit(0) ends whatever process loads the library,
// with a status that looks like success. Loaded into normcheck itself, it ends
// normcheck with exit 0 and no output; in a host, the host's exit while
// loading is the refusal's cause, with the status it exited with.
TEST(HostilePlugin, ConstructorExit0IsRefused) {
  expect_refused_everywhere(HOSTILE_CTOR_EXIT0, "exited with status 0 while loading");
}

// The same with a failing status: the status is named, not just "failed".
TEST(HostilePlugin, ConstructorExit3IsRefused) {
  expect_refused_everywhere(HOSTILE_CTOR_EXIT3, "exited with status 3 while loading");
}

// A constructor that segfaults kills the process that loads it: the refusal
// says the loading process was killed by a signal.
TEST(HostilePlugin, ConstructorSegfaultIsRefused) { expect_refused_everywhere(HOSTILE_CTOR_SEGV, "killed by signal"); }

// A constructor that never returns: with --load-timeout-ms 1000 the load is
// given up after a second and refused, so each command ends in a few seconds
// (10 s allows for a loaded CI machine) instead of never.
TEST(HostilePlugin, ConstructorHangIsRefusedAfterTheLoadTimeout) {
  expect_refused_everywhere(HOSTILE_CTOR_HANG, "did not finish loading within", " --load-timeout-ms 1000", 10);
}

// normcheck_plugin_kernels crashes on its second call in a process. A loader
// that calls it twice (once to check the list, once to use it, or twice to
// see that it is stable) sees the crash, and the refusal names the signal.
TEST(HostilePlugin, ListCrashingOnItsSecondCallIsRefused) {
  expect_refused_everywhere(HOSTILE_LIST_CRASHES_SECOND, "killed by signal");
}

// normcheck_plugin_kernels lists two kernels, then one: a list that is not
// the same on every call cannot be relied on to name the kernel that runs.
TEST(HostilePlugin, ListChangingOnItsSecondCallIsRefused) {
  expect_refused_everywhere(HOSTILE_LIST_CHANGES_SECOND, "lists different kernels on a second call");
}

// ---- Processes left behind -------------------------------------------------

// The constructor forks a sleeper that inherits stdout and stderr. Loaded in
// normcheck (or a plain fork of it), the sleeper holds the pipe to `cat`
// open, so `normcheck list | cat` does not end for 1000 s. A host run in a
// process group of its own, which normcheck ends, takes the sleeper with it:
// the pipeline ends in seconds (15 s allows for a loaded machine), list
// succeeds, and no sleeper is left running.
TEST(HostilePlugin, ConstructorSleeperNeitherHoldsThePipeNorOutlivesList) {
  const fs::path pids = scratch_file("sleepers");
  const Outcome run = piped_through_cat("list " + plugin(HOSTILE_CTOR_FORKS_SLEEPER), pids, 60);
  const std::vector<pid_t> left = sleepers_left(pids);
  EXPECT_FALSE(run.timed_out) << describe(run);
  EXPECT_EQ(run.exit_code, 0) << describe(run);
  EXPECT_LT(run.seconds, 15) << describe(run);
  EXPECT_NE(run.out.find("ctor_forks_sleeper.layernorm_fwd"), std::string::npos) << describe(run);
  EXPECT_TRUE(left.empty()) << left.size() << " sleeper(s) outlived normcheck list";
}

// Every kernel call forks a sleeper (a grandchild of normcheck). `normcheck
// fuzz | cat` must end (exit 0 or 1: the kernel's results are right, and
// whatever it is labelled with is not the point here), and the sleepers must
// not outlive it: they are in the host's process group, which normcheck ends.
TEST(HostilePlugin, KernelSleepersNeitherHoldThePipeNorOutliveFuzz) {
  const fs::path pids = scratch_file("sleepers");
  const Outcome run = piped_through_cat("fuzz --cases 20 --seed 1 " + plugin(HOSTILE_CALL_FORKS_SLEEPER), pids, 120);
  const std::vector<pid_t> left = sleepers_left(pids);
  EXPECT_FALSE(run.timed_out) << describe(run);
  EXPECT_TRUE(run.exit_code == 0 || run.exit_code == 1) << describe(run);
  EXPECT_TRUE(left.empty()) << left.size() << " sleeper(s) outlived normcheck fuzz";
}

// ---- The floating-point environment ---------------------------------------

// Built with -ffast-math, the plugin carries crtfastmath.o, whose constructor
// sets FTZ and DAZ when the library is loaded. Loaded into normcheck, that
// flushes the subnormals of our own kernels (and of the reference's float
// arithmetic) to zero: our kernels, which hold their bounds, would be
// reported. With the plugin in a host, our kernels run in an untouched
// environment and have no finding.
// The same run without the plugin (the control) has no finding either.
TEST(HostilePlugin, FastMathPluginLeavesOurKernelsAlone) {
  const std::string ours =
      "fuzz --kernel layernorm_fwd.twopass --kernel layernorm_fwd.accurate --kernel rmsnorm_fwd.scalar"
      " --cases 300 --seed 1 --json";
  const Findings control = findings_of(normcheck(ours));
  ASSERT_TRUE(control.parsed && control.all.empty()) << "the control has findings:" << list_of(control.all);
  const Outcome run = normcheck(ours + " " + plugin(HOSTILE_FASTMATH));
  const Findings f = findings_of(run);
  EXPECT_EQ(run.exit_code, 0) << describe(run);
  EXPECT_TRUE(f.all.empty()) << "findings on our kernels beside a fast-math plugin:" << list_of(f.all);
}

// Two plugins side by side: the fast-math one is reported for the environment
// it runs its kernels in (label fp_environment, the detail naming the
// flush-to-zero), and the correct one, whose kernels are the same code built
// without -ffast-math, has no finding: FTZ/DAZ stay with the plugin that set
// them. (The control: the correct plugin alone has no finding.)
TEST(HostilePlugin, FastMathPluginIsLabelledAndItsNeighbourIsNot) {
  const Findings control = findings_of(normcheck("fuzz " + plugin(HOSTILE_CORRECT) + " --cases 200 --seed 1 --json"));
  ASSERT_TRUE(control.parsed && control.all.empty()) << "the control has findings:" << list_of(control.all);
  const Outcome run =
      normcheck("fuzz " + plugin(HOSTILE_FASTMATH) + " " + plugin(HOSTILE_CORRECT) + " --cases 200 --seed 1 --json");
  const Findings f = findings_of(run);
  EXPECT_TRUE(f.on("correct.").empty()) << "findings on the correct plugin:" << list_of(f.on("correct."));
  const Finding* fp = f.labelled("fastmath.", "fp_environment");
  ASSERT_NE(fp, nullptr) << "no fp_environment finding on the fast-math plugin:" << list_of(f.all) << "\n"
                         << describe(run);
  EXPECT_NE(fp->detail.find("flush"), std::string::npos) << fp->detail;
}

// The "eps = ..." that `check` prints, up to the comma after it.
std::string printed_eps(const std::string& out) {
  const auto at = out.find("eps = ");
  return at == std::string::npos ? std::string() : out.substr(at, out.find(',', at) - at);
}

// --eps 1e-40 is a subnormal float. Without a plugin `check` prints it as
// float rounds it ("eps = 9.99995e-41"); with the fast-math plugin loaded into
// normcheck, DAZ turns it into 0 on its way to printf (and to our kernel).
// normcheck's own arithmetic must not change with a plugin: the same eps.
TEST(HostilePlugin, FastMathPluginDoesNotFlushCheckEps) {
  const std::string args =
      "check --input " + quoted(row_file().string()) + " --eps 1e-40 --kernel layernorm_fwd.twopass";
  const Outcome alone = normcheck(args);
  const std::string eps = printed_eps(alone.out);
  ASSERT_TRUE(eps.rfind("eps = 9.9999", 0) == 0) << describe(alone);
  const Outcome beside = normcheck(args + " " + plugin(HOSTILE_FASTMATH));
  EXPECT_EQ(printed_eps(beside.out), eps) << describe(beside);
}

// The constructor sets the rounding mode to upward. Our kernels (and the
// reference) assume round-to-nearest and must keep it: no finding on them.
// The plugin's own kernel runs in the mode its library chose, which its
// result cannot be held to: label fp_environment, the detail naming the
// rounding mode.
TEST(HostilePlugin, RoundingModeSetWhileLoadingIsLabelled) {
  const Outcome run = normcheck("fuzz " + plugin(HOSTILE_CTOR_ROUNDS_UP) +
                                " --kernel layernorm_fwd.twopass --kernel rmsnorm_fwd.scalar"
                                " --kernel ctor_rounds_up.layernorm_fwd --cases 200 --seed 1 --json");
  const Findings f = findings_of(run);
  EXPECT_TRUE(f.on("layernorm_fwd.").empty() && f.on("rmsnorm_fwd.").empty())
      << "findings on our kernels:" << list_of(f.all);
  const Finding* fp = f.labelled("ctor_rounds_up.", "fp_environment");
  ASSERT_NE(fp, nullptr) << "no fp_environment finding on the plugin:" << list_of(f.all) << "\n" << describe(run);
  EXPECT_NE(fp->detail.find("rounding"), std::string::npos) << fp->detail;
}

// The constructor unmasks FE_INVALID: any invalid operation (inf - inf on a
// row holding an infinity, which the generators draw) raises SIGFPE. Our
// kernels handle such rows quietly under the default masks and must not
// crash: no finding on them. The plugin's kernel is labelled fp_environment,
// the detail naming the trap.
TEST(HostilePlugin, TrapUnmaskedWhileLoadingIsLabelled) {
  const Outcome run = normcheck("fuzz " + plugin(HOSTILE_CTOR_TRAPS_INVALID) +
                                " --kernel layernorm_fwd.twopass --kernel rmsnorm_fwd.scalar"
                                " --kernel ctor_traps_invalid.layernorm_fwd --cases 200 --seed 1 --json");
  const Findings f = findings_of(run);
  EXPECT_TRUE(f.on("layernorm_fwd.").empty() && f.on("rmsnorm_fwd.").empty())
      << "findings on our kernels:" << list_of(f.all);
  const Finding* fp = f.labelled("ctor_traps_invalid.", "fp_environment");
  ASSERT_NE(fp, nullptr) << "no fp_environment finding on the plugin:" << list_of(f.all) << "\n" << describe(run);
  EXPECT_NE(fp->detail.find("trap"), std::string::npos) << fp->detail;
}

// A kernel call sets FTZ/DAZ and returns with them set: the environment after
// the call is not the one it was called in, which is the kernel's fault
// (label fp_environment). The correct plugin beside it is unaffected.
TEST(HostilePlugin, KernelSettingFtzIsLabelledAndItsNeighbourIsNot) {
  const Outcome run = normcheck("fuzz " + plugin(HOSTILE_CALL_SETS_FTZ) + " " + plugin(HOSTILE_CORRECT) +
                                " --cases 100 --seed 1 --json");
  const Findings f = findings_of(run);
  EXPECT_TRUE(f.on("correct.").empty()) << "findings on the correct plugin:" << list_of(f.on("correct."));
  EXPECT_NE(f.labelled("call_sets_ftz.", "fp_environment"), nullptr)
      << "no fp_environment finding on the plugin:" << list_of(f.all) << "\n"
      << describe(run);
}

// ---- Unloading -------------------------------------------------------------

// The kernel adds 1 to y[0] (an accuracy finding) and the destructor calls
// _exit(0). Unloaded by normcheck's own exit, the destructor replaces
// normcheck's exit status 1 with 0 (and drops unflushed output): the finding
// is lost. The host's end must not decide normcheck's status: exit 1, the
// finding in the JSON.
TEST(HostilePlugin, DestructorExit0DoesNotHideAFinding) {
  const Outcome run = normcheck("fuzz " + plugin(HOSTILE_DTOR_EXITS_WRONG) +
                                " --kernel dtor_exits_wrong.layernorm_fwd --cases 50 --seed 1 --json");
  EXPECT_EQ(run.exit_code, 1) << describe(run);
  const Findings f = findings_of(run);
  EXPECT_NE(f.labelled("dtor_exits_wrong.", "accuracy"), nullptr) << list_of(f.all);
}

// A correct plugin whose destructor segfaults: the run found nothing, and a
// crash while the plugin unloads is not a reason for normcheck to die by
// SIGSEGV: exit 0, the JSON intact.
TEST(HostilePlugin, DestructorSegfaultDoesNotFailACleanRun) {
  const Outcome run = normcheck("fuzz " + plugin(HOSTILE_DTOR_SEGV) + " --cases 50 --seed 1 --json");
  EXPECT_EQ(run.exit_code, 0) << describe(run);
  const Findings f = findings_of(run);
  EXPECT_TRUE(f.all.empty()) << list_of(f.all);
}

// ---- Output ----------------------------------------------------------------

// The constructor prints a line on stdout and one on stderr. stdout is
// normcheck's report (one JSON document with --json): the plugin's text must
// not land in it. It is not thrown away either: it goes to stderr, each line
// marked as the plugin's ("plugin ..." at the start of the line).
TEST(HostilePlugin, ConstructorOutputGoesToStderrMarkedAsThePlugins) {
  const Outcome run = normcheck("list --json " + plugin(HOSTILE_CTOR_PRINTS));
  EXPECT_EQ(run.exit_code, 0) << describe(run);
  try {
    const auto doc = nlohmann::json::parse(run.out);
    bool listed = false;
    for (const auto& k : doc.at("kernels")) listed = listed || k.at("name") == "ctor_prints.layernorm_fwd";
    EXPECT_TRUE(listed) << describe(run);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "list --json's stdout is not JSON: " << e.what() << "\n" << describe(run);
  }
  for (const std::string text : {"text on stdout", "text on stderr"}) {
    bool marked = false;
    std::istringstream lines(run.err);
    for (std::string line; std::getline(lines, line);)
      marked = marked || (line.rfind("plugin ", 0) == 0 && line.find(text) != std::string::npos);
    EXPECT_TRUE(marked) << "no stderr line starting with 'plugin ' holds '" << text << "'\n" << describe(run);
  }
}

// ---- The watchdog ----------------------------------------------------------

// A correct kernel that burns 150 ms of CPU per call: within --timeout-ms 500
// by a factor of three. With 8 jobs on a 2-core machine each call waits for a
// core too, and its wall-clock time can pass 500 ms; the watchdog times the
// call's CPU, so it is no hang: no finding.
TEST(HostilePlugin, CpuBoundKernelWithinTheTimeoutIsNotAHang) {
  const Outcome run = normcheck("fuzz " + plugin(HOSTILE_CALL_BURNS_CPU) +
                                " --kernel call_burns_cpu.layernorm_fwd --cases 24 --jobs 8 --timeout-ms 500 --seed 1 "
                                "--json");
  const Findings f = findings_of(run);
  EXPECT_EQ(run.exit_code, 0) << describe(run);
  EXPECT_TRUE(f.all.empty()) << list_of(f.all);
}

// The same kernel on a machine kept busy by 10 spinning threads of this test
// (2 cores: a call gets about a sixth of one, so its 150 ms of CPU take most
// of a second of wall-clock time), with one job: the CPU time per call is
// still 150 ms, within --timeout-ms 500, so still no finding.
TEST(HostilePlugin, CpuBoundKernelOnABusyMachineIsNotAHang) {
  std::atomic<bool> stop{false};
  std::vector<std::thread> spinners;
  for (int i = 0; i < 10; ++i)
    spinners.emplace_back([&stop] {
      volatile unsigned long spins = 0;
      while (!stop.load(std::memory_order_relaxed)) spins = spins + 1;
    });
  const Outcome run =
      normcheck("fuzz " + plugin(HOSTILE_CALL_BURNS_CPU) +
                " --kernel call_burns_cpu.layernorm_fwd --cases 4 --jobs 1 --timeout-ms 500 --seed 1 --json");
  stop = true;
  for (std::thread& t : spinners) t.join();
  const Findings f = findings_of(run);
  EXPECT_EQ(run.exit_code, 0) << describe(run);
  EXPECT_TRUE(f.all.empty()) << list_of(f.all);
}

// A kernel that sleeps forever uses no CPU, so a CPU-time watchdog alone
// would wait for ever: the wall-clock backstop still ends the call and labels
// it a hang, within the guard's 90 s (one case: its call and each shrinking
// candidate's end at the 12 s backstop, about 40 s in all).
TEST(HostilePlugin, SleepingKernelIsStillAHang) {
  const Outcome run = normcheck("fuzz " + plugin(HOSTILE_CALL_SLEEPS) +
                                    " --kernel call_sleeps.layernorm_fwd --cases 1 --timeout-ms 200 --seed 1 --json",
                                90);
  EXPECT_FALSE(run.timed_out) << describe(run);
  EXPECT_EQ(run.exit_code, 1) << describe(run);
  const Findings f = findings_of(run);
  EXPECT_NE(f.labelled("call_sleeps.", "hang"), nullptr) << list_of(f.all);
}

// ---- The stack -------------------------------------------------------------

// A 12 MB array on the stack, every page touched, cannot fit in the 8 MB
// stack the kernel runs on: the fault is a crash, and the detail says it is a
// stack overflow (the fault address lies just below the stack), not a bare
// "signal 11". `check` on a row runs the kernel the same way: same label.
TEST(HostilePlugin, TwelveMegabyteStackArrayIsAStackOverflow) {
  const Outcome run =
      normcheck("fuzz " + plugin(HOSTILE_STACK_12MB) + " --kernel stack_12mb.layernorm_fwd --cases 20 --seed 1 --json");
  const Findings f = findings_of(run);
  const Finding* crash = f.labelled("stack_12mb.", "crash");
  ASSERT_NE(crash, nullptr) << list_of(f.all) << "\n" << describe(run);
  EXPECT_NE(crash->detail.find("stack overflow"), std::string::npos) << crash->detail;

  const Outcome check = normcheck("check --json --input " + quoted(row_file().string()) + " " +
                                  plugin(HOSTILE_STACK_12MB) + " --kernel stack_12mb.layernorm_fwd");
  EXPECT_EQ(check.exit_code, 1) << describe(check);
  try {
    const auto k = nlohmann::json::parse(check.out).at("kernels").at(0);
    EXPECT_EQ(k.value("label", ""), "crash") << k.dump();
    EXPECT_NE(k.value("detail", "").find("stack overflow"), std::string::npos) << k.dump();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "check --json: " << e.what() << "\n" << describe(check);
  }
}

// A 4 MB array, touched, fits in an 8 MB stack with room to spare: a correct
// kernel that uses its stack generously is no finding.
TEST(HostilePlugin, FourMegabyteStackArrayFits) {
  const Outcome run =
      normcheck("fuzz " + plugin(HOSTILE_STACK_4MB) + " --kernel stack_4mb.layernorm_fwd --cases 50 --seed 1 --json");
  const Findings f = findings_of(run);
  EXPECT_EQ(run.exit_code, 0) << describe(run);
  EXPECT_TRUE(f.all.empty()) << list_of(f.all);
}

// Unbounded recursion runs off the end of the stack. The fault address is in
// the stack's guard region, not in one of normcheck's guard pages around the
// arrays, so it is a crash, a stack overflow, and not out_of_bounds.
TEST(HostilePlugin, DeepRecursionIsAStackOverflow) {
  const Outcome run = normcheck("fuzz " + plugin(HOSTILE_CALL_RECURSES) +
                                " --kernel call_recurses.layernorm_fwd --cases 20 --seed 1 --json");
  const Findings f = findings_of(run);
  EXPECT_EQ(f.labelled("call_recurses.", "out_of_bounds"), nullptr) << list_of(f.all);
  const Finding* crash = f.labelled("call_recurses.", "crash");
  ASSERT_NE(crash, nullptr) << list_of(f.all) << "\n" << describe(run);
  EXPECT_NE(crash->detail.find("stack overflow"), std::string::npos) << crash->detail;
}

// ---- Damage that surfaces later --------------------------------------------

// The kernel writes past the end of a block it malloc'd and frees it. The
// allocator notices later, in whatever code of the process allocates next,
// often normcheck's evaluation after the call. Everything in the process that
// runs the kernel is there for the kernel, so the crash is the kernel's:
// label crash, and the detail does not blame normcheck ("in normcheck").
TEST(HostilePlugin, HeapCorruptionIsTheKernelsCrash) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "under AddressSanitizer the allocator leaves redzones between blocks: the overwrite lands in "
                  "one and free() does not look";
#endif
  const Outcome run = normcheck("fuzz " + plugin(HOSTILE_CALL_CORRUPTS_HEAP) +
                                " --kernel call_corrupts_heap.layernorm_fwd --cases 100 --seed 1 --json");
  const Findings f = findings_of(run);
  const Finding* crash = f.labelled("call_corrupts_heap.", "crash");
  ASSERT_NE(crash, nullptr) << list_of(f.all) << "\n" << describe(run);
  EXPECT_EQ(crash->detail.find("in normcheck"), std::string::npos) << crash->detail;
}

// Each call leaves a detached thread that segfaults 20 ms later, usually
// while normcheck's code runs (the exact reference of a later case), and
// only if the process is still there: 300 cases keep it busy long enough.
// The thread is the kernel's: label crash, the detail not blaming normcheck.
TEST(HostilePlugin, LateFaultFromTheKernelsThreadIsTheKernelsCrash) {
  const Outcome run = normcheck("fuzz " + plugin(HOSTILE_LATE_THREAD_FAULT) +
                                " --kernel late_thread_fault.layernorm_fwd --cases 300 --seed 1 --json");
  const Findings f = findings_of(run);
  const Finding* crash = f.labelled("late_thread_fault.", "crash");
  ASSERT_NE(crash, nullptr) << list_of(f.all) << "\n" << describe(run);
  EXPECT_EQ(crash->detail.find("in normcheck"), std::string::npos) << crash->detail;
}

// ---- Paths and the working directory ---------------------------------------

// A plugin path that is not UTF-8 (a file name with byte 0xff; Linux allows
// any byte but '/' and NUL): the JSON document must still be printed (a JSON
// writer that insists on UTF-8 throws on such a string) and the correct
// plugin has no finding.
TEST(HostilePlugin, NonUtf8PluginPathKeepsTheJson) {
  const fs::path copy = scratch_dir() / "hostile_\xff_correct.so";
  fs::copy_file(HOSTILE_CORRECT, copy, fs::copy_options::overwrite_existing);
  const Outcome run = normcheck("fuzz --json --cases 20 --seed 1 " + plugin(copy.string()));
  EXPECT_EQ(run.exit_code, 0) << describe(run);
  const Findings f = findings_of(run);
  EXPECT_TRUE(f.parsed);
  EXPECT_TRUE(f.all.empty()) << list_of(f.all);
}

// The constructor calls chdir("/"). A relative --corpus names a directory
// under the user's working directory, whatever the plugin does to the
// working directory of the process it is loaded into: the (wrong) kernel's
// finding is saved under <cwd>/corpus, and its printed reproduce command,
// run from that directory, replays it (exit 1).
TEST(HostilePlugin, ConstructorChdirDoesNotMoveTheCorpus) {
  const fs::path cwd = scratch_dir() / "cwd";
  fs::create_directories(cwd);
  const bool root_corpus_existed = fs::exists("/corpus");
  const Outcome run = run_shell(normcheck_command("fuzz " + plugin(HOSTILE_CTOR_CHDIR_WRONG) +
                                                  " --kernel ctor_chdir_wrong.layernorm_fwd --corpus corpus"
                                                  " --cases 50 --seed 1 --json"),
                                300, cwd);
  // Loaded into normcheck, the plugin moves the corpus to /corpus: remove
  // what this test put there.
  if (!root_corpus_existed) fs::remove_all("/corpus");
  EXPECT_EQ(run.exit_code, 1) << describe(run);
  const Findings f = findings_of(run);
  ASSERT_FALSE(f.all.empty()) << describe(run);
  const Finding& finding = f.all.front();
  const fs::path saved = finding.input;
  EXPECT_EQ(saved.parent_path(), fs::canonical(cwd) / "corpus") << finding.input;
  EXPECT_TRUE(fs::is_regular_file(cwd / "corpus" / saved.filename())) << finding.input;
  const Outcome replay = run_shell(finding.reproduce, 120, cwd);
  EXPECT_EQ(replay.exit_code, 1) << finding.reproduce << "\n" << describe(replay);
}

}  // namespace
}  // namespace normcheck
