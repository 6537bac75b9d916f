#!/usr/bin/env bash
# Installs what normcheck needs from Debian 12 packages, and nothing else.
# Idempotent and silent when everything is present; needs root (or sudo) only
# when something is missing.
set -euo pipefail

packages=(
  build-essential cmake pkg-config ccache git
  libgtest-dev libgmock-dev libbenchmark-dev
  libboost-dev libmpfr-dev libgmp-dev libeigen3-dev
  librapidcheck-dev libhwy-dev libdnnl-dev libtorch-dev
  libcli11-dev nlohmann-json3-dev
  ocl-icd-opencl-dev
  # normcheck report: plots (gnuplot's SVG terminal); its tests: headless
  # Chromium for the screenshot (with a font: --no-install-recommends leaves
  # Chromium without one), zlib to decode it
  gnuplot-nox chromium fonts-dejavu-core zlib1g-dev
  # normcheck fuzz's libFuzzer entry point (clang -fsanitize=fuzzer)
  clang libclang-rt-14-dev
  # the Python harness of normcheck judge's tests (tests/tools/normcheck/judge_harness.py)
  python3-numpy
  # the Python module normcheck (python/: built for /usr/bin/python3 with its
  # headers and pybind11) and its pytest suite, which judges torch modules
  # (tests/python); torch also runs the PyTorch harness of judge's tests
  # (judge_harness_torch.py)
  python3-dev python3-pybind11 pybind11-dev python3-pytest python3-torch
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "setup: installing ${missing[*]}" >&2
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
