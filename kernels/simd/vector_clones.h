// NORMCHECK_VECTOR_CLONES: a function built once per x86-64 vector width
// (AVX-512 at x86-64-v4, AVX2, and the baseline), the clone chosen when the
// library loads (GCC's target_clones, an ifunc). For the verification's
// branch-free loops over a row, which GCC's optimizer takes in vectors at
// -O3. Each clone gives the same results as the others and as scalar code:
// every operation is IEEE double's, rounded once, and a library using these
// builds with -ffp-contract=off (GCC would otherwise fuse a * b + c into an
// fma in the x86-64-v4 clone, C++ permitting it). Other compilers and
// targets build one function.
// The kernels themselves dispatch with Highway (hwy/), not with this.
#pragma once

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define NORMCHECK_VECTOR_CLONES [[gnu::target_clones("arch=x86-64-v4", "avx2", "default")]]
#else
#define NORMCHECK_VECTOR_CLONES
#endif
