// The signals a misbehaving kernel ends its process with, caught on a stack
// of their own: the kernel host's and the fork server's children record which
// signal came, where and when, then exit for their parent to read it.
#pragma once

#include <signal.h>

namespace normcheck::host {

// Installs `handler` (SA_SIGINFO) for SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL,
// SIGTRAP and SIGSYS, running on an alternate stack: the fault may be the
// overflow of the stack the kernel runs on.
void catch_fault_signals(void (*handler)(int, siginfo_t*, void*));

}  // namespace normcheck::host
