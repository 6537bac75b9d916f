/* The two places where a hostile plugin's behaviour enters its correct kernels
 * (norms.c). behaviours.c defines both; a build picks one behaviour (or a
 * pair) with a define, and without one both hooks do nothing, which makes
 * the correct plugin. Hidden: they are not part of the plugin's ABI. */
#ifndef NORMCHECK_TESTS_HOSTILE_H
#define NORMCHECK_TESTS_HOSTILE_H

#include <stdint.h>

/* Called by normcheck_plugin_kernels on its call-th call (1, 2, ...) in this
   process, with *n the count it is about to return (the hook may change it). */
__attribute__((visibility("hidden"))) void hostile_on_list(int call, int* n);

/* Called at the end of every kernel call, after the correct result is in y
   (count elements). */
__attribute__((visibility("hidden"))) void hostile_on_call(float* y, int64_t count);

#endif
