// A plugin's kernels run in kernel host processes (host/main.cpp,
// host/protocol.h), never in normcheck's: normcheck's process does not map
// the library, so nothing it does when it loads, runs or unloads (its
// constructors and destructors, the floating-point state it sets, what it
// prints, the threads and processes it starts) reaches normcheck's own
// arithmetic, output or exit code.
//
// A HostedPlugin starts a host by exec, in a process group of its own, with
// a load timeout, and reads the kernels the library lists. A call
// (RemoteKernelFn, kernel.h) lays the call's arrays out in memory shared with
// a host, each ending flush against a page the host makes inaccessible for
// the call with a canary zone before it, waits with a watchdog on the host's
// CPU time (and a wall-clock backstop), and copies the outputs back. A call
// that cannot complete throws KernelCallFault with its label; the host is
// ended with its process group and the next call starts a fresh one. Calls
// on several threads at once each get a host of their own.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "host/fp_control.h"
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

 private:
  CallScope* outer_;
};

class HostProcess;

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
  struct Entry {
    std::string name;
    int op = 0, dtype = 0;
    bool extension = false, has_fn = false, has_name = false;
    bool has_domain = false;
    std::string domain;  // normcheck_plugin_domain's text, as listed
  };
  const std::vector<Entry>& listing() const { return listing_; }
  const std::filesystem::path& path() const { return path_; }

  // What loading the library changed in the floating-point control state, in
  // words; empty when nothing. Its kernels run in the state it set.
  std::string load_fp_change() const;

  // Runs entry `index` (RemoteKernelFn's call). Throws KernelCallFault.
  void call(uint32_t index, const Kernel& kernel, const KernelArgs& args);

 private:
  std::unique_ptr<HostProcess> start_host() const;
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
