// The memory-bandwidth limit, STREAM-copy style: every core copies its share of
// a large buffer into another with memcpy, at the same time. Bytes counted are
// read + written (2 x buffer size), the same convention as the kernels' bytes.
#pragma once

#include <barrier>
#include <cstddef>
#include <thread>
#include <vector>

namespace normcheck::bench {

class CopyBandwidth {
 public:
  // buffer_bytes: size of each of the two buffers; make it several times the
  // last-level cache so the copy measures memory, not cache.
  explicit CopyBandwidth(std::size_t buffer_bytes,
                         unsigned threads = std::thread::hardware_concurrency());
  ~CopyBandwidth();
  CopyBandwidth(const CopyBandwidth&) = delete;
  CopyBandwidth& operator=(const CopyBandwidth&) = delete;

  // One timed copy of the whole buffer; returns GB/s (1e9 bytes per second).
  double measure_gbps();

  unsigned threads() const { return threads_; }
  std::size_t buffer_bytes() const { return bytes_; }

 private:
  void copy_share(unsigned index);

  std::size_t bytes_;
  unsigned threads_;
  std::vector<char> source_, destination_;
  std::barrier<> start_, finish_;
  bool stopping_ = false;
  std::vector<std::jthread> workers_;  // threads_ - 1 helpers; the caller is the last one
};

}  // namespace normcheck::bench
