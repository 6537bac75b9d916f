// Adapter modules loaded on first use (see adapter_module.h for why).
//
// Where: the directory named by the environment variable NORMCHECK_ADAPTER_DIR
// when it is set and not empty, else the directory libnormcheck_kernels.so was
// loaded from; the modules are built and installed next to it.
// When: the first call of onednn_module() / torch_module() in the process
// loads it, once (thread-safe: a function-local static); every later call
// returns the same result, a failure included.
#pragma once

#include <string>

#include "adapter_module.h"

namespace normcheck::adapters {

struct LoadedModule {
  const AdapterModule* module = nullptr;  // nullptr: could not be loaded
  std::string failure;                    // why not (empty when loaded)
};

const LoadedModule& onednn_module();  // libnormcheck_onednn.so
const LoadedModule& torch_module();   // libnormcheck_torch.so

// The directory the modules are looked for in (see above).
std::string adapter_directory();

}  // namespace normcheck::adapters
