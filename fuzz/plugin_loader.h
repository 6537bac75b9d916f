// Loading users' kernels from shared libraries (the plugin ABI,
// kernels/include/normcheck/plugin.h; docs/plugins.md).
//
// The library is loaded in a kernel host process (kernel_host.h), never in
// normcheck's. Its kernels become rows of the kernel table for the run
// (origin plugin) whose calls run in a host (RemoteKernelFn): evaluate()
// runs them like ours, here, held to plugin_bound(op, dtype) (normcheck/bounds.h:
// what a careful two-pass float32 kernel meets, plus the rounding of 16-bit
// outputs) over the input range layernorm_fwd.twopass declares.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "normcheck/kernel.h"

namespace normcheck::fuzz {

// Why a library was refused; what() names the path and the reason.
struct PluginError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct LoadOptions {
  // Loading (the library's constructors and list functions) taking longer
  // than this refuses the library.
  int load_timeout_ms = 10000;
};

// Loads the library in a kernel host and returns its kernels as table rows
// (they call into hosts for the rest of the process). Throws PluginError: not
// a shared library, a missing dependency, a library that exits, is killed by
// a signal or does not finish loading in time, a wrong ABI version, a missing
// symbol, no kernels, a list that changes between calls, a null or duplicate
// name, a name with a blank, quote, '#', '\' or non-printable byte, a null
// function, an unknown op or dtype.
std::vector<Kernel> load_plugin(const std::filesystem::path& path, const LoadOptions& options = {});

// The libFuzzer entry point only (libfuzzer/normcheck_fuzzer.cpp): the
// library loaded into this process, its rows calling it directly, so that the
// fuzzer's coverage reaches the plugin's code. That process exists to run the
// library and dies with it; normcheck's commands never call this.
std::vector<Kernel> load_plugin_in_process(const std::filesystem::path& path);

// load_plugin for each path, then add_kernel_rows(); a name already in the
// table (ours or another plugin's) is refused as a duplicate.
void load_plugins_into_table(const std::vector<std::string>& paths, const LoadOptions& options = {});

}  // namespace normcheck::fuzz
