// A plugin's kernels run in kernel host processes (host/main.cpp,
// host/protocol.h), never in normcheck's: normcheck's process does not map
// the library, so nothing it does when it loads, runs or unloads (its
// constructors and destructors, the floating-point state it sets, what it
// prints, the threads and processes it starts) reaches normcheck's own
// arithmetic, output or exit code.
//
// A HostedPlugin starts a host by exec, in a process group of its own, with
// a load timeout, and reads the kernels the library lists. Calls go to a host
// in batches (HostedPlugin::run_calls; a RemoteKernelFn's call, kernel.h, is
// a batch of one unless call_batch.h gathers it with others): each call's
// arrays are laid out in memory shared with the host, each ending flush
// against a page the host makes inaccessible with a canary zone before it;
// the host runs the calls in order and answers once, while normcheck watches
// each run with a watchdog on the host's CPU time (and a wall-clock
// backstop), then copies each call's outputs back. A call that cannot
// complete has a KernelCallFault with its label; a crash or hang ends the
// host with its process group, and the calls after it start a fresh one.
// Calls on several threads at once each get a host of their own.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "host/fp_control.h"
#include "host/library.h"
#include "normcheck/invoke.h"
#include "normcheck/kernel.h"

namespace normcheck::fuzz {

// A kernel call that did not complete: label crash, hang or out_of_bounds,
// and one line saying what happened and where.
struct KernelCallFault : std::runtime_error {
  KernelCallFault(std::string label, const std::string& detail) : std::runtime_error(detail), label(std::move(label)) {}
  std::string label;
};

// The settings of the calls made on this thread while it lives, and what the
// hosts reported of them (the innermost scope is the one in force).
class CallScope {
 public:
  explicit CallScope(int timeout_ms, int runs_per_call = 1);
  ~CallScope();
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;

  // The CPU time a run of a call may use before it is a hang. The wall-clock
  // backstop (a kernel that sleeps or blocks) is 10 times that plus 10 s.
  int timeout_ms;
  // 2: each call runs twice in the host, each run on its own copy of the
  // arrays as the caller had them; the first run's outputs come back, and
  // runs_differ says whether the second's differ from them in any bit.
  int runs;
  bool runs_differ = false;
  // Non-empty when a call left the floating-point control state changed: the
  // change, in words (host/fp_control.h). The host restored it.
  std::string fp_change;

  static CallScope* current();
  // Makes `scope` the innermost one and returns the one it replaces: each
  // fiber of a batch (call_batch.h) has its own chain of scopes.
  static CallScope* exchange_current(CallScope* scope);

 private:
  CallScope* outer_;
};

class HostProcess;

// One call of a batch: entry `index` of the plugin on `args`' arrays (its
// outputs are written back there), with the settings of the CallScope it was
// made in.
struct HostCall {
  uint32_t index = 0;
  const Kernel* kernel = nullptr;
  const KernelArgs* args = nullptr;
  int timeout_ms = 2000;
  int runs = 1;
};

// What came of a call of a batch (CallScope's fields, for that call).
struct HostCallResult {
  bool ran = false;                       // false: an earlier call of its batch ended the host first
  std::optional<KernelCallFault> fault;   // the call did not complete
  bool runs_differ = false;
  std::string fp_change;
};

// One library, loaded in hosts for the rest of the process.
class HostedPlugin {
 public:
  // Starts the first host and reads the listing. Throws std::runtime_error
  // with the reason when the library cannot be loaded: the host could not be
  // started, the library exited, was killed by a signal or did not finish
  // loading within `load_timeout_ms`, or refused (not loadable, a missing
  // symbol, another ABI version, a list that changes between calls).
  HostedPlugin(const std::filesystem::path& absolute_path, int load_timeout_ms);
  ~HostedPlugin();
  HostedPlugin(const HostedPlugin&) = delete;
  HostedPlugin& operator=(const HostedPlugin&) = delete;

  // An entry of the library's lists, as listed (the ABI's rules are checked
  // by the loader, plugin_loader.cpp).
  using Entry = host::ListedEntry;
  const std::vector<Entry>& listing() const { return listing_; }
  const std::filesystem::path& path() const { return path_; }

  // What loading the library changed in the floating-point control state, in
  // words; empty when nothing. Its kernels run in the state it set.
  std::string load_fp_change() const;

  // Runs entry `index` (RemoteKernelFn's call) with the innermost
  // CallScope's settings, reporting to it: in a fiber of gather_calls()
  // (call_batch.h) as part of its batch, otherwise as a batch of one. Throws
  // KernelCallFault.
  void call(uint32_t index, const Kernel& kernel, const KernelArgs& args);

  // Runs `calls` in order in one host, in as few round trips as the arena
  // holds, and returns a result for each. A crash or hang ends the host and
  // the batch there: the calls after it are not run (ran false).
  std::vector<HostCallResult> run_calls(std::span<const HostCall> calls);

 private:
  std::unique_ptr<HostProcess> start_host() const;
  // An idle host, or a new one; throws KernelCallFault when it cannot start.
  std::unique_ptr<HostProcess> take_host();
  std::filesystem::path path_;
  int load_timeout_ms_;
  std::vector<Entry> listing_;
  host::FpControl before_{}, after_{};
  std::mutex mutex_;
  std::vector<std::unique_ptr<HostProcess>> idle_;
};

// The plugin whose host runs `kernel`, or nullptr (not a plugin's row).
const HostedPlugin* hosted_plugin_of(const Kernel& kernel);

// The RemoteKernelFn that calls entry `index` of `plugin` (which outlives it).
RemoteKernelFn remote_fn(HostedPlugin& plugin, uint32_t index);

// Where normcheck_kernel_host is: $NORMCHECK_KERNEL_HOST, else beside the
// running executable, else ../libexec/normcheck/ from it (an installed tree),
// else the build tree's.
std::filesystem::path kernel_host_binary();

}  // namespace normcheck::fuzz
