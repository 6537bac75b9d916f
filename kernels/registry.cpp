// The kernel table. Each row is defined next to its implementation (one
// kernel per file) as `constinit const Kernel`, so the copies below read
// constant-initialized objects whatever the static initialization order.
// Order: as builtin_kernels.inc lists them (ours, the controls, the
// third-party adapters); `normcheck list` prints this order.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "normcheck/kernel.h"
#include "normcheck/reimplementation.h"

namespace normcheck {

#define NORMCHECK_KERNEL(row) extern const Kernel row;
#include "builtin_kernels.inc"
#undef NORMCHECK_KERNEL

namespace {

std::vector<Kernel>& mutable_table() {
  static std::vector<Kernel> table = {
#define NORMCHECK_KERNEL(row) row,
#include "builtin_kernels.inc"
#undef NORMCHECK_KERNEL
  };
  return table;
}

}  // namespace

std::span<const Kernel> kernel_table() { return mutable_table(); }

void add_kernel_rows(std::span<const Kernel> rows) {
  std::vector<Kernel>& table = mutable_table();
  for (const Kernel& row : rows) {
    if (find_kernel(row.name))
      throw std::invalid_argument("kernel name '" + std::string(row.name) + "' is already in the table");
    table.push_back(row);
  }
}

const Kernel* find_kernel(std::string_view name) {
  const auto table = kernel_table();
  const auto it = std::find_if(table.begin(), table.end(),
                               [&](const Kernel& k) { return k.name == name; });
  return it == table.end() ? nullptr : &*it;
}

const Kernel* reimplementation_of(const Kernel& kernel) {
  if (kernel.family != Family::libtorch || kernel.dtype != DType::f32) return nullptr;
  if (kernel.op == Op::layernorm_fwd) return find_kernel(kLayerNormFwdPytorchForm.name);
  if (kernel.op == Op::layernorm_bwd) return find_kernel(kLayerNormBwdPytorchForm.name);
  return nullptr;
}

}  // namespace normcheck
