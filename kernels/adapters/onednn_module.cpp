// libnormcheck_onednn.so's entry: the oneDNN adapters as an AdapterModule
// (adapter_module.h). The module links oneDNN; normcheck_kernels loads it on
// first use and holds the rows (onednn_rows.cpp).
#include <string>

#include <oneapi/dnnl/dnnl.hpp>

#include "adapter_module.h"

namespace normcheck::onednn {

adapters::LayerNormFwdEntry onednn_layernorm_fwd;  // onednn_layernorm_fwd.cpp
adapters::DeclinesEntry onednn_fwd_declines;
adapters::LayerNormBwdEntry onednn_layernorm_bwd;  // onednn_layernorm_bwd.cpp
adapters::DeclinesEntry onednn_bwd_declines;

}  // namespace normcheck::onednn

extern "C" [[gnu::visibility("default")]] const normcheck::adapters::AdapterModule*
normcheck_adapter_module() {
  namespace o = normcheck::onednn;
  // The oneDNN this process runs, which may be newer than the headers.
  static const std::string library = [] {
    const dnnl_version_t* v = dnnl_version();
    return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
           std::to_string(v->patch);
  }();
  static const normcheck::adapters::AdapterModule module{
      .library = library.c_str(),
      .layernorm_fwd = &o::onednn_layernorm_fwd,
      .layernorm_bwd = &o::onednn_layernorm_bwd,
      .layernorm_fwd_declines = &o::onednn_fwd_declines,
      .layernorm_bwd_declines = &o::onednn_bwd_declines,
  };
  return &module;
}
