#include "kernel_call.h"

#include <optional>

namespace normcheck::evaluation {

MainRun call_kernel(const Kernel& k, KernelArgs args, const StoredInput& x, const StoredInput* dy,
                    ArrayLayout layout, const EvaluateOptions& options) {
  // the main output: y or dx (rows x cols), or z of a norm followed by a Linear (rows x out_features)
  const auto n = static_cast<std::size_t>(args.rows * (is_norm_linear(k.op) ? args.out_features : args.cols));
  const auto run = [&](const auto& x_values, const auto* dy_values, auto sentinel, const auto& read_out) {
    using Array = GuardedArray<decltype(sentinel)>;
    Array x_in(x_values, layout);
    std::optional<Array> dy_in;
    if (dy_values) dy_in.emplace(*dy_values, layout);
    Array out(n, layout, sentinel);
    args.x = x_in.data();
    args.dy = dy_in ? dy_in->data() : nullptr;
    args.out = out.data();
    if (options.around_call) options.around_call(true, options.context);
    invoke(k, args);
    if (options.around_call) options.around_call(false, options.context);
    MainRun r;
    r.out = read_out(out);
    r.memory_ok = x_in.guards_intact() && (!dy_in || dy_in->guards_intact()) && out.guards_intact();
    r.inputs_kept = x_in.holds(x_values) && (!dy_in || dy_in->holds(*dy_values));
    return r;
  };
  if (k.dtype == DType::f32)
    return run(x.widened, dy ? &dy->widened : nullptr, sentinel32(),
               [](const FloatArray& a) { return read(a); });
  return run(x.bits, dy ? &dy->bits : nullptr, sentinel16(k.dtype),
             [&](const HalfArray& a) { return read(a, k.dtype); });
}

}  // namespace normcheck::evaluation
