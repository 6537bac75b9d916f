#include "fiber.h"

#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <cstdlib>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#endif

namespace normcheck::fuzz {
namespace {

// Each fiber's stack, with an inaccessible page below it. evaluate() at the
// widest rows keeps its arrays on the heap; 4 MiB of address space costs
// only the pages a fiber touches.
constexpr std::size_t kStackBytes = std::size_t{4} << 20;

std::size_t page_bytes() {
  static const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

// Stacks are kept for the thread's next fibers: a batch of cases makes 64
// of them, and mapping each anew would cost more than a small case.
struct StackPool {
  std::vector<void*> free;
  ~StackPool() {
    for (void* s : free) munmap(static_cast<char*>(s) - page_bytes(), kStackBytes + page_bytes());
  }
};
thread_local StackPool t_stacks;

void* take_stack() {
  if (!t_stacks.free.empty()) {
    void* s = t_stacks.free.back();
    t_stacks.free.pop_back();
    return s;
  }
  void* m = mmap(nullptr, kStackBytes + page_bytes(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                 -1, 0);
  if (m == MAP_FAILED || mprotect(m, page_bytes(), PROT_NONE) != 0) std::abort();
  return static_cast<char*>(m) + page_bytes();
}

thread_local Fiber* t_current = nullptr;

}  // namespace

struct Fiber::Context {
  ucontext_t fiber{}, caller{};
  // AddressSanitizer's view of the stacks being switched between.
  const void* caller_bottom = nullptr;
  std::size_t caller_size = 0;
};

Fiber::Fiber(std::function<void()> body) : body_(std::move(body)), context_(new Context), stack_(nullptr) {}

Fiber::~Fiber() {
  if (started_ && !finished_) std::abort();  // its stack still holds live frames
  if (stack_) t_stacks.free.push_back(stack_);
  delete context_;
}

Fiber* Fiber::current() { return t_current; }

void Fiber::entry() {
  Fiber* self = t_current;
#if defined(__SANITIZE_ADDRESS__)
  __sanitizer_finish_switch_fiber(nullptr, &self->context_->caller_bottom, &self->context_->caller_size);
#endif
  self->body_();
  self->finished_ = true;
#if defined(__SANITIZE_ADDRESS__)
  __sanitizer_start_switch_fiber(nullptr, self->context_->caller_bottom, self->context_->caller_size);
#endif
  // uc_link returns to the resume() that ran it.
}

bool Fiber::resume() {
  if (finished_) return true;
  Fiber* outer = t_current;
  if (!started_) {
    started_ = true;
    stack_ = take_stack();
    getcontext(&context_->fiber);
    context_->fiber.uc_stack.ss_sp = stack_;
    context_->fiber.uc_stack.ss_size = kStackBytes;
    context_->fiber.uc_link = &context_->caller;
    makecontext(&context_->fiber, &Fiber::entry, 0);
  }
  t_current = this;
#if defined(__SANITIZE_ADDRESS__)
  void* fake_stack = nullptr;
  __sanitizer_start_switch_fiber(&fake_stack, stack_, kStackBytes);
#endif
  swapcontext(&context_->caller, &context_->fiber);
#if defined(__SANITIZE_ADDRESS__)
  __sanitizer_finish_switch_fiber(fake_stack, nullptr, nullptr);
#endif
  t_current = outer;
  return finished_;
}

void Fiber::yield() {
  Fiber* self = t_current;
  if (!self) std::abort();
#if defined(__SANITIZE_ADDRESS__)
  void* fake_stack = nullptr;
  __sanitizer_start_switch_fiber(&fake_stack, self->context_->caller_bottom, self->context_->caller_size);
#endif
  swapcontext(&self->context_->fiber, &self->context_->caller);
#if defined(__SANITIZE_ADDRESS__)
  __sanitizer_finish_switch_fiber(fake_stack, &self->context_->caller_bottom, &self->context_->caller_size);
#endif
}

}  // namespace normcheck::fuzz
