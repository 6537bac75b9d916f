// The streaming limit a normalization kernel is held to: every core reads its
// share of the inputs and writes its share of one output with non-temporal
// stores (Highway's Stream: no read-for-ownership of the output), and does no
// arithmetic beyond what keeps the loads alive (one bitwise OR of the two
// inputs). A kernel that moves the same arrays cannot beat it, so
// kernel GB/s / limit GB/s is the fraction of possible it reaches.
//   forward   read 1 array (x), write 1 (y)          bytes: 2 x buffer
//   backward  read 2 arrays (dy, x), write 1 (dx)    bytes: 3 x buffer
//   add       read 2 arrays (x, residual), write 2 (residual_out, y): a
//             forward whose spec adds a residual     bytes: 4 x buffer
// the same byte convention as the kernels' (workload.h: bytes_moved).
#pragma once

#include <cstddef>
#include <thread>
#include "hwy/aligned_allocator.h"

#include "thread_team.h"

namespace normcheck::bench {

class StreamLimit {
 public:
  // inputs: 1 (forward) or 2 (backward, add); outputs: 1, or 2 (add: both
  // written the same value); buffer_bytes: each array's size, several times
  // the last-level cache so the figure is DRAM's.
  StreamLimit(int inputs, int outputs, std::size_t buffer_bytes,
              unsigned threads = std::thread::hardware_concurrency());

  // One timed pass over the arrays; returns GB/s (1e9 bytes per second).
  double measure_gbps();

  int inputs() const { return inputs_; }
  unsigned threads() const { return team_.threads(); }

 private:
  int inputs_, outputs_;
  std::size_t floats_;
  hwy::AlignedFreeUniquePtr<float[]> a_, b_, out_, out2_;  // b_, out2_ null for one
  ThreadTeam team_;
};

}  // namespace normcheck::bench
