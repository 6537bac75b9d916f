#include "plugin_loader.h"

#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
#include <optional>
#include <set>

#include "normcheck/bounds.h"
#include "normcheck/plugin.h"
#include "plugin_bounds.h"

namespace normcheck::fuzz {
namespace {

// Names and paths the rows' string_views point into, for the process's life.
std::deque<std::string>& owned_strings() {
  static std::deque<std::string> strings;
  return strings;
}

std::string_view own(std::string s) { return owned_strings().emplace_back(std::move(s)); }

bool has_elf_header(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  in.read(magic, 4);
  return in.gcount() == 4 && std::memcmp(magic, "\x7f" "ELF", 4) == 0;
}

// One entry of either list, before it becomes a row.
struct Entry {
  const char* name;
  int op;
  int dtype;
  void (*fn)(void);
};

std::optional<Op> op_of(int op) {
  switch (op) {
    case NC_LAYERNORM_FWD: return Op::layernorm_fwd;
    case NC_LAYERNORM_BWD: return Op::layernorm_bwd;
    case NC_RMSNORM_FWD: return Op::rmsnorm_fwd;
    case NC_RMSNORM_BWD: return Op::rmsnorm_bwd;
    default: return std::nullopt;
  }
}

std::optional<DType> dtype_of(int dtype) {
  switch (dtype) {
    case NC_F32: return DType::f32;
    case NC_BF16: return DType::bf16;
    case NC_F16: return DType::f16;
    default: return std::nullopt;
  }
}

// The fn as the type its op and dtype call for (the ABI says it has that type).
KernelFn typed(Op op, DType dtype, void (*fn)(void)) {
  const bool f32 = dtype == DType::f32;
  switch (op) {
    case Op::layernorm_fwd:
      return f32 ? KernelFn(reinterpret_cast<nc_layernorm_fwd_fn>(fn))
                 : KernelFn(reinterpret_cast<nc_layernorm_fwd16_fn>(fn));
    case Op::layernorm_bwd:
      return f32 ? KernelFn(reinterpret_cast<nc_layernorm_bwd_fn>(fn))
                 : KernelFn(reinterpret_cast<nc_layernorm_bwd16_fn>(fn));
    case Op::rmsnorm_fwd:
      return f32 ? KernelFn(reinterpret_cast<nc_rmsnorm_fwd_fn>(fn))
                 : KernelFn(reinterpret_cast<nc_rmsnorm_fwd16_fn>(fn));
    case Op::rmsnorm_bwd:
      return f32 ? KernelFn(reinterpret_cast<nc_rmsnorm_bwd_fn>(fn))
                 : KernelFn(reinterpret_cast<nc_rmsnorm_bwd16_fn>(fn));
    case Op::layernorm_linear_fwd:
    case Op::rmsnorm_linear_fwd: break;  // not in the plugin ABI: op_of never returns them
  }
  throw std::logic_error("unreachable");
}

// dlopen + every ABI check; returns the rows or throws PluginError.
std::vector<Kernel> open_and_check(const std::filesystem::path& path) {
  const std::string where = path.string() + ": ";
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw PluginError(where + "no such file (or not a regular file)");
  if (!has_elf_header(path)) throw PluginError(where + "not a shared library (no ELF header)");
  // dlopen searches the library path for a name without a slash.
  const std::string absolute = std::filesystem::absolute(path).string();
  void* handle = dlopen(absolute.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const std::string reason = dlerror();
    if (reason.find("cannot open shared object file") != std::string::npos &&
        reason.rfind(absolute, 0) != 0)
      throw PluginError(where + "a library it depends on is missing: " + reason);
    throw PluginError(where + "not a loadable shared library: " + reason);
  }
  const auto abi = reinterpret_cast<normcheck_plugin_abi_fn>(dlsym(handle, "normcheck_plugin_abi"));
  const auto list = reinterpret_cast<normcheck_plugin_kernels_fn>(dlsym(handle, "normcheck_plugin_kernels"));
  const auto list_ext =
      reinterpret_cast<normcheck_plugin_kernels_ext_fn>(dlsym(handle, "normcheck_plugin_kernels_ext"));
  if (!abi) throw PluginError(where + "missing symbol normcheck_plugin_abi");
  if (!list) throw PluginError(where + "missing symbol normcheck_plugin_kernels");
  const int version = abi();
  if (version != NORMCHECK_ABI_VERSION)
    throw PluginError(where + "ABI version " + std::to_string(version) + ", normcheck supports " +
                      std::to_string(NORMCHECK_ABI_VERSION));

  // A plugin may put any int in an enum field (nc_op, nc_dtype): read the
  // field's bytes as an int rather than load an enum value it may not hold.
  const auto as_int = [](const auto& field) {
    static_assert(sizeof(field) == sizeof(int));
    int value = 0;
    std::memcpy(&value, &field, sizeof value);
    return value;
  };
  std::vector<Entry> entries;
  int n = -1;
  const nc_kernel* kernels = list(&n);
  if (n < 0 || (n > 0 && !kernels))
    throw PluginError(where + "normcheck_plugin_kernels gave n = " + std::to_string(n) +
                      (kernels ? "" : " and a null list"));
  for (int i = 0; i < n; ++i)
    entries.push_back({kernels[i].name, as_int(kernels[i].op), NC_F32, kernels[i].fn});
  if (list_ext) {
    int m = -1;
    const nc_kernel_ext* ext = list_ext(&m);
    if (m < 0 || (m > 0 && !ext))
      throw PluginError(where + "normcheck_plugin_kernels_ext gave n = " + std::to_string(m) +
                        (ext ? "" : " and a null list"));
    for (int i = 0; i < m; ++i) entries.push_back({ext[i].name, ext[i].op, as_int(ext[i].dtype), ext[i].fn});
  }
  if (entries.empty()) throw PluginError(where + "the plugin lists no kernels");

  const Kernel* twopass = find_kernel("layernorm_fwd.twopass");
  if (!twopass) throw std::logic_error("the table has no layernorm_fwd.twopass, whose range plugins get");
  const std::string_view algorithm = own("plugin " + path.filename().string() + " (default bound)");
  std::set<std::string> names;
  std::vector<Kernel> rows;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const Entry& e = entries[i];
    const std::string which = "kernel #" + std::to_string(i);
    if (!e.name || !*e.name) throw PluginError(where + which + " has a null or empty name");
    const std::string name = e.name;
    for (const char c : name)
      if (c <= ' ' || c > '~' || c == '#' || c == '"' || c == '\\' || c == '\'')
        throw PluginError(where + which + " has a name with a blank, quote or non-printable character");
    if (!names.insert(name).second) throw PluginError(where + "duplicate kernel name '" + name + "'");
    if (find_kernel(name)) throw PluginError(where + "duplicate kernel name '" + name + "': already in the table");
    const auto op = op_of(e.op);
    if (!op || (e.op == NC_RMSNORM_BWD && i < static_cast<std::size_t>(n)))
      throw PluginError(where + "kernel '" + name + "' has an unknown op " + std::to_string(e.op));
    const auto dtype = dtype_of(e.dtype);
    if (!dtype) throw PluginError(where + "kernel '" + name + "' has an unknown dtype " + std::to_string(e.dtype));
    if (!e.fn) throw PluginError(where + "kernel '" + name + "' has a null function");
    Kernel k{.name = own(name),
             .op = *op,
             .origin = Origin::plugin,
             .dtype = *dtype,
             .algorithm = algorithm,
             .fn = typed(*op, *dtype, e.fn),
             .bound = plugin_bound(*op, *dtype),
             .range = twopass->range};
    rows.push_back(k);
  }
  return rows;
}

}  // namespace

std::vector<Kernel> load_plugin(const std::filesystem::path& path) {
  // First in a child: a library that crashes while loading or listing takes
  // only the child down. The child reports the refusal's text through a pipe.
  int fds[2];
  if (pipe(fds) != 0) throw PluginError(path.string() + ": cannot create a pipe");
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw PluginError(path.string() + ": cannot fork");
  if (pid == 0) {
    close(fds[0]);
    std::string message;
    try {
      open_and_check(path);
    } catch (const std::exception& e) {
      message = e.what();
    }
    const char* p = message.data();
    std::size_t left = message.size();
    while (left > 0) {
      const ssize_t w = write(fds[1], p, left);
      if (w <= 0) break;
      p += w;
      left -= static_cast<std::size_t>(w);
    }
    _exit(message.empty() ? 0 : 3);
  }
  close(fds[1]);
  std::string message;
  char buffer[512];
  for (ssize_t r; (r = read(fds[0], buffer, sizeof buffer)) > 0;) message.append(buffer, static_cast<std::size_t>(r));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status))
    throw PluginError(path.string() + ": the library crashed while loading or listing its kernels (signal " +
                      std::to_string(WTERMSIG(status)) + ", " + strsignal(WTERMSIG(status)) + ")");
  if (!message.empty()) throw PluginError(message);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw PluginError(path.string() + ": the library ended the process while loading (exit status " +
                      std::to_string(WEXITSTATUS(status)) + ")");
  return open_and_check(path);
}

void load_plugins_into_table(const std::vector<std::string>& paths) {
  for (const std::string& path : paths) {
    const std::vector<Kernel> rows = load_plugin(path);
    add_kernel_rows(rows);
  }
}

}  // namespace normcheck::fuzz
