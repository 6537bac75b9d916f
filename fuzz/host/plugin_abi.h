// The plugin ABI's values (normcheck/plugin.h) as the kernel table's:
// nc_op and nc_dtype as Op and DType, and a listed function as the KernelFn
// its op and dtype call for.
#pragma once

#include <optional>

#include "normcheck/kernel.h"

namespace normcheck::host {

std::optional<Op> op_of(int op);
std::optional<DType> dtype_of(int dtype);

// `fn` as the type its op and dtype call for (the ABI says it has that type).
KernelFn typed_fn(Op op, DType dtype, void (*fn)(void));

}  // namespace normcheck::host
