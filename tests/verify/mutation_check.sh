#!/usr/bin/env bash
# Shows that the reference's own tests can fail: links the test binaries'
# objects against mutants of verify/reference_row.cpp (one bug each) and
# requires every mutant to fail at least the named test. Not part of ctest (it
# compiles); run by hand after building test_reference_mp and test_reference:
#   tests/verify/mutation_check.sh [build-dir]
# Exit 0: every mutant was caught. docs/semantics.md lists the results.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
for t in test_reference_mp test_reference; do
  [[ -d $build/tests/verify/CMakeFiles/$t.dir ]] || { echo "build $t first" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# name | test binary | test that must fail | text in reference_row.cpp | its replacement
mutants=(
  "unbiased_variance|test_reference_mp|ReferenceCorrectRounding|require_exact(mpfr_mul_si(raw(kkd_), raw(kkd_), static_cast<long>(d), MPFR_RNDN));|require_exact(mpfr_mul_si(raw(kkd_), raw(kkd_), static_cast<long>(d) - 1, MPFR_RNDN));"
  "mean_summed_in_double|test_reference_mp|ReferenceCrossCheck|require_exact(mpfr_add_d(raw(sum_x), raw(sum_x), f, MPFR_RNDN));|{ const mpfr_prec_t keep = mpfr_get_prec(raw(sum_x)); mpfr_add_d(raw(sum_x), raw(sum_x), f, MPFR_RNDN); mpfr_prec_round(raw(sum_x), 53, MPFR_RNDN); mpfr_prec_round(raw(sum_x), keep, MPFR_RNDN); }"
  "projection_sign|test_reference_mp|ReferenceBackward|exact_sub(dx_num[i], b_, e_);|exact_add(dx_num[i], b_, e_);"
  "dx_without_mean_g|test_reference_mp|ReferenceBackward.MatchesFiniteDifferencesOfTheForward/LayerNorm|exact_sub(e_, k_g_, sum_g);|{ mpfr_set_prec(raw(e_), mpfr_get_prec(raw(k_g_))); mpfr_set(raw(e_), raw(k_g_), MPFR_RNDN); }"
  "first_attempt_trusted|test_reference_mp|SubnormalRowWithEpsOne|if (error.exact |if (true "
  "y_from_xhat|test_reference_mp|DyadicYFromANonDyadicXhat|if (p == start_bits_) {  // y = RN(gamma xhat~ + beta)|if (true) {"
)

status=0
for m in "${mutants[@]}"; do
  IFS='|' read -r name binary must_fail old new <<<"$m"
  python3 - "$root/verify/reference_row.cpp" "$work/$name.cpp" "$old" "$new" <<'EOF'
import sys
src, dst, old, new = sys.argv[1:]
s = open(src).read()
if old not in s:
    sys.exit(f"mutation point not found: {old}")
open(dst, "w").write(s.replace(old, new, 1))
EOF
  g++ -O2 -std=c++20 -fPIC -I"$root/verify" -I"$root/verify/include" -I"$root/kernels/include" \
      -c "$work/$name.cpp" -o "$work/$name.o"
  g++ -o "$work/$name" "$build/tests/verify/CMakeFiles/$binary.dir"/*.o "$work/$name.o" \
      "$build/verify/CMakeFiles/normcheck_verify.dir/reference.cpp.o" \
      -L"$build/kernels" -lnormcheck_kernels -Wl,-rpath,"$build/kernels" \
      -lgtest -lgtest_main -lmpfr -lgmp -lpthread
  failed=$("$work/$name" 2>/dev/null | grep '^\[  FAILED  \] .*ms)' | sed 's/, where.*//; s/ ([0-9]* ms)$//; s/^\[  FAILED  \] //' || true)
  if grep -q "$must_fail" <<<"$failed"; then
    echo "caught   $name:" $(sort -u <<<"$failed" | tr '\n' ' ')
  else
    echo "MISSED   $name (expected a failure in $must_fail)"
    status=1
  fi
done
exit $status
