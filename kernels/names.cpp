// The names of the table's enums (kernel.h), as `normcheck list`, problem
// files and reports print them. A file of its own so that the kernel host
// (fuzz/host/), which links invoke() and nothing of the table, has them too.
#include "normcheck/kernel.h"

namespace normcheck {

std::string_view to_string(Op op) {
  switch (op) {
    case Op::layernorm_fwd: return "layernorm_fwd";
    case Op::layernorm_bwd: return "layernorm_bwd";
    case Op::rmsnorm_fwd: return "rmsnorm_fwd";
    case Op::rmsnorm_bwd: return "rmsnorm_bwd";
    case Op::layernorm_linear_fwd: return "layernorm_linear_fwd";
    case Op::rmsnorm_linear_fwd: return "rmsnorm_linear_fwd";
  }
  return "?";
}

std::string_view to_string(Origin origin) {
  switch (origin) {
    case Origin::ours: return "ours";
    case Origin::control: return "control";
    case Origin::third_party: return "third_party";
    case Origin::plugin: return "plugin";
  }
  return "?";
}

std::string_view to_string(DType dtype) {
  switch (dtype) {
    case DType::f32: return "f32";
    case DType::bf16: return "bf16";
    case DType::f16: return "f16";
  }
  return "?";
}

std::string_view to_string(Family family) {
  switch (family) {
    case Family::scalar: return "scalar";
    case Family::highway: return "highway";
    case Family::onednn: return "onednn";
    case Family::libtorch: return "libtorch";
    case Family::external: return "external";
  }
  return "?";
}

}  // namespace normcheck
