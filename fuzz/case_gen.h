// The problems of a campaign (and of `normcheck identify`): the property
// suite's generators (properties/generators.h) with a kernel's options, and
// case number c drawn from its own random stream. A header of its own: it
// pulls in RapidCheck, which the campaign's other users need not compile.
#pragma once

#include <cstddef>
#include <cstdint>

#include "generators.h"
#include "normcheck/evaluate.h"
#include "normcheck/kernel.h"

namespace normcheck::fuzz {

// The longest rows a campaign draws (GenOptions::long_d), and how rarely:
// one case in 101 has size 100, and one of those in kLongRowOneIn is one or
// two rows of d in (65536, 2^18]. Such a case costs about a second (the
// exact reference's terms and the kernel host's copies grow with d; measured
// on this 2-core machine with other builds running: 101 cases of each kernel
// of examples/plugin took 5.4 s against 0.9 s for 100, and those of
// v2_norms.c 14.6 s against 4.1 s), a hundred times an ordinary case: one in
// 1010 keeps them to about a tenth of a campaign.
inline constexpr int64_t kLongRowCols = int64_t{1} << 18;
inline constexpr int kLongRowOneIn = 10;
// One backward case in kManyRowsOneIn (not from=y) is 256 to 65536 rows of
// d <= 64 (GenOptions::many_rows_one_in): dgamma and dbeta over a batch. Such
// a case averages about 12k rows x 32 columns and takes most of a backward
// campaign's time (measured on 2 shared cores: 100 cases of each of the four
// kernels of libv2_train_norms.so, seed 7, 3.6 s); fewer would leave a
// 100-case run one batch or two.
inline constexpr int kManyRowsOneIn = 16;

// The generator's options for a kernel: its op and declared domain (|x|, eps
// and d stay inside it), non-finite inputs only when it says the kernel
// handles them, a residual when its spec adds one, row strides when it takes
// them, rows past 65536 up to kLongRowCols (inside its declared d range; a
// forward kernel up to kSpecReferenceMaxCols, the longest row its spec's
// reference takes).
props::GenOptions generator_options(const Kernel& k);

// Case number c on kernel number kernel_index: its own random stream, and a
// size that cycles through RapidCheck's 0..100 so that small problems come
// first and often.
Problem case_problem(const rc::Gen<Problem>& gen, uint64_t seed, std::size_t kernel_index, int64_t c);

}  // namespace normcheck::fuzz
