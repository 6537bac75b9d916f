// A persistent pool: workers sleep on a condition variable between calls and
// take tasks from an atomic counter during one. The caller never waits for a
// worker to wake up: it takes tasks itself from the start, and once none are
// left it waits only for workers that took part.
#include "thread_pool.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include <pthread.h>

#include "row_partition.h"

namespace normcheck::simd {
namespace {

thread_local bool inside_task = false;

std::atomic<int64_t> min_elements{kMinParallelElements};

// fork() copies only the calling thread: in the child the workers are gone
// while the pool still counts them, so a parallel_for would wait for them
// forever (the fuzz driver forks to isolate a kernel after the parent has
// used the pool). A child of a process whose pool had started runs every
// parallel_for serially and never joins the workers it does not have.
std::atomic<bool> forked_child{false};

int default_thread_count() {
  if (const char* env = std::getenv("NORMCHECK_THREADS")) {
    const int n = std::atoi(env);
    if (n > 0) return n;
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

class Pool {
 public:
  Pool() {
    static const int registered =
        pthread_atfork(nullptr, nullptr, [] { forked_child.store(true); });
    (void)registered;
    start(default_thread_count());
  }
  ~Pool() {
    if (forked_child.load()) {
      for (std::thread& worker : workers_) worker.detach();  // not threads of this process
      workers_.clear();
      return;
    }
    stop();
  }

  int threads() const { return forked_child.load() ? 1 : static_cast<int>(workers_.size()) + 1; }

  void resize(int threads) {
    if (forked_child.load()) return;  // serial in a forked child, whatever was asked
    const std::lock_guard<std::mutex> one_caller(caller_);
    stop();
    start(std::max(1, threads));
  }

  void run(int64_t tasks, void (*task)(void*, int64_t), void* context) {
    std::unique_lock<std::mutex> one_caller(caller_, std::try_to_lock);
    if (tasks <= 1 || workers_.empty() || inside_task || !one_caller.owns_lock() ||
        forked_child.load()) {
      for (int64_t i = 0; i < tasks; ++i) task(context, i);
      return;
    }
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      task_ = task;
      context_ = context;
      tasks_ = tasks;
      next_.store(0);
      open_ = true;
      ++generation_;
    }
    wake_.notify_all();
    take_tasks();
    // The caller has run out of tasks: close the call, then wait only for the
    // workers that joined it (a worker still asleep, e.g. on a core busy with
    // another process, is not waited for; it finds the call closed).
    std::unique_lock<std::mutex> lock(mutex_);
    open_ = false;
    done_.wait(lock, [&] { return active_workers_ == 0; });
  }

 private:
  // A new worker starts at the current generation, so it waits for the next
  // call. (start() runs with caller_ held or in the constructor: no call is
  // running.)
  void start(int threads) {
    stopping_ = false;
    uint64_t now = 0;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      now = generation_;
    }
    for (int i = 1; i < threads; ++i) workers_.emplace_back([this, now] { work(now); });
  }

  void stop() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (std::thread& worker : workers_) worker.join();
    workers_.clear();
  }

  void take_tasks() {
    inside_task = true;
    for (int64_t i = next_.fetch_add(1); i < tasks_; i = next_.fetch_add(1)) task_(context_, i);
    inside_task = false;
  }

  // A worker joins a call only while it is open (under mutex_, so the caller,
  // which closes it under mutex_, then waits for it); next_ is reset only by
  // the next call, which cannot start before every joined worker has left.
  void work(uint64_t seen) {
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return stopping_ || (generation_ != seen && open_); });
        if (stopping_) return;
        seen = generation_;
        ++active_workers_;
      }
      take_tasks();
      bool last = false;
      {
        const std::lock_guard<std::mutex> lock(mutex_);
        last = --active_workers_ == 0;
      }
      if (last) done_.notify_one();
    }
  }

  std::mutex caller_;  // one parallel_for at a time
  std::mutex mutex_;   // guards the fields below except next_
  std::condition_variable wake_, done_;
  std::vector<std::thread> workers_;
  uint64_t generation_ = 0;
  bool stopping_ = false;
  bool open_ = false;      // a call is running and its caller still takes tasks
  int active_workers_ = 0;  // workers that joined the running call and have not left
  void (*task_)(void*, int64_t) = nullptr;
  void* context_ = nullptr;
  int64_t tasks_ = 0;
  std::atomic<int64_t> next_{0};
};

Pool& pool() {
  static Pool instance;
  return instance;
}

}  // namespace

int thread_count() { return pool().threads(); }

int64_t min_parallel_elements() { return min_elements.load(std::memory_order_relaxed); }

void set_min_parallel_elements(int64_t elements) {
  min_elements.store(elements, std::memory_order_relaxed);
}

void set_thread_count(int threads) { pool().resize(threads); }

void parallel_for(int64_t tasks, void (*task)(void*, int64_t), void* context) {
  pool().run(tasks, task, context);
}

}  // namespace normcheck::simd
