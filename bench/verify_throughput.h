// Benchmarks of verification throughput (evaluate() and the exact references).
#pragma once

namespace normcheck::bench {

// Registers the verify/... benchmarks (verify_throughput.cpp).
void register_verify_benchmarks();

}  // namespace normcheck::bench
