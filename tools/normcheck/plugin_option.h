// `--plugin PATH` (repeatable) and the options of running a plugin's kernels
// (--timeout-ms, --tolerance-ulp), shared by list, check and fuzz.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "isolation.h"

namespace normcheck::cli {

struct PluginOptions {
  std::vector<std::string> paths;
  int timeout_ms = 2000;
  int load_timeout_ms = 10000;
  std::optional<double> tolerance_ulp;
  // --domain: the plugins' kernels' declared domain in its text form (kernel.h,
  // parse_domain); its terms replace those the plugin declares.
  std::optional<std::string> domain;
};

// Adds --plugin, --load-timeout-ms and --domain to `sub`; with `run_options`,
// --timeout-ms and --tolerance-ulp too.
void add_plugin_options(CLI::App* sub, PluginOptions& options, bool run_options);

// Loads every --plugin into the kernel table (each in kernel hosts,
// fuzz/kernel_host.h); a refused library is a UsageError (exit 2) with the
// reason, and so is a --domain text that is not a domain. A library that changes the floating-point control state when it
// loads is named on stderr (fuzz and check report it as a finding).
void load_plugins(const PluginOptions& options);

// The isolation settings the options ask for (the tolerance as a bound override).
fuzz::IsolationOptions isolation_options(const PluginOptions& options);

// The --plugin/--domain/--timeout-ms/--tolerance-ulp arguments that repeat this run's
// settings in a printed command (paths made absolute, shell-quoted).
std::string plugin_arguments(const PluginOptions& options);

// `path` made absolute against the current directory. The CLI resolves every
// path it was given (--plugin, --corpus, --input) this way before loading any
// plugin: a plugin's constructor runs in this process and may chdir(), after
// which a relative path would name another file and a printed replay command
// would point elsewhere. An empty path stays empty.
std::string absolute_path(const std::string& path);

// options.paths made absolute (absolute_path), before load_plugins().
void resolve_plugin_paths(PluginOptions& options);

}  // namespace normcheck::cli
