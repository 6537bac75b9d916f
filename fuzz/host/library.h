// Opening a plugin library and reading its lists (the plugin ABI,
// normcheck/plugin.h): what only a process that loads the library can do.
// The kernel host does it for normcheck; the libFuzzer entry point, whose
// process exists to run the library, does it for itself.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace normcheck::host {

// One kernel as the library listed it. op and dtype are the ints the library
// wrote (its enum fields read as bytes); the ABI's rules on them, on the name
// and on the function are the loader's (fuzz/plugin_loader.cpp).
struct LibraryKernel {
  std::string name;
  int32_t op = 0, dtype = 0;
  bool extension = false;  // from normcheck_plugin_kernels_ext
  bool has_name = false;   // false: a null name
  void (*fn)(void) = nullptr;
  // normcheck_plugin_domain's text for it (as returned; the loader parses it).
  bool has_domain = false;  // false: no such symbol, or it returned NULL
  std::string domain;
  bool operator==(const LibraryKernel&) const = default;
};

// dlopen()s `absolute_path` (RTLD_NOW | RTLD_LOCAL) for the rest of the
// process, checks the ABI version and the symbols, and lists its kernels
// twice (they are called by their index in the list, so a list that changes
// between calls cannot be run), each time with its kernels' declared domains
// (normcheck_plugin_domain, when the library exports it). Returns the reason the library is refused,
// or "" with `kernels` filled.
std::string open_library(const char* absolute_path, std::vector<LibraryKernel>& kernels);

}  // namespace normcheck::host
