#include "thread_team.h"

#include <algorithm>
#include <chrono>

namespace normcheck::bench {

ThreadTeam::ThreadTeam(unsigned threads, std::function<void(unsigned, unsigned)> share)
    : threads_(std::max(1u, threads)),
      share_(std::move(share)),
      start_(threads_),
      finish_(threads_) {
  for (unsigned i = 0; i + 1 < threads_; ++i)
    workers_.emplace_back([this, i] {
      for (;;) {
        start_.arrive_and_wait();
        if (stopping_) return;
        share_(i, threads_);
        finish_.arrive_and_wait();
      }
    });
}

ThreadTeam::~ThreadTeam() {
  stopping_ = true;  // published to the workers by the barrier below
  start_.arrive_and_wait();
}

double ThreadTeam::run_seconds() {
  const auto begin = std::chrono::steady_clock::now();
  start_.arrive_and_wait();
  share_(threads_ - 1, threads_);
  finish_.arrive_and_wait();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
}

ByteRange page_share(std::size_t bytes, unsigned index, unsigned threads) {
  const std::size_t pages = bytes / 4096;
  const std::size_t begin = pages * index / threads * 4096;
  const std::size_t end = index + 1 == threads ? bytes : pages * (index + 1) / threads * 4096;
  return {begin, end};
}

}  // namespace normcheck::bench
