// The Highway kernels give the same bits for 1, 2, 3 and 4 threads (fixed
// partition and merge order), on shapes that take each threading path: many
// rows (row blocks, several backward partials to merge), a few long rows
// (chunks split over the pool), one long row. Also the pool itself.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_seed.h"
#include "normcheck/invoke.h"
#include "simd/row_partition.h"
#include "simd/thread_pool.h"
#include "simd_test_support.h"
#include "thread_guards.h"

namespace normcheck {
namespace {

using test::EveryCallParallel;
using test::ThreadCountGuard;

// Inputs of any op as floats (16-bit kernels get the top half of each float:
// any bits will do for a determinism check).
struct Inputs {
  int64_t rows, cols;
  std::vector<float> x, dy, gamma, beta, mean, rstd;
};

Inputs random_inputs(int64_t rows, int64_t cols, std::mt19937_64& rng) {
  std::normal_distribution<float> normal;
  Inputs in{rows, cols, {}, {}, {}, {}, {}, {}};
  for (int64_t i = 0; i < rows * cols; ++i) {
    in.x.push_back(5 + normal(rng));
    in.dy.push_back(normal(rng));
  }
  for (int64_t j = 0; j < cols; ++j) {
    in.gamma.push_back(1 + normal(rng) / 4);
    in.beta.push_back(normal(rng));
  }
  for (int64_t r = 0; r < rows; ++r) {
    in.mean.push_back(5 + normal(rng) / 64);
    in.rstd.push_back(1 + normal(rng) / 64);
  }
  return in;
}

std::vector<uint16_t> top_halves(const std::vector<float>& v) {
  std::vector<uint16_t> out;
  for (const float f : v) {
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    out.push_back(static_cast<uint16_t>(bits >> 16));
  }
  return out;
}

template <class T>
void append_bytes(std::vector<unsigned char>& out, const std::vector<T>& v) {
  const auto* p = reinterpret_cast<const unsigned char*>(v.data());
  out.insert(out.end(), p, p + v.size() * sizeof(T));
}

// Runs the kernel and returns every output's bytes, concatenated: the main
// output, then the op's statistics or column sums, then residual_out (a
// kernel whose spec adds a residual gets dy as its residual).
std::vector<unsigned char> run(const Kernel& k, const Inputs& in) {
  const auto n = static_cast<size_t>(in.rows * in.cols), w = static_cast<size_t>(in.cols),
             h = static_cast<size_t>(in.rows);
  const bool wide = k.dtype == DType::f32;
  const std::vector<uint16_t> x16 = top_halves(in.x), dy16 = top_halves(in.dy);
  std::vector<float> out32(wide ? n : 0), mean(h), stat(h), dgamma(w), dbeta(w);
  std::vector<uint16_t> out16(wide ? 0 : n);
  std::vector<float> sum32(wide ? n : 0);
  std::vector<uint16_t> sum16(wide ? 0 : n);
  KernelArgs a{.rows = in.rows, .cols = in.cols, .eps = 1e-5f};
  a.x = wide ? static_cast<const void*>(in.x.data()) : x16.data();
  a.dy = wide ? static_cast<const void*>(in.dy.data()) : dy16.data();
  a.out = wide ? static_cast<void*>(out32.data()) : out16.data();
  a.gamma = in.gamma.data(), a.beta = in.beta.data();
  a.saved_mean = in.mean.data(), a.saved_stat = in.rstd.data();
  a.mean = mean.data(), a.stat = stat.data(), a.dgamma = dgamma.data(), a.dbeta = dbeta.data();
  a.residual = a.dy;
  a.residual_out = wide ? static_cast<void*>(sum32.data()) : sum16.data();
  invoke(k, a);
  std::vector<unsigned char> out;
  if (wide)
    append_bytes(out, out32);
  else
    append_bytes(out, out16);
  switch (k.op) {
    case Op::layernorm_fwd: append_bytes(out, mean), append_bytes(out, stat); break;
    case Op::layernorm_bwd: append_bytes(out, dgamma), append_bytes(out, dbeta); break;
    case Op::rmsnorm_fwd: append_bytes(out, stat); break;
    case Op::rmsnorm_bwd: append_bytes(out, dgamma); break;
    case Op::layernorm_linear_fwd:
    case Op::rmsnorm_linear_fwd: break;  // no Highway rows of these ops
  }
  if (wide)
    append_bytes(out, sum32);
  else
    append_bytes(out, sum16);
  return out;
}

struct Shape {
  int64_t rows, cols;
};
// Many rows (11 backward blocks of 32), a few rows long enough to be split
// into chunks over the pool, one such row.
constexpr Shape kShapes[] = {
    {333, 301}, {3, simd::kSplitMinCols + 5}, {1, simd::kSplitMinCols + 1500}};

TEST(SimdThreads, BitIdenticalForOneToFourThreads) {
  ThreadCountGuard guard;
  EveryCallParallel parallel;
  std::mt19937_64 rng(test::test_seed());
  for (const Shape& s : kShapes) {
    const Inputs in = random_inputs(s.rows, s.cols, rng);
    for (const Kernel* k : test::simd_kernels()) {
      simd::set_thread_count(1);
      const auto serial = run(*k, in);
      for (const int threads : {2, 3, 4}) {
        simd::set_thread_count(threads);
        EXPECT_TRUE(run(*k, in) == serial)
            << k->name << " " << s.rows << "x" << s.cols << ": " << threads
            << " threads differ from 1";
      }
    }
  }
}

// Negative control for the comparison above: a sum whose partials follow the
// thread count (one partial per thread) does change with it, and the same
// byte comparison sees the change.
TEST(SimdThreads, ComparisonCatchesAThreadDependentSum) {
  ThreadCountGuard guard;
  // 2^24 then ones: added in sequence every 1 rounds away (2^24 + 1 ties to
  // 2^24); summed in separate partials the ones survive.
  std::vector<float> v(1000, 1.0f);
  v[0] = 0x1p24f;
  const auto sum_per_thread = [&] {
    const int64_t parts = simd::thread_count();
    std::vector<float> partial(static_cast<size_t>(parts), 0.0f);
    simd::parallel_for(parts, [&](int64_t p) {
      for (size_t i = v.size() * p / parts; i < v.size() * (p + 1) / parts; ++i) partial[p] += v[i];
    });
    float total = 0;
    for (const float x : partial) total += x;
    std::vector<unsigned char> bytes;
    append_bytes(bytes, std::vector<float>{total});
    return bytes;
  };
  simd::set_thread_count(1);
  const auto one = sum_per_thread();
  simd::set_thread_count(3);
  EXPECT_FALSE(sum_per_thread() == one);
}

// Back-to-back short calls, where workers wake late or not at all before the
// caller has run out of tasks: each call returns only after every task it
// handed out has run (a task still running on a worker after the call
// returned would add into the next call's counter).
TEST(ThreadPool, ShortCallsReturnAfterEveryTask) {
  ThreadCountGuard guard;
  for (const int threads : {2, 4}) {
    simd::set_thread_count(threads);
    std::atomic<int> sum{0};
    for (int call = 0; call < 20000; ++call) {
      sum.store(0);
      simd::parallel_for(8, [&](int64_t i) {
        if (i % 3 == 0) std::this_thread::yield();  // let a worker hold a task a while
        sum.fetch_add(static_cast<int>(i) + 1);
      });
      ASSERT_EQ(sum.load(), 36) << threads << " threads, call " << call;
    }
  }
}

TEST(ThreadPool, RunsEveryTaskOnceAndNestsSerially) {
  ThreadCountGuard guard;
  for (const int threads : {1, 2, 4}) {
    simd::set_thread_count(threads);
    EXPECT_EQ(simd::thread_count(), threads);
    std::vector<std::atomic<int>> runs(1000);
    simd::parallel_for(1000, [&](int64_t i) {
      runs[static_cast<size_t>(i)]++;
      if (i == 7) {  // a parallel_for inside a task runs on that thread
        std::atomic<int> inner{0};
        simd::parallel_for(5, [&](int64_t) { inner++; });
        EXPECT_EQ(inner.load(), 5);
      }
    });
    for (const auto& r : runs) EXPECT_EQ(r.load(), 1);
  }
}

// fork() copies the calling thread only: a child forked after the pool started
// must run a parallel_for on its own (the workers it counted are not there)
// and exit without joining them. Before the pool knew it, the child waited for
// the missing workers forever; here the parent gives it 20 s (a serial loop
// of 1000 increments takes microseconds) and then kills it.
TEST(ThreadPool, ChildForkedAfterThePoolStartedRunsSerially) {
  ThreadCountGuard guard;
  simd::set_thread_count(3);
  std::atomic<int> warm{0};
  simd::parallel_for(100, [&](int64_t) { warm++; });  // the workers have run
  ASSERT_EQ(warm.load(), 100);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::atomic<int> runs{0};
    simd::parallel_for(1000, [&](int64_t) { runs++; });
    _exit(runs.load() == 1000 && simd::thread_count() == 1 ? 0 : 1);
  }
  int status = 0;
  pid_t done = 0;
  for (int tenth = 0; tenth < 200 && done == 0; ++tenth) {
    done = waitpid(child, &status, WNOHANG);
    if (done == 0) usleep(100000);
  }
  if (done == 0) {
    kill(child, SIGKILL);
    waitpid(child, &status, 0);
    FAIL() << "the forked child's parallel_for did not return within 20 s";
  }
  ASSERT_TRUE(WIFEXITED(status)) << "the child died of a signal";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the child ran a task more or less than once";
  EXPECT_EQ(simd::thread_count(), 3) << "the parent keeps its pool";
}

// Runs kernel k on all of in's rows in one call (outputs large enough to be
// streamed) and in calls of 64 rows (small enough not to be), and expects the
// same y or dx. x and dy are in k's storage type T (dy is the residual of a
// kernel whose spec adds one); the output, of type O (T, or the bytes of a
// quantized y's codes), starts one element past alignment so the aligning
// head runs. A quantized row gets the static scale 1/64, or writes one scale
// per row, compared too.
template <typename T, typename O = T>
void expect_streamed_equals_cached(const Kernel& k, const Inputs& in, const T* x, const T* dy) {
  const int64_t rows = in.rows, cols = in.cols;
  std::vector<float> mean(static_cast<size_t>(rows)), stat(mean.size()),
      dgamma(static_cast<size_t>(cols)), dbeta(dgamma.size());
  std::vector<T> sum(static_cast<size_t>(rows * cols));
  const bool per_row_scale = k.spec && k.spec->quant && k.spec->quant->dynamic();
  std::vector<float> streamed_scale(static_cast<size_t>(rows), 1.0f / 64), cached_scale(streamed_scale);
  const auto call = [&](int64_t r, int64_t count, O* out, std::vector<float>& scale) {
    invoke(k, {.rows = count, .cols = cols, .eps = 1e-5f, .x = x + r * cols, .dy = dy + r * cols,
               .residual = dy + r * cols, .gamma = in.gamma.data(), .beta = in.beta.data(),
               .saved_mean = in.mean.data() + r, .saved_stat = in.rstd.data() + r, .out = out,
               .residual_out = sum.data() + r * cols, .mean = mean.data() + r,
               .stat = stat.data() + r, .scale = scale.data() + (per_row_scale ? r : 0),
               .dgamma = dgamma.data(), .dbeta = dbeta.data()});
  };
  std::vector<O> streamed(static_cast<size_t>(rows * cols) + 1), cached(streamed.size());
  call(0, rows, streamed.data() + 1, streamed_scale);
  for (int64_t r = 0; r < rows; r += 64)
    call(r, std::min<int64_t>(64, rows - r), cached.data() + 1 + r * cols, cached_scale);
  EXPECT_TRUE(streamed == cached) << k.name;
  EXPECT_TRUE(streamed_scale == cached_scale) << k.name;
}

// Outputs of kStreamOutputBytes or more bypass the cache (non-temporal stores
// after an aligning head): the values must be those of the same rows
// computed in small calls, which store normally. y starts one float past
// alignment so the head path runs too.
TEST(SimdEdges, StreamedOutputEqualsCachedOutput) {
  std::mt19937_64 rng(test::test_seed());
  const int64_t cols = 4099, rows = simd::kStreamOutputBytes / (4 * cols) + 3;
  ASSERT_TRUE(simd::streams_output(rows, cols, 4));
  ASSERT_FALSE(simd::streams_output(64, cols, 4));  // the slices below store normally
  const Inputs in = random_inputs(rows, cols, rng);
  int kernels = 0;
  for (const Kernel* k : test::simd_kernels()) {
    if (k->op != Op::layernorm_fwd || k->dtype != DType::f32) continue;
    ++kernels;
    std::vector<float> streamed(static_cast<size_t>(rows * cols) + 1), cached(streamed.size());
    std::vector<float> mean(static_cast<size_t>(rows)), rstd(mean.size()), sum(in.x.size());
    invoke(*k, {.rows = rows, .cols = cols, .eps = 1e-5f, .x = in.x.data(), .residual = in.dy.data(),
                .gamma = in.gamma.data(), .beta = in.beta.data(), .out = streamed.data() + 1,
                .residual_out = sum.data(), .mean = mean.data(), .stat = rstd.data()});
    for (int64_t r = 0; r < rows; r += 64) {
      const int64_t count = std::min<int64_t>(64, rows - r);
      invoke(*k, {.rows = count, .cols = cols, .eps = 1e-5f, .x = in.x.data() + r * cols,
                  .residual = in.dy.data() + r * cols, .gamma = in.gamma.data(), .beta = in.beta.data(),
                  .out = cached.data() + 1 + r * cols, .residual_out = sum.data() + r * cols,
                  .mean = mean.data() + r, .stat = rstd.data() + r});
    }
    EXPECT_TRUE(streamed == cached) << k->name;
  }
  EXPECT_GE(kernels, 2) << "layernorm_fwd.hwy and layernorm_fwd.accurate";
  // The RMSNorm forward and the backward kernels' dx (dgamma/dbeta sum over
  // the call's rows, so they differ between one call and slices of it).
  for (const Kernel* k : test::simd_kernels())
    if (k->dtype == DType::f32 && k->op != Op::layernorm_fwd) expect_streamed_equals_cached(*k, in, in.x.data(), in.dy.data());
}

// The same for 16-bit outputs, streamed two float vectors at a time (y one
// element past alignment: the head runs; cols odd: the tail runs).
TEST(SimdEdges, Streamed16BitOutputEqualsCachedOutput) {
  std::mt19937_64 rng(test::test_seed());
  const int64_t cols = 4099, rows = simd::kStreamOutputBytes / (2 * cols) + 3;
  ASSERT_TRUE(simd::streams_output(rows, cols, 2));
  const Inputs in = random_inputs(rows, cols, rng);
  const std::vector<uint16_t> x = top_halves(in.x), dy = top_halves(in.dy);
  for (const Kernel* k : test::simd_kernels()) {
    if (k->dtype == DType::f32) continue;
    if (k->spec && k->spec->quant) {
      expect_streamed_equals_cached<uint16_t, uint8_t>(*k, in, x.data(), dy.data());
    } else {
      expect_streamed_equals_cached(*k, in, x.data(), dy.data());
    }
  }
}

TEST(SimdEdges, ZeroRowsOrColsIsANoOp) {
  // Null everywhere: a kernel that touched any pointer would crash.
  for (const Kernel* k : test::simd_kernels()) {
    for (const auto& [rows, cols] : {std::pair<int64_t, int64_t>{0, 5}, {4, 0}, {0, 0}}) {
      invoke(*k, {.rows = rows, .cols = cols, .eps = 1e-5f});
    }
  }
  SUCCEED() << "no kernel dereferenced a pointer";
}

}  // namespace
}  // namespace normcheck
