// invoke() (normcheck/invoke.h): each op and dtype reaches the function of
// its type with the arrays of KernelArgs in the ABI's order, and a row whose
// fn does not fit its op and dtype throws, naming the kernel.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "normcheck/invoke.h"

namespace normcheck {
namespace {

// What the last recording function received, as addresses in parameter order.
struct Received {
  std::string fn;
  std::vector<const void*> pointers;
  int64_t rows = -1, cols = -1;
  float eps = -1;
};
Received g_received;

void record(const char* fn, std::vector<const void*> pointers, int64_t rows, int64_t cols, float eps) {
  g_received = {fn, std::move(pointers), rows, cols, eps};
}

template <class T>
void fwd(const T* x, const float* gamma, const float* beta, T* y, float* mean, float* rstd, int64_t rows,
         int64_t cols, float eps) {
  record(sizeof(T) == 4 ? "layernorm_fwd32" : "layernorm_fwd16", {x, gamma, beta, y, mean, rstd}, rows, cols, eps);
}
template <class T>
void bwd(const T* dy, const T* x, const float* gamma, const float* mean, const float* rstd, T* dx,
         float* dgamma, float* dbeta, int64_t rows, int64_t cols) {
  record(sizeof(T) == 4 ? "layernorm_bwd32" : "layernorm_bwd16", {dy, x, gamma, mean, rstd, dx, dgamma, dbeta},
         rows, cols, -1);
}
template <class T>
void rms_fwd(const T* x, const float* gamma, T* y, float* rrms, int64_t rows, int64_t cols, float eps) {
  record(sizeof(T) == 4 ? "rmsnorm_fwd32" : "rmsnorm_fwd16", {x, gamma, y, rrms}, rows, cols, eps);
}
template <class T>
void rms_bwd(const T* dy, const T* x, const float* gamma, const float* rrms, T* dx, float* dgamma, int64_t rows,
             int64_t cols) {
  record(sizeof(T) == 4 ? "rmsnorm_bwd32" : "rmsnorm_bwd16", {dy, x, gamma, rrms, dx, dgamma}, rows, cols, -1);
}

void ln_linear(const float* x, const float* gamma, const float* beta, const float* w, const float* bias, float* z,
               int64_t rows, int64_t cols, int64_t out_features, float eps) {
  record("layernorm_linear_fwd", {x, gamma, beta, w, bias, z, reinterpret_cast<const void*>(out_features)}, rows,
         cols, eps);
}
void rms_linear(const float* x, const float* gamma, const float* w, const float* bias, float* z, int64_t rows,
                int64_t cols, int64_t out_features, float eps) {
  record("rmsnorm_linear_fwd", {x, gamma, w, bias, z, reinterpret_cast<const void*>(out_features)}, rows, cols,
         eps);
}

Kernel row(Op op, DType dtype, KernelFn fn) {
  return Kernel{.name = "test.row", .op = op, .origin = Origin::ours, .dtype = dtype, .algorithm = "records",
                .fn = fn, .bound = nullptr};
}

// Distinct addresses for every field (never dereferenced by the recorders).
struct Arrays {
  float cells[13] = {};
  KernelArgs args() {
    return {.rows = 3, .cols = 7, .eps = 0.25f, .x = &cells[0], .dy = &cells[1], .gamma = &cells[2],
            .beta = &cells[3], .saved_mean = &cells[4], .saved_stat = &cells[5], .out = &cells[6],
            .mean = &cells[7], .stat = &cells[8], .dgamma = &cells[9], .dbeta = &cells[10],
            .weight = &cells[11], .bias = &cells[12], .out_features = 5};
  }
};

TEST(Invoke, EachOpAndDtypeReachesItsFunction) {
  Arrays a;
  const KernelArgs args = a.args();
  const auto* c = a.cells;
  const struct {
    Kernel kernel;
    const char* fn;
    std::vector<const void*> pointers;
    float eps;
  } cases[] = {
      {row(Op::layernorm_fwd, DType::f32, &fwd<float>), "layernorm_fwd32", {c, c + 2, c + 3, c + 6, c + 7, c + 8}, 0.25f},
      {row(Op::layernorm_fwd, DType::bf16, &fwd<uint16_t>), "layernorm_fwd16", {c, c + 2, c + 3, c + 6, c + 7, c + 8}, 0.25f},
      {row(Op::layernorm_bwd, DType::f32, &bwd<float>), "layernorm_bwd32",
       {c + 1, c, c + 2, c + 4, c + 5, c + 6, c + 9, c + 10}, -1},
      {row(Op::layernorm_bwd, DType::f16, &bwd<uint16_t>), "layernorm_bwd16",
       {c + 1, c, c + 2, c + 4, c + 5, c + 6, c + 9, c + 10}, -1},
      {row(Op::rmsnorm_fwd, DType::f32, &rms_fwd<float>), "rmsnorm_fwd32", {c, c + 2, c + 6, c + 8}, 0.25f},
      {row(Op::rmsnorm_fwd, DType::f16, &rms_fwd<uint16_t>), "rmsnorm_fwd16", {c, c + 2, c + 6, c + 8}, 0.25f},
      {row(Op::rmsnorm_bwd, DType::f32, &rms_bwd<float>), "rmsnorm_bwd32", {c + 1, c, c + 2, c + 5, c + 6, c + 9}, -1},
      {row(Op::rmsnorm_bwd, DType::bf16, &rms_bwd<uint16_t>), "rmsnorm_bwd16", {c + 1, c, c + 2, c + 5, c + 6, c + 9}, -1},
      // a norm followed by a Linear: W, b, z and out_features (recorded as the last "pointer")
      {row(Op::layernorm_linear_fwd, DType::f32, &ln_linear), "layernorm_linear_fwd",
       {c, c + 2, c + 3, c + 11, c + 12, c + 6, reinterpret_cast<const void*>(5)}, 0.25f},
      {row(Op::rmsnorm_linear_fwd, DType::f32, &rms_linear), "rmsnorm_linear_fwd",
       {c, c + 2, c + 11, c + 12, c + 6, reinterpret_cast<const void*>(5)}, 0.25f},
  };
  for (const auto& t : cases) {
    g_received = {};
    invoke(t.kernel, args);
    EXPECT_EQ(g_received.fn, t.fn);
    EXPECT_EQ(g_received.pointers, t.pointers) << t.fn;
    EXPECT_EQ(g_received.rows, 3) << t.fn;
    EXPECT_EQ(g_received.cols, 7) << t.fn;
    EXPECT_EQ(g_received.eps, t.eps) << t.fn;
  }
}

// The negative control of the dispatch: a row whose fn is of another op's or
// another dtype's type, or null, is refused with the kernel's name.
TEST(Invoke, MismatchedRowThrowsNamingTheKernel) {
  Arrays a;
  const Kernel mismatched[] = {
      row(Op::layernorm_bwd, DType::f32, &fwd<float>),        // another op's type
      row(Op::layernorm_fwd, DType::bf16, &fwd<float>),       // f32 type on a 16-bit row
      row(Op::rmsnorm_fwd, DType::f32, &rms_fwd<uint16_t>),   // 16-bit type on an f32 row
      row(Op::rmsnorm_bwd, DType::f16, &bwd<uint16_t>),       // LayerNorm's backward on RMSNorm
      row(Op::layernorm_fwd, DType::f32, nc_layernorm_fwd_fn{nullptr}),  // null
      row(Op::rmsnorm_linear_fwd, DType::f32, &ln_linear),    // LayerNorm's Linear on RMSNorm's
      row(Op::layernorm_linear_fwd, DType::f32, &fwd<float>), // a plain norm's type on a norm-linear row
  };
  for (const Kernel& k : mismatched) {
    g_received = {};
    try {
      invoke(k, a.args());
      ADD_FAILURE() << "invoke called a mismatched row: " << to_string(k.op) << " " << to_string(k.dtype);
    } catch (const std::logic_error& e) {
      EXPECT_NE(std::string(e.what()).find("test.row"), std::string::npos) << e.what();
    }
    EXPECT_EQ(g_received.fn, "") << "a function was called for " << to_string(k.op);
  }
}

}  // namespace
}  // namespace normcheck
