/* What a hostile plugin does besides computing the right answer: one
 * behaviour per define (tests/fuzz/CMakeLists.txt builds one library per
 * behaviour, tests/fuzz/test_hostile_plugins.cpp says what normcheck must do
 * about each). Without a define nothing happens: the correct plugin.
 *
 * While loading (the constructor):
 *   HOSTILE_CTOR_EXIT=<status>     exit(status)
 *   HOSTILE_CTOR_SEGV              writes through a null pointer
 *   HOSTILE_CTOR_HANG              loops forever
 *   HOSTILE_CTOR_FORKS_SLEEPER     forks a process that sleeps 1000 s holding stdout/stderr
 *   HOSTILE_CTOR_ROUNDS_UP         fesetround(FE_UPWARD)
 *   HOSTILE_CTOR_TRAPS_INVALID     feenableexcept(FE_INVALID): an invalid operation raises SIGFPE
 *   HOSTILE_CTOR_PRINTS            prints a line on stdout and one on stderr
 *   HOSTILE_CTOR_CHDIR             chdir("/")
 * Listing (normcheck_plugin_kernels), from its second call in a process on:
 *   HOSTILE_LIST_CRASHES_SECOND    writes through a null pointer
 *   HOSTILE_LIST_CHANGES_SECOND    lists one kernel instead of two
 * In every kernel call, after the correct result is written:
 *   HOSTILE_CALL_WRONG             adds 1 to y[0]
 *   HOSTILE_CALL_FORKS_SLEEPER     forks a process that sleeps 1000 s
 *   HOSTILE_CALL_SETS_FTZ          sets FTZ and DAZ in MXCSR and leaves them set
 *   HOSTILE_CALL_BURNS_MS=<ms>     burns that much CPU time (the result unaffected)
 *   HOSTILE_CALL_SLEEPS_FOREVER    sleeps, never returning
 *   HOSTILE_CALL_STACK_BYTES=<n>   touches every page of an n-byte array on its stack
 *   HOSTILE_CALL_RECURSES          recurses until the stack runs out
 *   HOSTILE_CALL_CORRUPTS_HEAP     writes past the end of a block it malloc'd, then frees it
 *   HOSTILE_CALL_LATE_THREAD_FAULT leaves a detached thread that writes through a null pointer 20 ms later
 * In one kernel call, the one whose number in its process (1, 2, ...) the
 * environment variable HOSTILE_AT_CALL names:
 *   HOSTILE_CALL_AT                what HOSTILE_AT_WHAT names: crash (writes through a null
 *                                  pointer), hang (spins), ftz (sets FTZ and DAZ and leaves them
 *                                  set), past_end (writes one element past the end of y),
 *                                  unwritten (puts y[0] back to normcheck's poison 0x7fa5a5a5),
 *                                  wrong (adds 1 to y[0])
 * While unloading (the destructor):
 *   HOSTILE_DTOR_EXITS             _exit(0)
 *   HOSTILE_DTOR_SEGV              writes through a null pointer
 *
 * A sleeper's process name is "hostile_sleeper"; it appends its pid to the
 * file named by the environment variable HOSTILE_PID_FILE, when set, so that
 * a test can tell whether it outlived normcheck (and end it if so). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <fenv.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>
#include <xmmintrin.h>

#include "hostile.h"

/* The two helpers are unused in the builds whose behaviour needs neither.
   The write goes through a volatile pointer to volatile, so the compiler
   neither sees that it is null (no trap instruction in its place) nor drops
   the store: it is a real SIGSEGV. */
__attribute__((unused)) static void write_through_null(void) {
  volatile int* volatile p = NULL;
  *p = 1;
}

__attribute__((unused)) static void become_sleeper(void) {
  prctl(PR_SET_NAME, "hostile_sleeper", 0, 0, 0);
  const char* pid_file = getenv("HOSTILE_PID_FILE");
  if (pid_file) {
    const int fd = open(pid_file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0) {
      dprintf(fd, "%d\n", (int)getpid());
      close(fd);
    }
  }
  struct timespec left = {1000, 0};
  while (nanosleep(&left, &left) != 0) {
  }
  _exit(0);
}

__attribute__((constructor)) static void hostile_load(void) {
#ifdef HOSTILE_CTOR_PRINTS
  printf("hostile plugin constructor: text on stdout\n");
  fflush(stdout);
  fprintf(stderr, "hostile plugin constructor: text on stderr\n");
#endif
#ifdef HOSTILE_CTOR_CHDIR
  if (chdir("/") != 0) abort();
#endif
#ifdef HOSTILE_CTOR_ROUNDS_UP
  fesetround(FE_UPWARD);
#endif
#ifdef HOSTILE_CTOR_TRAPS_INVALID
  feenableexcept(FE_INVALID);
#endif
#ifdef HOSTILE_CTOR_FORKS_SLEEPER
  if (fork() == 0) become_sleeper();
#endif
#ifdef HOSTILE_CTOR_EXIT
  exit(HOSTILE_CTOR_EXIT);
#endif
#ifdef HOSTILE_CTOR_SEGV
  write_through_null();
#endif
#ifdef HOSTILE_CTOR_HANG
  for (volatile unsigned long spins = 0;; spins = spins + 1) {
  }
#endif
}

__attribute__((destructor)) static void hostile_unload(void) {
#ifdef HOSTILE_DTOR_EXITS
  _exit(0);
#endif
#ifdef HOSTILE_DTOR_SEGV
  write_through_null();
#endif
}

void hostile_on_list(int call, int* n) {
  (void)call;
  (void)n;
#ifdef HOSTILE_LIST_CRASHES_SECOND
  if (call >= 2) write_through_null();
#endif
#ifdef HOSTILE_LIST_CHANGES_SECOND
  if (call >= 2) *n = 1;
#endif
}

#ifdef HOSTILE_CALL_STACK_BYTES
/* From the top of the array down, a page at a time, as a stack grows. */
__attribute__((noinline)) static void touch_stack_array(void) {
  volatile char block[HOSTILE_CALL_STACK_BYTES];
  for (long i = (long)sizeof block - 1; i >= 0; i -= 4096) block[i] = (char)i;
  block[0] = 0;
}
#endif

#ifdef HOSTILE_CALL_RECURSES
/* Not a tail call: the frame is written after the inner call returns. */
__attribute__((noinline)) static long recurse(long depth) {
  volatile char frame[512];
  frame[0] = (char)depth;
  if (depth == 0) return frame[0];
  const long inner = recurse(depth - 1);
  frame[1] = (char)inner;
  return frame[1];
}
#endif

#ifdef HOSTILE_CALL_LATE_THREAD_FAULT
static void* fault_later(void* unused) {
  (void)unused;
  const struct timespec wait = {0, 20 * 1000 * 1000};
  nanosleep(&wait, NULL);
  write_through_null();
  return NULL;
}
#endif

#ifdef HOSTILE_CALL_AT
static void at_one_call(float* y, int64_t count) {
  static long calls = 0;
  const char* at = getenv("HOSTILE_AT_CALL");
  const char* what = getenv("HOSTILE_AT_WHAT");
  if (!at || !what || ++calls != atol(at)) return;
  if (strcmp(what, "crash") == 0) write_through_null();
  if (strcmp(what, "hang") == 0)
    for (volatile unsigned long spins = 0;; spins = spins + 1) {
    }
  if (strcmp(what, "ftz") == 0) _mm_setcsr(_mm_getcsr() | 0x8040);
  if (strcmp(what, "past_end") == 0) ((volatile float*)y)[count] = 0;
  if (strcmp(what, "unwritten") == 0 && count > 0) {
    const unsigned poison = 0x7fa5a5a5u;
    memcpy(&y[0], &poison, sizeof poison);
  }
  if (strcmp(what, "wrong") == 0 && count > 0) y[0] += 1.0f;
}
#endif

void hostile_on_call(float* y, int64_t count) {
  (void)y;
  (void)count;
#ifdef HOSTILE_CALL_AT
  at_one_call(y, count);
#endif
#ifdef HOSTILE_CALL_WRONG
  if (count > 0) y[0] += 1.0f;
#endif
#ifdef HOSTILE_CALL_FORKS_SLEEPER
  if (fork() == 0) become_sleeper();
#endif
#ifdef HOSTILE_CALL_SETS_FTZ
  _mm_setcsr(_mm_getcsr() | 0x8040); /* FTZ (bit 15) and DAZ (bit 6) */
#endif
#ifdef HOSTILE_CALL_BURNS_MS
  struct timespec start, now;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
  volatile unsigned long spins = 0;
  do {
    for (int i = 0; i < 10000; ++i) spins = spins + 1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  } while ((now.tv_sec - start.tv_sec) * 1000.0 + (now.tv_nsec - start.tv_nsec) / 1e6 < HOSTILE_CALL_BURNS_MS);
#endif
#ifdef HOSTILE_CALL_SLEEPS_FOREVER
  for (;;) {
    const struct timespec long_time = {1000, 0};
    nanosleep(&long_time, NULL);
  }
#endif
#ifdef HOSTILE_CALL_STACK_BYTES
  touch_stack_array();
#endif
#ifdef HOSTILE_CALL_RECURSES
  recurse(1L << 40);
#endif
#ifdef HOSTILE_CALL_CORRUPTS_HEAP
  {
    /* 16 bytes past the end of a 1000-byte block: the header of the chunk
       after it (often the top of the heap, or a free remainder). free()
       keeps a block this small in its per-thread cache without looking at
       the neighbour; the next malloc that reaches the damaged chunk aborts
       ("malloc(): corrupted top size"), in whatever code calls it. The
       pointee is volatile so that the stores to a block about to be freed
       are not dropped. */
    volatile char* block = malloc(1000);
    if (block) {
      for (int i = 0; i < 1000 + 16; ++i) block[i] = (char)0x5a;
      free((void*)block);
    }
  }
#endif
#ifdef HOSTILE_CALL_LATE_THREAD_FAULT
  pthread_t thread;
  if (pthread_create(&thread, NULL, fault_later, NULL) == 0) pthread_detach(thread);
#endif
}
