// Cooperative fibers on one thread: a body runs on a stack of its own until
// it calls Fiber::yield() (back to whoever resumed it) or returns. The kernel
// host's batches (call_batch.h) run each case of a batch as a fiber, so that
// the kernel calls of many cases' evaluate() can be gathered into one round
// trip while each evaluate() reads as a plain sequence of steps.
//
// A fiber shares the thread's thread_local state with the thread's other
// fibers: code that yields while using a thread_local shares it with them.
// x86-64 only (its switch is a few instructions of assembly, fiber.cpp), as
// the kernel host is.
#pragma once

#include <cstddef>
#include <functional>

namespace normcheck::fuzz {

class Fiber {
 public:
  // `body` must not let an exception escape (it would end the process).
  explicit Fiber(std::function<void()> body);
  ~Fiber();  // the body must have returned, or never started
  Fiber(const Fiber&) = delete;
  Fiber& operator=(const Fiber&) = delete;

  // Runs the body until it yields or returns; returns whether it has returned.
  bool resume();
  bool started() const { return started_; }
  bool finished() const { return finished_; }

  // From inside a fiber's body: back to the resume() that ran it.
  static void yield();
  // The fiber whose body is running on this thread, or nullptr.
  static Fiber* current();

 private:
  struct Context;
  static void entry(Fiber* self);
  std::function<void()> body_;
  Context* context_;
  void* stack_;
  bool started_ = false, finished_ = false;
};

}  // namespace normcheck::fuzz
