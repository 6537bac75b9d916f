// The memory-bandwidth limit, STREAM-copy style: every core copies its share of
// a large buffer into another with memcpy, at the same time. Bytes counted are
// read + written (2 x buffer size), the same convention as the kernels' bytes.
// memcpy's stores go through the cache, so each destination line is read
// before it is written (read-for-ownership): kernels that write with
// non-temporal stores can pass this figure; stream_limit.h is the limit they
// are held to.
#pragma once

#include <cstddef>
#include <thread>
#include <vector>

#include "thread_team.h"

namespace normcheck::bench {

class CopyBandwidth {
 public:
  // buffer_bytes: size of each of the two buffers; make it several times the
  // last-level cache so the copy measures memory, not cache.
  explicit CopyBandwidth(std::size_t buffer_bytes,
                         unsigned threads = std::thread::hardware_concurrency());

  // One timed copy of the whole buffer; returns GB/s (1e9 bytes per second).
  double measure_gbps();

  unsigned threads() const { return team_.threads(); }
  std::size_t buffer_bytes() const { return bytes_; }

 private:
  std::size_t bytes_;
  std::vector<char> source_, destination_;
  ThreadTeam team_;
};

}  // namespace normcheck::bench
