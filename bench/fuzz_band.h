// Which cases of a `normcheck fuzz` campaign have at most d columns, so that
// normcheck_fuzz_throughput can time the campaign's own path (generated cases,
// one child process per batch) on small problems or large ones.
//
// A campaign draws case number c at RapidCheck size c mod 101
// (fuzz/campaign.cpp, case_problem), and a problem drawn at size s has at most
// fuzz_d_cap(s) columns (properties/problem_gen.cpp, draw_problem: 2^(s/6),
// at least 3, at most 65536). `--shard s/101` runs the case numbers s,
// s + 101, s + 202, ...: every case of that run is drawn at size s, so every
// one has d <= fuzz_d_cap(s), in the generator's mix of widths up to it.
// tests/bench/test_fuzz_band.cpp holds fuzz_d_cap to this build's generator.
#pragma once

#include <cstdint>
#include <optional>

namespace normcheck::bench {

inline constexpr int kFuzzSizes = 101;  // RapidCheck's sizes 0..100, one shard each

// The largest d the generator draws at `size` (0..100).
int64_t fuzz_d_cap(int size);

// The largest size whose problems all have d <= `d`, or nothing when no size
// has (d < 3) or when d is beyond the largest size's cap (d > 65536).
std::optional<int> fuzz_size_for(int64_t d);

}  // namespace normcheck::bench
