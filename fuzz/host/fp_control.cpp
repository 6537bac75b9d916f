#include "fp_control.h"

#include <cfenv>

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

namespace normcheck::host {
namespace {

void join(std::string& to, const std::string& part) {
  if (!to.empty()) to += ", ";
  to += part;
}

#if defined(__x86_64__)
// MXCSR: bits 0-5 sticky flags (not control), 6 DAZ, 7-12 the masks of
// invalid, denormal, divide-by-zero, overflow, underflow, precision, 13-14
// rounding, 15 FTZ. The x87 control word: bits 0-5 the same masks, 8-9
// precision, 10-11 rounding (Intel SDM vol. 1, 10.2.3 and 8.1.5).
constexpr uint32_t kMxcsrControl = 0xffc0;
constexpr const char* kExceptions[6] = {"invalid", "denormal", "divide-by-zero", "overflow", "underflow",
                                        "inexact"};
constexpr const char* kRounding[4] = {"to nearest", "toward -inf", "toward +inf", "toward zero"};
constexpr const char* kPrecision[4] = {"24-bit", "reserved", "53-bit", "64-bit"};

uint16_t read_x87() {
  uint16_t cw = 0;
  asm volatile("fnstcw %0" : "=m"(cw));
  return cw;
}

void write_x87(uint16_t cw) { asm volatile("fldcw %0" : : "m"(cw)); }

// The exceptions whose mask bit (at `first`) is clear in `to` and set in
// `from` ("unmasked"), or the reverse ("masked").
void traps(std::string& out, const char* unit, uint32_t from, uint32_t to, int first) {
  std::string unmasked, masked;
  for (int i = 0; i < 6; ++i) {
    const bool was = (from >> (first + i)) & 1, is = (to >> (first + i)) & 1;
    if (was && !is) join(unmasked, kExceptions[i]);
    if (!was && is) join(masked, kExceptions[i]);
  }
  if (!unmasked.empty()) join(out, std::string(unit) + "traps unmasked: " + unmasked);
  if (!masked.empty()) join(out, std::string(unit) + "traps masked: " + masked);
}
#endif

}  // namespace

#if defined(__x86_64__)
FpControl read_fp_control() { return {_mm_getcsr() & kMxcsrControl, read_x87()}; }

void write_fp_control(FpControl c) {
  // The sticky flags are kept as they are: they record, they do not decide.
  _mm_setcsr((_mm_getcsr() & ~kMxcsrControl) | (c.sse & kMxcsrControl));
  write_x87(static_cast<uint16_t>(c.x87));
}

FpControl default_fp_control() { return {0x1f80, 0x037f}; }

std::string describe_fp_change(FpControl from, FpControl to) {
  std::string out;
  const auto bit = [](uint32_t v, int b) { return (v >> b) & 1; };
  if (bit(from.sse, 15) != bit(to.sse, 15)) join(out, std::string("flush-to-zero (FTZ) ") + (bit(to.sse, 15) ? "on" : "off"));
  if (bit(from.sse, 6) != bit(to.sse, 6))
    join(out, std::string("denormals-are-zero (DAZ) ") + (bit(to.sse, 6) ? "on" : "off"));
  if (((from.sse >> 13) & 3) != ((to.sse >> 13) & 3)) join(out, std::string("rounding ") + kRounding[(to.sse >> 13) & 3]);
  traps(out, "", from.sse, to.sse, 7);
  if (((from.x87 >> 10) & 3) != ((to.x87 >> 10) & 3))
    join(out, std::string("x87 rounding ") + kRounding[(to.x87 >> 10) & 3]);
  if (((from.x87 >> 8) & 3) != ((to.x87 >> 8) & 3))
    join(out, std::string("x87 precision ") + kPrecision[(to.x87 >> 8) & 3]);
  traps(out, "x87 ", from.x87, to.x87, 0);
  return out;
}
#else
FpControl read_fp_control() {
  uint32_t traps = 0;
#if defined(__GLIBC__)
  traps = static_cast<uint32_t>(fegetexcept());
#endif
  return {static_cast<uint32_t>(fegetround()) | traps << 16, 0};
}

void write_fp_control(FpControl c) {
  fesetround(static_cast<int>(c.sse & 0xffff));
#if defined(__GLIBC__)
  fedisableexcept(FE_ALL_EXCEPT);
  feenableexcept(static_cast<int>(c.sse >> 16));
#endif
}

FpControl default_fp_control() { return {static_cast<uint32_t>(FE_TONEAREST), 0}; }

std::string describe_fp_change(FpControl from, FpControl to) {
  std::string out;
  if ((from.sse & 0xffff) != (to.sse & 0xffff)) join(out, "rounding mode changed");
  if ((from.sse >> 16) != (to.sse >> 16)) join(out, "traps unmasked or masked");
  return out;
}
#endif

}  // namespace normcheck::host
