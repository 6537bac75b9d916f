// The floating-point control state that decides a kernel's arithmetic: the
// rounding mode, flush-to-zero and denormals-are-zero, which exceptions trap,
// and on x86 the x87 unit's own rounding, precision and traps.
//
// It is per thread and inherited by whatever runs after it, so a library
// that changes it (gcc links crtfastmath.o into a library built with
// -ffast-math, whose constructor sets FTZ and DAZ when the library is
// loaded) changes the results of every computation of the process that loads
// it. The kernel host records it before and after loading a plugin and
// around each call; normcheck describes any change (docs/plugins.md).
#pragma once

#include <cstdint>
#include <string>

namespace normcheck::host {

struct FpControl {
  // x86-64: MXCSR without its six sticky exception flags, and the x87
  // control word. Elsewhere: the <cfenv> rounding mode and, with glibc, the
  // enabled traps (fegetexcept), in `sse`; `x87` is 0.
  uint32_t sse = 0;
  uint32_t x87 = 0;
  bool operator==(const FpControl&) const = default;
};

FpControl read_fp_control();
void write_fp_control(FpControl control);

// The state every C program starts in: round to nearest, no flushing, every
// exception masked (x87: 64-bit significands).
FpControl default_fp_control();

// What differs in `to` from `from`, in words: "flush-to-zero (FTZ) on,
// rounding toward +inf, traps unmasked: invalid". Empty when they are equal.
std::string describe_fp_change(FpControl from, FpControl to);

}  // namespace normcheck::host
