#!/usr/bin/env bash
# The tests from a clean clone: install what is missing (Debian packages), build,
# run every test but the nightly ones, then the unit tests again under
# AddressSanitizer + UndefinedBehaviorSanitizer.
# RC_PARAMS (RapidCheck) and NORMCHECK_SEED pass through to the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
scripts/setup.sh

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$jobs"
(cd build && ctest -LE nightly --output-on-failure -j"$jobs")

# The adapters are left out of the sanitizer build (their rows then decline,
# which the lazy-loading test checks): libtorch's prebuilt library is not
# instrumented and its static initializers trip ASan's ODR checks; the oneDNN
# module is dlopen()ed, and GCC 12's LeakSanitizer crashes at exit ("Tracer
# caught signal 11") scanning the dynamic TLS that module's libraries leave
# on Debian 12's glibc 2.36.
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNORMCHECK_SANITIZE=ON \
  -DNORMCHECK_WITH_TORCH=OFF -DNORMCHECK_WITH_ONEDNN=OFF -DNORMCHECK_BUILD_BENCH=OFF \
  -DNORMCHECK_UNIT_TESTS_ONLY=ON >/dev/null
cmake --build build-asan -j"$jobs"
# The plugins' arithmetic twins (label `twin`, tests/fuzz/plugins.cmake) run
# the clean plugins' code paths with other numbers; the Release run above
# judges them, and the sanitizer pass runs every other unit test.
(cd build-asan && ctest -L unit -LE twin --output-on-failure -j"$jobs")
