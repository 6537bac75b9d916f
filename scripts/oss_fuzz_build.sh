#!/usr/bin/env bash
# Builds normcheck's libFuzzer target the way OSS-Fuzz and ClusterFuzzLite call
# a project's build.sh: the compilers and flags come from $CC, $CXX, $CFLAGS,
# $CXXFLAGS, the engine's link flags from $LIB_FUZZING_ENGINE, and the fuzzer
# (with the libraries it needs beside it) goes to $OUT.
#
# Locally (Debian: clang and libclang-rt-14-dev):
#   CC=clang CXX=clang++ CFLAGS="-O1 -g -fsanitize=fuzzer-no-link" \
#   CXXFLAGS="-O1 -g -fsanitize=fuzzer-no-link" LIB_FUZZING_ENGINE=-fsanitize=fuzzer \
#   OUT=/tmp/fuzz-out scripts/oss_fuzz_build.sh
#   /tmp/fuzz-out/normcheck_fuzzer -max_total_time=60
# NORMCHECK_FUZZ_PLUGIN=lib.so makes the fuzzer check a plugin's kernels instead of ours.
set -euo pipefail
: "${CC:?}" "${CXX:?}" "${LIB_FUZZING_ENGINE:?}" "${OUT:?}"
src="${SRC:-$(cd "$(dirname "$0")/.." && pwd)}"
work="${WORK:-$OUT/build-normcheck-fuzzer}"

cmake -S "$src" -B "$work" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
  -DCMAKE_C_FLAGS="${CFLAGS:-}" -DCMAKE_CXX_FLAGS="${CXXFLAGS:-}" \
  -DNORMCHECK_BUILD_TESTS=OFF -DNORMCHECK_BUILD_BENCH=OFF \
  -DNORMCHECK_WITH_ONEDNN=OFF -DNORMCHECK_WITH_TORCH=OFF \
  -DNORMCHECK_LIB_FUZZING_ENGINE="$LIB_FUZZING_ENGINE" \
  -DCMAKE_BUILD_RPATH_USE_ORIGIN=ON -DCMAKE_BUILD_RPATH='$ORIGIN' >/dev/null
cmake --build "$work" -j"${JOBS:-2}" --target normcheck_fuzzer normcheck_readers_fuzzer
mkdir -p "$OUT"
cp "$work/bin/normcheck_fuzzer" "$work/bin/normcheck_readers_fuzzer" "$OUT/"
# The shared normcheck libraries, found beside the fuzzer through $ORIGIN.
cp "$work"/kernels/libnormcheck_kernels.so "$work"/verify/libnormcheck_verify.so "$OUT/"
