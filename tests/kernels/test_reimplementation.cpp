// reimplementation_of() (normcheck/reimplementation.h): the kernel of ours
// whose bound a third party's algorithm is also measured against. It is of
// ours, of the same op and dtype, and it is found only for a third party
// whose algorithm it reimplements (libtorch's float32 rows), never for
// libtorch's bf16 backward (no kernel of ours is its bf16 form), oneDNN's
// two-pass kernels, ours, the controls, or a plugin.
#include <gtest/gtest.h>

#include "normcheck/kernel.h"
#include "normcheck/reimplementation.h"

namespace normcheck {
namespace {

TEST(Reimplementation, IsOursOfTheSameOpAndDtype) {
  int found = 0;
  for (const Kernel& k : kernel_table()) {
    const Kernel* r = reimplementation_of(k);
    if (k.family != Family::libtorch || k.dtype != DType::f32) {
      EXPECT_EQ(r, nullptr) << k.name;
      continue;
    }
    ASSERT_NE(r, nullptr) << k.name;
    ++found;
    EXPECT_EQ(r->origin, Origin::ours) << k.name;
    EXPECT_EQ(r->op, k.op) << k.name;
    EXPECT_EQ(r->dtype, k.dtype) << k.name;
    EXPECT_NE(r->bound, k.bound) << k.name << ": held to the default bound, measured against another";
  }
  if (found == 0) GTEST_SKIP() << "this build has no libtorch rows";
}

}  // namespace
}  // namespace normcheck
