#include "fault_signals.h"

#include <initializer_list>

namespace normcheck::host {

void catch_fault_signals(void (*handler)(int, siginfo_t*, void*)) {
  static char alt_stack[1 << 16];
  stack_t ss{};
  ss.ss_sp = alt_stack;
  ss.ss_size = sizeof alt_stack;
  sigaltstack(&ss, nullptr);
  struct sigaction sa {};
  sa.sa_sigaction = handler;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL, SIGTRAP, SIGSYS}) sigaction(sig, &sa, nullptr);
}

}  // namespace normcheck::host
