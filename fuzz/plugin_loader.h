// Loading users' kernels from shared libraries (the plugin ABI,
// kernels/include/normcheck/plugin.h; docs/plugins.md).
//
// A plugin's kernels become rows of the kernel table for the run (origin
// plugin): evaluate() runs them like ours, held to plugin_bound(op, dtype)
// (plugin_bounds.h: what a careful two-pass float32 kernel meets, plus the
// rounding of 16-bit outputs) over the input range layernorm_fwd.twopass
// declares. Their calls run in a child process
// (isolation.h).
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

// Opens the library (dlopen), checks the ABI and returns its kernels as table
// rows. The library stays loaded for the rest of the process (the rows point
// into it). The checks run first in a child process, so a library that
// crashes in its constructors or its list functions is refused, not fatal.
// Throws PluginError: not a shared library, a missing dependency, a wrong ABI
// version, a missing symbol, no kernels, a null or duplicate name, a null
// function, an unknown op or dtype.
std::vector<Kernel> load_plugin(const std::filesystem::path& path);

// load_plugin for each path, then add_kernel_rows(); a name already in the
// table (ours or another plugin's) is refused as a duplicate.
void load_plugins_into_table(const std::vector<std::string>& paths);

}  // namespace normcheck::fuzz
