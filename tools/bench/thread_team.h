// A team of threads, one per core, that runs one function on every member at
// the same time and times it: what the bandwidth limits (copy_bandwidth.h,
// stream_limit.h) need to load every memory channel at once.
#pragma once

#include <barrier>
#include <functional>
#include <thread>
#include <vector>

namespace normcheck::bench {

class ThreadTeam {
 public:
  // share(index, threads) is what member `index` of `threads` does per run.
  ThreadTeam(unsigned threads, std::function<void(unsigned, unsigned)> share);
  ~ThreadTeam();
  ThreadTeam(const ThreadTeam&) = delete;
  ThreadTeam& operator=(const ThreadTeam&) = delete;

  // Runs every member's share once (the caller is the last member); returns
  // the wall time in seconds from the start to when the last share ended.
  double run_seconds();

  unsigned threads() const { return threads_; }

 private:
  unsigned threads_;
  std::function<void(unsigned, unsigned)> share_;
  std::barrier<> start_, finish_;
  bool stopping_ = false;
  std::vector<std::jthread> workers_;  // threads_ - 1 helpers
};

// [begin, end) of member `index`'s share of `bytes`, in whole 4 KiB pages (no
// two members write the same page); the last member takes the remainder.
struct ByteRange {
  std::size_t begin, end;
};
ByteRange page_share(std::size_t bytes, unsigned index, unsigned threads);

}  // namespace normcheck::bench
