#include "plugin_loader.h"

#include <cstring>
#include <deque>
#include <functional>
#include <fstream>
#include <memory>
#include <optional>
#include <set>

#include "host/library.h"
#include "host/plugin_abi.h"
#include "kernel_host.h"
#include "normcheck/bounds.h"
#include "normcheck/evaluate.h"
#include "normcheck/op_spec.h"
#include "normcheck/plugin.h"

namespace normcheck::fuzz {
namespace {

// Names and algorithm lines the rows' string_views point into, and the
// loaded plugins, for the process's life.
std::deque<std::string>& owned_strings() {
  static std::deque<std::string> strings;
  return strings;
}

std::string_view own(std::string s) { return owned_strings().emplace_back(std::move(s)); }

// The version-2 rows' specs, for the process's life (rows point into it).
const OpSpec* own(const OpSpec& spec) {
  static std::deque<OpSpec> specs;
  return &specs.emplace_back(spec);
}

std::deque<std::unique_ptr<HostedPlugin>>& loaded_plugins() {
  static std::deque<std::unique_ptr<HostedPlugin>> plugins;
  return plugins;
}

bool has_elf_header(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  in.read(magic, 4);
  return in.gcount() == 4 && std::memcmp(magic, "\x7f" "ELF", 4) == 0;
}

// The ABI's rules on each listed kernel; the rows, each calling fn_of(its
// index), or throws PluginError.
std::vector<Kernel> rows_of(const std::vector<HostedPlugin::Entry>& listing, const std::filesystem::path& path,
                            const std::string& where, const std::function<KernelFn(uint32_t)>& fn_of) {
  if (listing.empty()) throw PluginError(where + "the plugin lists no kernels");
  const Kernel* twopass = find_kernel("layernorm_fwd.twopass");
  if (!twopass) throw std::logic_error("the table has no layernorm_fwd.twopass, whose range plugins get");
  const std::string_view algorithm = own("plugin " + path.filename().string() + " (default bound)");
  std::set<std::string> names;
  std::vector<Kernel> rows;
  for (std::size_t i = 0; i < listing.size(); ++i) {
    const HostedPlugin::Entry& e = listing[i];
    const std::string which = "kernel #" + std::to_string(i);
    if (!e.has_name || e.name.empty()) throw PluginError(where + which + " has a null or empty name");
    const std::string& name = e.name;
    for (const char c : name)
      if (c <= ' ' || c > '~' || c == '#' || c == '"' || c == '\\' || c == '\'')
        throw PluginError(where + which + " has a name with a blank, quote or non-printable character");
    if (!names.insert(name).second) throw PluginError(where + "duplicate kernel name '" + name + "'");
    if (find_kernel(name)) throw PluginError(where + "duplicate kernel name '" + name + "': already in the table");
    const OpSpec* spec = nullptr;
    std::optional<Op> op;
    std::optional<DType> dtype;
    if (e.v2) {
      if (!e.has_spec) throw PluginError(where + "kernel '" + name + "' has a null spec");
      const SpecParse parsed = parse_spec(e.spec);
      if (!parsed.spec) throw PluginError(where + "kernel '" + name + "' has a spec that is not one: " + parsed.error);
      spec = own(*parsed.spec);
      // Loaded all the same (`list` shows it); every case of it will be declined.
      if (const std::string why = spec_not_judged(*spec); !why.empty())
        std::fprintf(stderr, "normcheck: warning: %skernel '%s': %s; every case of it is declined\n", where.c_str(),
                     name.c_str(), why.c_str());
      op = op_of(*spec);
      dtype = spec->dtype_of(TensorName::x);
    } else {
      op = host::op_of(e.op);
      if (!op || (e.op == NC_RMSNORM_BWD && !e.extension))
        throw PluginError(where + "kernel '" + name + "' has an unknown op " + std::to_string(e.op));
      dtype = host::dtype_of(e.dtype);
      if (!dtype) throw PluginError(where + "kernel '" + name + "' has an unknown dtype " + std::to_string(e.dtype));
    }
    if (!e.has_fn) throw PluginError(where + "kernel '" + name + "' has a null function");
    // Its declared domain (its version-2 entry's, or normcheck_plugin_domain's): the terms it states
    // replace those of the default, layernorm_fwd.twopass's range.
    InputRange domain = twopass->range;
    if (e.has_domain) {
      try {
        domain = parse_domain(e.domain, twopass->range);
      } catch (const std::invalid_argument& error) {
        throw PluginError(where + "kernel '" + name + "': " +
                          (e.v2 ? "its entry's domain is \"" : "normcheck_plugin_domain gave \"") + e.domain +
                          "\", which is not a domain: " + error.what());
      }
    }
    rows.push_back(Kernel{.name = own(name),
                          .op = *op,
                          .origin = Origin::plugin,
                          .dtype = *dtype,
                          .algorithm = algorithm,
                          .fn = fn_of(static_cast<uint32_t>(i)),
                          .bound = plugin_bound(*op, *dtype),
                          .range = domain,
                          .family = Family::external,
                          .spec = spec,
                          .takes_row_stride = e.v2});
  }
  return rows;
}

// The library's absolute path, after the checks that need no loading.
// Resolved before any of the library's code runs: a constructor that changes
// the directory of the process that loads it changes nothing of normcheck's.
std::filesystem::path checked_path(const std::filesystem::path& path, const std::string& where) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw PluginError(where + "no such file (or not a regular file)");
  if (!has_elf_header(path)) throw PluginError(where + "not a shared library (no ELF header)");
  return std::filesystem::absolute(path).lexically_normal();
}

}  // namespace

std::vector<Kernel> load_plugin(const std::filesystem::path& path, const LoadOptions& options) {
  const std::string where = path.string() + ": ";
  const std::filesystem::path absolute = checked_path(path, where);
  std::unique_ptr<HostedPlugin> plugin;
  try {
    plugin = std::make_unique<HostedPlugin>(absolute, options.load_timeout_ms);
  } catch (const std::runtime_error& e) {
    throw PluginError(where + e.what());
  }
  HostedPlugin& hosted = *plugin;
  std::vector<Kernel> rows =
      rows_of(hosted.listing(), absolute, where, [&hosted](uint32_t i) { return KernelFn(remote_fn(hosted, i)); });
  loaded_plugins().push_back(std::move(plugin));
  return rows;
}

std::vector<Kernel> load_plugin_in_process(const std::filesystem::path& path) {
  const std::string where = path.string() + ": ";
  const std::filesystem::path absolute = checked_path(path, where);
  std::vector<host::LibraryKernel> listed;
  if (const std::string refused = host::open_library(absolute.c_str(), listed); !refused.empty())
    throw PluginError(where + refused);
  const std::vector<HostedPlugin::Entry> listing(listed.begin(), listed.end());
  return rows_of(listing, absolute, where, [&listed](uint32_t i) -> KernelFn {
    if (listed[i].v2) return reinterpret_cast<SpecKernelFn>(listed[i].fn);
    const auto op = host::op_of(listed[i].op);
    const auto dtype = host::dtype_of(listed[i].dtype);
    return host::typed_fn(*op, *dtype, listed[i].fn);  // rows_of checked both before asking
  });
}

void load_plugins_into_table(const std::vector<std::string>& paths, const LoadOptions& options) {
  for (const std::string& path : paths) {
    const std::vector<Kernel> rows = load_plugin(path, options);
    add_kernel_rows(rows);
  }
}

}  // namespace normcheck::fuzz
