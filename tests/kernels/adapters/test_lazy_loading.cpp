// The adapters are loaded on first use (kernels/adapters/adapter_module.h):
//  - a process that lists the table and runs our kernels maps neither oneDNN
//    nor libtorch nor their modules;
//  - running an adapter's row maps its library, and only its library (these
//    tests are also the controls of the mapping check: it does see a library
//    the process has loaded);
//  - with the modules unloadable (NORMCHECK_ADAPTER_DIR naming an empty
//    directory, or one whose modules need a library that is absent) every
//    adapter row declines with the loader's reason, and nothing crashes.
// Each check runs in a fresh process (a "threadsafe" death test re-executes
// this binary), so what an earlier test loaded cannot hide or fake a result.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "normcheck/evaluate.h"
#include "normcheck/kernel.h"

namespace normcheck {
namespace {

// The files of the adapters' libraries and modules, as /proc/self/maps names them.
const std::vector<std::string> kLibraries = {"libdnnl.so", "libtorch_cpu.so", "libc10.so",
                                             "libnormcheck_onednn.so", "libnormcheck_torch.so"};

// The lines of /proc/self/maps that map `library`.
std::vector<std::string> mapped(const std::string& library) {
  std::ifstream maps("/proc/self/maps");
  std::vector<std::string> lines;
  for (std::string line; std::getline(maps, line);)
    if (line.find(library) != std::string::npos) lines.push_back(line);
  return lines;
}

// Exits 0 when exactly `expected` of kLibraries are mapped, else prints what
// differs and exits 1: the end of every child process below.
[[noreturn]] void exit_with_mapping(const std::vector<std::string>& expected) {
  int wrong = 0;
  for (const std::string& library : kLibraries) {
    const bool want = std::find(expected.begin(), expected.end(), library) != expected.end();
    const std::vector<std::string> lines = mapped(library);
    if (lines.empty() == want) {
      ++wrong;
      std::fprintf(stderr, "%s is %smapped%s%s\n", library.c_str(), want ? "not " : "",
                   lines.empty() ? "" : ": ", lines.empty() ? "" : lines.front().c_str());
    }
  }
  std::fflush(stderr);
  std::_Exit(wrong == 0 ? 0 : 1);
}

// A fixed, well-conditioned 4 x 8 forward problem with gamma and beta.
Problem small_problem() {
  Problem p;
  p.rows = 4;
  p.cols = 8;
  for (int i = 0; i < 32; ++i) p.x.push_back(static_cast<float>((i * 7) % 11) - 5.0f);
  for (int c = 0; c < 8; ++c) p.gamma.push_back(1.0f + 0.125f * static_cast<float>(c));
  for (int c = 0; c < 8; ++c) p.beta.push_back(0.25f * static_cast<float>(c) - 1.0f);
  return p;
}

// The table's forward LayerNorm row of this family (and origin).
const Kernel* forward_row(Family family, Origin origin) {
  for (const Kernel& k : kernel_table())
    if (k.family == family && k.origin == origin && k.op == Op::layernorm_fwd && k.dtype == DType::f32)
      return &k;
  return nullptr;
}

class LazyLoading : public testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

[[noreturn]] void run_our_kernels_only() {
  // Reading every row, the adapters' included, loads nothing.
  int adapters = 0;
  for (const Kernel& k : kernel_table()) adapters += k.origin == Origin::third_party;
  const Kernel* scalar = forward_row(Family::scalar, Origin::ours);
  if (!scalar) std::_Exit(2);
  const Evaluation e = evaluate(*scalar, small_problem());
  if (!e.declined.empty() || !e.pass) std::_Exit(3);
  std::fprintf(stderr, "%d adapter rows listed\n", adapters);
  exit_with_mapping({});
}

TEST_F(LazyLoading, OurKernelsAndTheTableDoNotLoadTheAdapters) {
  EXPECT_EXIT(run_our_kernels_only(), testing::ExitedWithCode(0), "");
}

#if NORMCHECK_WITH_ONEDNN
[[noreturn]] void run_the_onednn_row() {
  const Kernel* k = forward_row(Family::onednn, Origin::third_party);
  if (!k) std::_Exit(2);
  const Evaluation e = evaluate(*k, small_problem());
  if (!e.declined.empty() || !e.pass) std::_Exit(3);
  exit_with_mapping({"libdnnl.so", "libnormcheck_onednn.so"});
}

TEST_F(LazyLoading, RunningTheOnednnRowLoadsOnednnAlone) {
  EXPECT_EXIT(run_the_onednn_row(), testing::ExitedWithCode(0), "");
}
#endif

#if NORMCHECK_WITH_TORCH
[[noreturn]] void run_the_libtorch_row() {
  const Kernel* k = forward_row(Family::libtorch, Origin::third_party);
  if (!k) std::_Exit(2);
  const Evaluation e = evaluate(*k, small_problem());
  if (!e.declined.empty() || !e.pass) std::_Exit(3);
  // libtorch_cpu itself links oneDNN (its mkldnn backend): libdnnl comes
  // with it, the oneDNN module does not.
  std::vector<std::string> expected = {"libtorch_cpu.so", "libc10.so", "libnormcheck_torch.so"};
  if (!mapped("libdnnl.so").empty()) expected.push_back("libdnnl.so");
  exit_with_mapping(expected);
}

TEST_F(LazyLoading, RunningTheLibtorchRowLoadsLibtorch) {
  EXPECT_EXIT(run_the_libtorch_row(), testing::ExitedWithCode(0), "");
}
#endif

// A caller that runs an adapter's kernel without asking declines() first gets
// the loader's reason thrown. (rows = cols = 0: a module, were it loaded,
// would return without touching the null arrays.)
bool throws_the_reason(const Kernel& k) {
  try {
    if (const auto* fwd = std::get_if<nc_layernorm_fwd_fn>(&k.fn))
      (*fwd)(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, 0, 0, 1e-5f);
    else if (const auto* bwd = std::get_if<nc_layernorm_bwd_fn>(&k.fn))
      (*bwd)(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, 0, 0);
    else if (const auto* v2 = std::get_if<SpecKernelFn>(&k.fn)) {  // libtorch's bf16 backward
      nc_call call{};
      call.size = sizeof call;
      (*v2)(&call);
    }
  } catch (const std::runtime_error& e) {
    return std::string(e.what()).starts_with("cannot load the adapter module");
  }
  return false;
}

// With NORMCHECK_ADAPTER_DIR = dir, every adapter row declines every problem
// with "cannot load the adapter module <dir>/libnormcheck_...: ...<cause>...",
// running one throws, evaluate() declines, and nothing gets mapped. Exits 0
// when all of that holds.
[[noreturn]] void exit_checking_every_adapter_declines(const std::string& dir, const std::string& cause) {
  setenv("NORMCHECK_ADAPTER_DIR", dir.c_str(), 1);
  int failures = 0;
  const auto fail = [&](const Kernel& k, const std::string& what) {
    ++failures;
    std::fprintf(stderr, "%.*s: %s\n", static_cast<int>(k.name.size()), k.name.data(), what.c_str());
  };
  const Shape shapes[] = {{.rows = 64, .cols = 768, .has_gamma = true, .has_beta = true},
                          {.rows = 0, .cols = 0}};
  int adapters = 0;
  for (const Kernel& k : kernel_table()) {
    if (k.origin != Origin::third_party) continue;
    ++adapters;
    for (const Shape& shape : shapes) {
      const std::string reason = declines(k, Request{shape});
      if (!reason.starts_with("cannot load the adapter module " + dir + "/libnormcheck_") ||
          reason.find(cause) == std::string::npos)
        fail(k, "declines '" + reason + "'");
    }
    if (!throws_the_reason(k)) fail(k, "ran without its module");
    if (k.op == Op::layernorm_fwd) {
      const Evaluation e = evaluate(k, small_problem());
      if (!e.declined.starts_with("cannot load the adapter module")) fail(k, "evaluated: '" + e.declined + "'");
    }
  }
  std::fprintf(stderr, "%d adapter rows checked\n", adapters);
  // The rows of each adapter the build has (oneDNN: forward, backward;
  // libtorch: those and the bf16 backward): none can be skipped.
  if (failures || adapters != 2 * NORMCHECK_WITH_ONEDNN + 3 * NORMCHECK_WITH_TORCH) std::_Exit(1);
  exit_with_mapping({});
}

// NORMCHECK_ADAPTER_DIR names an empty directory: no module there.
[[noreturn]] void run_every_adapter_without_modules() {
  std::string dir = (std::filesystem::temp_directory_path() / "normcheck_no_adapters_XXXXXX").string();
  if (!mkdtemp(dir.data())) std::_Exit(2);
  std::filesystem::remove(dir);  // the loader only needs the name; nothing is left behind
  exit_checking_every_adapter_declines(dir, "No such file");
}

TEST_F(LazyLoading, UnloadableModulesDeclineEveryProblemWithTheReason) {
  EXPECT_EXIT(run_every_adapter_without_modules(), testing::ExitedWithCode(0), "");
}

// Where the modules are present but the library behind them is not: stand-ins
// named like the modules that need a library the loader cannot find
// (tests/kernels/adapters/CMakeLists.txt, absent_library_module.cpp).
[[noreturn]] void run_every_adapter_without_its_library() {
  exit_checking_every_adapter_declines(NORMCHECK_MODULES_WITHOUT_LIBRARY,
                                       "libnormcheck_absent_library.so: cannot open shared object file");
}

TEST_F(LazyLoading, ModulesWhoseLibraryIsAbsentDeclineEveryProblemWithTheReason) {
  EXPECT_EXIT(run_every_adapter_without_its_library(), testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace normcheck
