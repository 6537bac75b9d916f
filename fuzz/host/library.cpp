#include "library.h"

#include <dlfcn.h>

#include <cstring>
#include <string>

#include "normcheck/plugin.h"

namespace normcheck::host {
namespace {

// A plugin may put any int in an enum field (nc_op, nc_dtype): read the
// field's bytes as an int rather than load an enum value it may not hold.
template <class Field>
int32_t as_int(const Field& field) {
  static_assert(sizeof(field) == sizeof(int32_t));
  int32_t value = 0;
  std::memcpy(&value, &field, sizeof value);
  return value;
}

struct Lists {
  normcheck_plugin_kernels_fn list;
  normcheck_plugin_kernels_ext_fn ext;  // null: not exported
  normcheck_plugin_kernels_v2_fn v2;    // null: not exported
  normcheck_plugin_domain_fn domain;    // null: not exported
};

// Calls the list functions once; returns the refusal's reason, or "".
std::string list_once(const Lists& lists, std::vector<LibraryKernel>& out) {
  const auto add = [&out](const char* name, int32_t op, int32_t dtype, bool extension, void (*fn)(void)) {
    LibraryKernel k;
    k.name = name ? name : "";
    k.op = op, k.dtype = dtype, k.extension = extension;
    k.has_name = name != nullptr;
    k.has_fn = fn != nullptr;
    k.fn = fn;
    out.push_back(std::move(k));
  };
  const normcheck_plugin_kernels_fn list = lists.list;
  const normcheck_plugin_kernels_ext_fn list_ext = lists.ext;
  int n = -1;
  const nc_kernel* kernels = list(&n);
  if (n < 0 || (n > 0 && !kernels))
    return "normcheck_plugin_kernels gave n = " + std::to_string(n) + (kernels ? "" : " and a null list");
  for (int i = 0; i < n; ++i) add(kernels[i].name, as_int(kernels[i].op), NC_F32, false, kernels[i].fn);
  if (list_ext) {
    int m = -1;
    const nc_kernel_ext* ext = list_ext(&m);
    if (m < 0 || (m > 0 && !ext))
      return "normcheck_plugin_kernels_ext gave n = " + std::to_string(m) + (ext ? "" : " and a null list");
    for (int i = 0; i < m; ++i) add(ext[i].name, ext[i].op, as_int(ext[i].dtype), true, ext[i].fn);
  }
  if (lists.v2) {
    int m = -1;
    const nc_kernel_v2* v2 = lists.v2(&m);
    if (m < 0 || (m > 0 && !v2))
      return "normcheck_plugin_kernels_v2 gave n = " + std::to_string(m) + (v2 ? "" : " and a null list");
    for (int i = 0; i < m; ++i) {
      add(v2[i].name, 0, 0, false, reinterpret_cast<void (*)(void)>(v2[i].fn));
      LibraryKernel& k = out.back();
      k.v2 = true;
      k.has_spec = v2[i].spec != nullptr;
      k.has_domain = v2[i].domain != nullptr;
      k.spec = v2[i].spec ? v2[i].spec : "";
      k.domain = v2[i].domain ? v2[i].domain : "";
    }
  }
  // Asked once the lists are copied: a kernel with a null name is refused
  // by the loader and never asked about, and a version-2 kernel states its
  // domain in its own entry.
  if (lists.domain)
    for (LibraryKernel& k : out)
      if (k.has_name && !k.v2)
        if (const char* text = lists.domain(k.name.c_str())) {
          k.has_domain = true;
          k.domain = text;
        }
  return {};
}

}  // namespace

std::string open_library(const char* path, std::vector<LibraryKernel>& kernels) {
  void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const std::string reason = dlerror();
    if (reason.find("cannot open shared object file") != std::string::npos && reason.rfind(path, 0) != 0)
      return "a library it depends on is missing: " + reason;
    return "not a loadable shared library: " + reason;
  }
  const auto abi = reinterpret_cast<normcheck_plugin_abi_fn>(dlsym(handle, "normcheck_plugin_abi"));
  const auto list = reinterpret_cast<normcheck_plugin_kernels_fn>(dlsym(handle, "normcheck_plugin_kernels"));
  const Lists lists{list,
                    reinterpret_cast<normcheck_plugin_kernels_ext_fn>(dlsym(handle, "normcheck_plugin_kernels_ext")),
                    reinterpret_cast<normcheck_plugin_kernels_v2_fn>(dlsym(handle, "normcheck_plugin_kernels_v2")),
                    reinterpret_cast<normcheck_plugin_domain_fn>(dlsym(handle, "normcheck_plugin_domain"))};
  if (!abi) return "missing symbol normcheck_plugin_abi";
  if (!list) return "missing symbol normcheck_plugin_kernels";
  const int version = abi();
  if (version != NORMCHECK_ABI_VERSION && version != NORMCHECK_ABI_VERSION_2)
    return "ABI version " + std::to_string(version) + ", normcheck supports " + std::to_string(NORMCHECK_ABI_VERSION) +
           " and " + std::to_string(NORMCHECK_ABI_VERSION_2);
  if (std::string refused = list_once(lists, kernels); !refused.empty()) return refused;
  std::vector<LibraryKernel> again;
  if (std::string refused = list_once(lists, again); !refused.empty()) return refused;
  if (again != kernels) return "the library lists different kernels on a second call";
  return {};
}

}  // namespace normcheck::host
