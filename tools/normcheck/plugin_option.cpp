#include "plugin_option.h"

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "command.h"
#include "kernel_host.h"
#include "plugin_loader.h"
#include "shell_quote.h"
#include "tolerance.h"

namespace normcheck::cli {

void add_plugin_options(CLI::App* sub, PluginOptions& options, bool run_options) {
  sub->add_option("--plugin", options.paths,
                  "Load the kernels of this shared library (the plugin ABI, docs/plugins.md; repeatable)");
  sub->add_option("--load-timeout-ms", options.load_timeout_ms,
                  "A plugin that has not loaded and listed its kernels after this long is refused (default 10000)")
      ->check(CLI::Range(1, 3600000));
  sub->add_option("--domain", options.domain,
                  "The plugins' kernels support only this domain, e.g. 'eps>=1e-6 d=1..65536 |x|<=1e4' "
                  "(docs/plugins.md); its terms replace those the plugin declares. Problems outside it are "
                  "declined: limits, not findings");
  if (!run_options) return;
  sub->add_option("--timeout-ms", options.timeout_ms,
                  "A plugin kernel call using more CPU time than this per 2^20 elements (at least this) is a hang (default 2000)")
      ->check(CLI::Range(1, 3600000));
  sub->add_option("--tolerance-ulp", options.tolerance_ulp,
                  "Hold kernels to K units of u = 2^-24 per output element (docs/plugins.md) "
                  "instead of their bound");
}

void load_plugins(const PluginOptions& options) {
  if (options.domain) {
    if (options.paths.empty()) throw UsageError("--domain declares the domain of the --plugin kernels: give --plugin");
    try {
      (void)parse_domain(*options.domain);
    } catch (const std::invalid_argument& e) {
      throw UsageError("--domain '" + *options.domain + "' is not a domain: " + e.what());
    }
  }
  if (options.tolerance_ulp && !(*options.tolerance_ulp > 0 && std::isfinite(*options.tolerance_ulp)))
    throw UsageError("--tolerance-ulp must be finite and > 0");
  try {
    for (const std::string& path : options.paths) {
      std::vector<Kernel> rows = fuzz::load_plugin(path, {.load_timeout_ms = options.load_timeout_ms});
      for (Kernel& row : rows)
        if (options.domain) row.range = parse_domain(*options.domain, row.range);
      add_kernel_rows(rows);
      const fuzz::HostedPlugin* plugin = fuzz::hosted_plugin_of(rows.front());
      if (const std::string change = plugin->load_fp_change(); !change.empty())
        std::fprintf(stderr, "normcheck: %s changes the floating-point control state when it loads (%s); its "
                             "kernels run, and are judged, in that state\n",
                     plugin->path().string().c_str(), change.c_str());
    }
  } catch (const fuzz::PluginError& e) {
    throw UsageError("plugin refused: " + std::string(e.what()));
  } catch (const std::invalid_argument& e) {
    throw UsageError("plugin refused: " + std::string(e.what()));
  }
}

fuzz::IsolationOptions isolation_options(const PluginOptions& options) {
  fuzz::IsolationOptions iso;
  iso.timeout_ms = options.timeout_ms;
  if (options.tolerance_ulp) iso.bound_override = fuzz::tolerance_bound(*options.tolerance_ulp);
  return iso;
}

std::string absolute_path(const std::string& path) {
  return path.empty() ? path : std::filesystem::absolute(path).string();
}

void resolve_plugin_paths(PluginOptions& options) {
  for (std::string& p : options.paths) p = absolute_path(p);
}

std::string plugin_arguments(const PluginOptions& options) {
  std::string args;
  for (const auto& p : options.paths)
    args += " --plugin " + shell_quote(std::filesystem::absolute(p).lexically_normal().string());
  if (options.timeout_ms != PluginOptions{}.timeout_ms) args += " --timeout-ms " + std::to_string(options.timeout_ms);
  if (options.load_timeout_ms != PluginOptions{}.load_timeout_ms)
    args += " --load-timeout-ms " + std::to_string(options.load_timeout_ms);
  if (options.domain) args += " --domain " + shell_quote(*options.domain);
  if (options.tolerance_ulp) {
    char k[40];
    std::snprintf(k, sizeof k, "%.17g", *options.tolerance_ulp);
    args += std::string(" --tolerance-ulp ") + k;
  }
  return args;
}

}  // namespace normcheck::cli
