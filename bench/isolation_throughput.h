// Benchmarks of how fast a plugin's kernel is fuzzed (isolation_throughput.cpp).
#pragma once

namespace normcheck::bench {

// Registers the isolation/... benchmarks.
void register_isolation_benchmarks();

}  // namespace normcheck::bench
