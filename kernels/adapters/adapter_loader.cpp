// dlopen() of the adapter modules, on first use. A module that cannot be
// loaded (the module, or oneDNN / libtorch behind it, missing or broken)
// becomes a LoadedModule with the reason, which the rows report as their
// decline (adapter_rows.h); nothing here throws or aborts.
#include "adapter_loader.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>

namespace normcheck::adapters {
namespace {

LoadedModule load(const char* file) {
  const std::string path = (std::filesystem::path(adapter_directory()) / file).string();
  const std::string where = "cannot load the adapter module " + path + ": ";
  // RTLD_LOCAL: the module's symbols (and its library's) stay out of the
  // global namespace. The module is never closed: oneDNN and libtorch keep
  // threads and thread-local state that outlive any one call.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    // dlerror() names the file it could not open: the module itself, or a
    // library the module needs (then the module's path is added).
    const std::string reason = dlerror();
    if (reason.starts_with(path)) return {nullptr, "cannot load the adapter module " + reason};
    return {nullptr, where + reason};
  }
  const auto entry =
      reinterpret_cast<normcheck_adapter_module_fn>(dlsym(handle, NORMCHECK_ADAPTER_MODULE_SYMBOL));
  if (!entry) return {nullptr, where + "no symbol " NORMCHECK_ADAPTER_MODULE_SYMBOL};
  const AdapterModule* module = entry();
  if (!module || module->abi != kAdapterModuleAbi)
    return {nullptr, where + "built for another normcheck (module ABI " +
                         std::to_string(module ? module->abi : -1) + ", expected " +
                         std::to_string(kAdapterModuleAbi) + ")"};
  return {module, {}};
}

}  // namespace

std::string adapter_directory() {
  if (const char* dir = std::getenv("NORMCHECK_ADAPTER_DIR"); dir && *dir) return dir;
  // The file this function's code was loaded from: libnormcheck_kernels.so.
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&adapter_directory), &info) == 0 || !info.dli_fname)
    return ".";
  std::error_code ec;
  const auto library = std::filesystem::absolute(info.dli_fname, ec);
  return (ec ? std::filesystem::path(info.dli_fname) : library).parent_path().string();
}

const LoadedModule& onednn_module() {
  static const LoadedModule loaded = load("libnormcheck_onednn.so");
  return loaded;
}

const LoadedModule& torch_module() {
  static const LoadedModule loaded = load("libnormcheck_torch.so");
  return loaded;
}

}  // namespace normcheck::adapters
