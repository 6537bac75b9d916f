#include "fiber.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

// AddressSanitizer is told of every switch (its fiber interface), so that it
// checks each stack's frames against that stack: GCC defines
// __SANITIZE_ADDRESS__, Clang answers __has_feature.
#if defined(__SANITIZE_ADDRESS__)
#define NORMCHECK_FIBER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NORMCHECK_FIBER_ASAN 1
#endif
#endif
#if defined(NORMCHECK_FIBER_ASAN)
#include <sanitizer/common_interface_defs.h>
#endif

// The switch between two stacks (x86-64 System V): the registers a callee
// keeps (rbp, rbx, r12 to r15, MXCSR's control bits and the x87 control word)
// pushed on the stack being left, its stack pointer saved in *from, and the
// same popped from `to`. No system call: ucontext's swapcontext also saves
// the signal mask, a system call per switch, which cost more than a small
// case's evaluation. A new fiber's stack is laid out as a switch left it,
// returning into normcheck_fiber_start, which calls r12 with rbx.
extern "C" void normcheck_fiber_switch(void** from, void* to);
extern "C" void normcheck_fiber_start();
asm(R"(
  .text
  .p2align 4
  .globl normcheck_fiber_switch
  .hidden normcheck_fiber_switch
  .type normcheck_fiber_switch, @function
normcheck_fiber_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size normcheck_fiber_switch, .-normcheck_fiber_switch

  .p2align 4
  .globl normcheck_fiber_start
  .hidden normcheck_fiber_start
  .type normcheck_fiber_start, @function
normcheck_fiber_start:
  .cfi_startproc
  .cfi_undefined rip
  movq %rbx, %rdi
  callq *%r12
  ud2
  .cfi_endproc
  .size normcheck_fiber_start, .-normcheck_fiber_start
)");

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
  void* fiber_sp = nullptr;   // where the fiber's stack was left
  void* caller_sp = nullptr;  // ... and the resume()'s
  // AddressSanitizer's view of the stack the fiber was resumed from.
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

void Fiber::entry(Fiber* self) {
#if defined(NORMCHECK_FIBER_ASAN)
  __sanitizer_finish_switch_fiber(nullptr, &self->context_->caller_bottom, &self->context_->caller_size);
#endif
  self->body_();
  self->finished_ = true;
#if defined(NORMCHECK_FIBER_ASAN)
  __sanitizer_start_switch_fiber(nullptr, self->context_->caller_bottom, self->context_->caller_size);
#endif
  normcheck_fiber_switch(&self->context_->fiber_sp, self->context_->caller_sp);  // for good
  std::abort();
}

bool Fiber::resume() {
  if (finished_) return true;
  Fiber* outer = t_current;
  if (!started_) {
    started_ = true;
    stack_ = take_stack();
    // As normcheck_fiber_switch leaves a stack: the return into
    // normcheck_fiber_start, rbp, rbx (this), r12 (entry), r13 to r15, then
    // the control words this thread has now.
    auto* top = reinterpret_cast<uint64_t*>(static_cast<char*>(stack_) + kStackBytes);
    uint64_t* sp = top - 8;
    sp[7] = reinterpret_cast<uint64_t>(&normcheck_fiber_start);
    sp[6] = 0;
    sp[5] = reinterpret_cast<uint64_t>(this);
    sp[4] = reinterpret_cast<uint64_t>(&Fiber::entry);
    sp[3] = sp[2] = sp[1] = 0;
    uint32_t mxcsr = 0;
    uint16_t x87 = 0;
    asm volatile("stmxcsr %0" : "=m"(mxcsr));
    asm volatile("fnstcw %0" : "=m"(x87));
    std::memcpy(&sp[0], &mxcsr, sizeof mxcsr);
    std::memcpy(reinterpret_cast<char*>(&sp[0]) + 4, &x87, sizeof x87);
    context_->fiber_sp = sp;
  }
  t_current = this;
#if defined(NORMCHECK_FIBER_ASAN)
  void* fake_stack = nullptr;
  __sanitizer_start_switch_fiber(&fake_stack, stack_, kStackBytes);
#endif
  normcheck_fiber_switch(&context_->caller_sp, context_->fiber_sp);
#if defined(NORMCHECK_FIBER_ASAN)
  __sanitizer_finish_switch_fiber(fake_stack, nullptr, nullptr);
#endif
  t_current = outer;
  return finished_;
}

void Fiber::yield() {
  Fiber* self = t_current;
  if (!self) std::abort();
#if defined(NORMCHECK_FIBER_ASAN)
  void* fake_stack = nullptr;
  __sanitizer_start_switch_fiber(&fake_stack, self->context_->caller_bottom, self->context_->caller_size);
#endif
  normcheck_fiber_switch(&self->context_->fiber_sp, self->context_->caller_sp);
#if defined(NORMCHECK_FIBER_ASAN)
  __sanitizer_finish_switch_fiber(fake_stack, &self->context_->caller_bottom, &self->context_->caller_size);
#endif
}

}  // namespace normcheck::fuzz
