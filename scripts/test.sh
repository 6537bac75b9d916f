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

# libtorch is left out of the sanitizer build: its prebuilt library is not
# instrumented and its static initializers trip ASan's ODR checks.
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNORMCHECK_SANITIZE=ON \
  -DNORMCHECK_WITH_TORCH=OFF -DNORMCHECK_BUILD_BENCH=OFF -DNORMCHECK_UNIT_TESTS_ONLY=ON >/dev/null
cmake --build build-asan -j"$jobs"
(cd build-asan && ctest -L unit --output-on-failure -j"$jobs")
