// fuzz/host/fp_control.h: reading and writing the floating-point control
// state round-trips, and each change is described in the words a kernel
// author knows it by (the findings quote them).
#include "host/fp_control.h"

#include <cfenv>

#include <gtest/gtest.h>

namespace normcheck::host {
namespace {

// Restores the state a test changed, even when an assertion ends it early.
struct Restore {
  FpControl saved = read_fp_control();
  ~Restore() { write_fp_control(saved); }
};

TEST(FpControl, AProcessStartsInTheDefaultState) { EXPECT_EQ(read_fp_control(), default_fp_control()); }

TEST(FpControl, WriteThenReadGivesTheStateBack) {
  Restore restore;
  ASSERT_EQ(fesetround(FE_UPWARD), 0);
  const FpControl upward = read_fp_control();
  EXPECT_NE(upward, default_fp_control());
  write_fp_control(default_fp_control());
  EXPECT_EQ(read_fp_control(), default_fp_control());
  EXPECT_EQ(fegetround(), FE_TONEAREST);
  write_fp_control(upward);
  EXPECT_EQ(fegetround(), FE_UPWARD);
}

TEST(FpControl, NoChangeIsDescribedAsNothing) {
  EXPECT_EQ(describe_fp_change(default_fp_control(), default_fp_control()), "");
}

#if defined(__x86_64__)
TEST(FpControl, EachChangeIsNamed) {
  const FpControl d = default_fp_control();
  // crtfastmath.o's constructor: MXCSR |= FTZ (bit 15) | DAZ (bit 6).
  EXPECT_EQ(describe_fp_change(d, {d.sse | 0x8040, d.x87}), "flush-to-zero (FTZ) on, denormals-are-zero (DAZ) on");
  EXPECT_EQ(describe_fp_change(d, {(d.sse & ~0x6000u) | 0x4000u, d.x87}), "rounding toward +inf");
  // feenableexcept(FE_INVALID) clears the invalid mask (bit 7; x87 bit 0).
  EXPECT_EQ(describe_fp_change(d, {d.sse & ~0x80u, d.x87 & ~1u}),
            "traps unmasked: invalid, x87 traps unmasked: invalid");
  EXPECT_EQ(describe_fp_change({d.sse | 0x8000, d.x87}, d), "flush-to-zero (FTZ) off");
  EXPECT_EQ(describe_fp_change(d, {d.sse, (d.x87 & ~0x300u) | 0x200u}), "x87 precision 53-bit");
}

TEST(FpControl, TheStickyFlagsAreNotControl) {
  Restore restore;
  volatile float zero = 0;
  volatile float r = 1 / zero;  // raises divide-by-zero: a flag, not a change of control
  (void)r;
  EXPECT_EQ(read_fp_control(), default_fp_control());
}
#endif

}  // namespace
}  // namespace normcheck::host
