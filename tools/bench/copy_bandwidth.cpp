#include "copy_bandwidth.h"

#include <algorithm>
#include <chrono>
#include <cstring>

namespace normcheck::bench {

CopyBandwidth::CopyBandwidth(std::size_t buffer_bytes, unsigned threads)
    : bytes_(buffer_bytes),
      threads_(std::max(1u, threads)),
      source_(buffer_bytes, 1),       // written here, so the pages exist before timing
      destination_(buffer_bytes, 0),
      start_(threads_),
      finish_(threads_) {
  for (unsigned i = 0; i + 1 < threads_; ++i)
    workers_.emplace_back([this, i] {
      for (;;) {
        start_.arrive_and_wait();
        if (stopping_) return;
        copy_share(i);
        finish_.arrive_and_wait();
      }
    });
}

CopyBandwidth::~CopyBandwidth() {
  stopping_ = true;  // published to the workers by the barrier below
  start_.arrive_and_wait();
}

void CopyBandwidth::copy_share(unsigned index) {
  // Shares are whole 4 KiB pages so no two threads write the same page.
  const std::size_t pages = bytes_ / 4096;
  const std::size_t begin = pages * index / threads_ * 4096;
  const std::size_t end = index + 1 == threads_ ? bytes_ : pages * (index + 1) / threads_ * 4096;
  std::memcpy(destination_.data() + begin, source_.data() + begin, end - begin);
}

double CopyBandwidth::measure_gbps() {
  const auto begin = std::chrono::steady_clock::now();
  start_.arrive_and_wait();
  copy_share(threads_ - 1);
  finish_.arrive_and_wait();
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - begin;
  return 2.0 * static_cast<double>(bytes_) / elapsed.count() * 1e-9;
}

}  // namespace normcheck::bench
