// Hostile paths and faults, end to end through the normcheck binary: FIFOs,
// devices, directories and symlinks given as inputs, a read-only output
// folder, a temporary file a killed run left, a memory limit under which a
// library cannot start threads. Each expectation is the issue-43 contract:
// exit 2 naming the file, no crash, no hang (every run is under `timeout`),
// no stray file.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "fold/safetensors.h"
#include "fold_files.h"
#include "../../support/normcheck_cli.h"

namespace fs = std::filesystem;
namespace nf = normcheck::fold;
namespace ft = normcheck::fold_test;
using normcheck::test_support::CliRun;
using normcheck::test_support::run_shell;
using normcheck::test_support::scratch_dir;

namespace {

// normcheck under a 60 s timeout (a hang is exit 124, a failure of the test).
CliRun normcheck_bounded(const std::string& args, const std::string& before = "") {
  return run_shell(before + "timeout 60 " + std::string(NORMCHECK_BINARY) + " " + args);
}

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = scratch_dir() / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string write(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
  return path.string();
}

void expect_refused(const CliRun& run, const std::string& file, const std::string& why) {
  EXPECT_EQ(run.exit_code, 2) << run.out << run.err;
  EXPECT_NE(run.err.find(file + ": " + why), std::string::npos) << run.err;
  EXPECT_EQ(run.out, "");
}

// The pid of a process that has ended.
pid_t dead_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  return child;
}

}  // namespace

// A FIFO blocked every reader in open(); /dev/zero was read whole; each is
// now refused at once as not a regular file.
TEST(HostilePaths, FifosDevicesAndDirectoriesAreRefusedAtOnce) {
  const fs::path dir = fresh_dir("paths");
  const std::string fifo = (dir / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  fs::create_symlink(fifo, dir / "to_fifo");
  const std::string weights = write(dir / "w.safetensors", nf::serialize_safetensors(ft::pre_ln_block(normcheck::DType::f32, 8, 4, 1)));
  const std::string spec = write(dir / "spec.json", ft::kPreLnSpec);
  const std::string out = (dir / "out.safetensors").string();
  for (const std::string& input : {fifo, (dir / "to_fifo").string()}) {
    expect_refused(normcheck_bounded("check --input " + input), input, "a FIFO, not a regular file");
    expect_refused(normcheck_bounded("fold --weights " + weights + " --spec " + input + " --out " + out), input,
                   "a FIFO, not a regular file");
    expect_refused(normcheck_bounded("fold --weights " + input + " --spec " + spec + " --out " + out), input,
                   "a FIFO, not a regular file");
    expect_refused(normcheck_bounded("report --quick --no-bench --no-claims --no-fuzz --out " + (dir / "r").string() +
                                     " --check-baseline " + input),
                   input, "a FIFO, not a regular file");
  }
  expect_refused(normcheck_bounded("check --input /dev/zero"), "/dev/zero", "a character device, not a regular file");
  expect_refused(normcheck_bounded("fold --weights " + weights + " --spec /dev/zero --out " + out), "/dev/zero",
                 "a character device");
  expect_refused(normcheck_bounded("check --input " + dir.string()), dir.string(), "a directory");
  EXPECT_FALSE(fs::exists(out));
}

// A harness's outputs file that is a FIFO (or /dev/zero behind a symlink):
// judge names it and writes nothing.
TEST(HostilePaths, JudgeRefusesAnOutputsFileThatIsNotARegularFile) {
  const fs::path dir = scratch_dir() / "judge_fifo";
  fs::remove_all(dir);
  const CliRun gen = normcheck_bounded("gen --spec 'rmsnorm fwd' --cases 2 --seed 1 --out " + dir.string());
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  const fs::path fifo = dir / "case-000.outputs.safetensors", zero = dir / "case-001.outputs.safetensors";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  fs::create_symlink("/dev/zero", zero);
  const CliRun run = normcheck_bounded("judge " + dir.string());
  expect_refused(run, fifo.string(), "a FIFO, not a regular file");
  EXPECT_NE(run.err.find(zero.string() + ": a character device, not a regular file"), std::string::npos) << run.err;
}

// A token past the limit is exit 2 naming the file and its line, and the
// message quotes it capped and escaped.
TEST(HostilePaths, ALongTokenIsRefusedNamingFileAndLine) {
  const fs::path dir = fresh_dir("token");
  const std::string input = write(dir / "rows.txt", "1 2 3\n1 \x1b]0;t\x07" + std::string(4 << 20, '1') + "\n");
  const CliRun run = normcheck_bounded("check --input " + input);
  expect_refused(run, input + ":2:3", "a token of");
  EXPECT_LT(run.err.size(), 1000u);
  EXPECT_EQ(run.err.find('\x1b'), std::string::npos);
}

// fold into a read-only folder: exit 2 with the OS's reason, nothing written.
TEST(HostilePaths, AReadOnlyOutputFolderIsExit2AndLeavesNothing) {
  if (::geteuid() == 0) GTEST_SKIP() << "root writes into read-only folders";
  const fs::path dir = fresh_dir("readonly");
  const std::string weights = write(dir / "w.safetensors", nf::serialize_safetensors(ft::pre_ln_block(normcheck::DType::f32, 8, 4, 1)));
  const std::string spec = write(dir / "spec.json", ft::kPreLnSpec);
  fs::create_directories(dir / "ro");
  fs::permissions(dir / "ro", fs::perms::owner_read | fs::perms::owner_exec);
  const CliRun run = normcheck_bounded("fold --weights " + weights + " --spec " + spec + " --out " + (dir / "ro" / "out.safetensors").string());
  EXPECT_EQ(run.exit_code, 2) << run.out << run.err;
  EXPECT_NE(run.err.find("Permission denied"), std::string::npos) << run.err;
  fs::permissions(dir / "ro", fs::perms::owner_all);
  EXPECT_TRUE(fs::is_empty(dir / "ro"));
}

// fold killed by SIGKILL mid-write left ".OUT.tmp.PID.N.A"; the next fold
// writing there removes it.
TEST(HostilePaths, TheNextFoldRemovesAKilledFoldsTemporary) {
  const fs::path dir = fresh_dir("stale");
  const std::string weights = write(dir / "w.safetensors", nf::serialize_safetensors(ft::pre_ln_block(normcheck::DType::f32, 8, 4, 1)));
  const std::string spec = write(dir / "spec.json", ft::kPreLnSpec);
  const fs::path stale = dir / (".out.safetensors.tmp." + std::to_string(dead_pid()) + ".0.0");
  write(stale, "half a model");
  const CliRun run = normcheck_bounded("fold --weights " + weights + " --spec " + spec + " --out " + (dir / "out.safetensors").string());
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(dir / "out.safetensors"));
}

// Under `ulimit -v 65536` libgomp (oneDNN's rows) cannot create threads and
// calls exit(1) inside normcheck: that read as a finding. The exit is now
// normcheck's own: 0 when every kernel ran, otherwise 2 with the reason.
TEST(HostilePaths, ALibraryCannotChooseTheExitCode) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer reserves more address space than the limit";
#else
  const fs::path dir = fresh_dir("ulimit");
  const std::string input = write(dir / "rows.txt", "1 2 3 4\n-1 0.5 2 8\n");
  const CliRun run = normcheck_bounded("check --input " + input, "ulimit -v 65536; ");
  EXPECT_NE(run.exit_code, 1) << run.out << run.err;
  EXPECT_NE(run.exit_code, -1) << run.err;
  if (run.exit_code == 2) {
    EXPECT_NE(run.err.find("normcheck"), std::string::npos) << run.err;
  }
#endif
}
