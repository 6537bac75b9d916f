// Opening a plugin library and reading its lists (the plugin ABI,
// normcheck/plugin.h): what only a process that loads the library can do.
// The kernel host does it for normcheck; the libFuzzer entry point, whose
// process exists to run the library, does it for itself.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace normcheck::host {

// One kernel as the library listed it, as data (what the kernel host sends
// normcheck). op and dtype are the ints the library wrote (its enum fields
// read as bytes; 0 for a version-2 kernel, whose spec says both); the ABI's
// rules on them, on the name, the spec and the function are the loader's
// (fuzz/plugin_loader.cpp).
struct ListedEntry {
  std::string name;
  int32_t op = 0, dtype = 0;
  bool extension = false;  // from normcheck_plugin_kernels_ext
  bool v2 = false;         // from normcheck_plugin_kernels_v2
  bool has_name = false;   // false: a null name
  bool has_fn = false;     // false: a null function
  bool has_spec = false;   // version 2: false for a null spec
  // The declared domain's text (the loader parses it): a version-2 entry's
  // own, else normcheck_plugin_domain's for the kernel; false: none (the
  // symbol is not exported, or NULL was given).
  bool has_domain = false;
  std::string spec, domain;
  bool operator==(const ListedEntry&) const = default;
};

// ... and its function, in the process that loaded the library.
struct LibraryKernel : ListedEntry {
  void (*fn)(void) = nullptr;
  bool operator==(const LibraryKernel&) const = default;
};

// dlopen()s `absolute_path` (RTLD_NOW | RTLD_LOCAL) for the rest of the
// process, checks the ABI version and the symbols, and lists its kernels
// twice (they are called by their index in the list, so a list that changes
// between calls cannot be run), each time with its kernels' declared domains
// (a version-2 entry's own, or normcheck_plugin_domain's when the library
// exports it). Returns the reason the library is refused, or "" with
// `kernels` filled.
std::string open_library(const char* absolute_path, std::vector<LibraryKernel>& kernels);

}  // namespace normcheck::host
