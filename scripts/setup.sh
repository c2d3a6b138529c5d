#!/usr/bin/env bash
# Installs everything attnc needs on a fresh Debian bookworm machine (as root),
# then configures and builds it in build/. Safe to run again: packages already
# present are not fetched twice, and the build is incremental.
#
# The CUDA toolkit is not installed here: it comes with the machine image
# (default prefix /usr/local/cuda, or $CUDA_HOME). Without it attnc still
# builds; the cuda target then says why it is unavailable.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${ATTNC_BUILD_DIR:-$ROOT/build}"

PACKAGES=(
  # LLVM/MLIR 22: CMake packages, mlir-tblgen, lit, FileCheck, NVPTX backend.
  libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools
  # The OpenMP runtime that compiled CPU models use for parallel loops.
  libomp-22-dev
  # Build tools.
  cmake ninja-build g++ make pkg-config
  # Tests: lit runs under Debian's python3; the numpy reference; gtest.
  python3 python3-numpy libgtest-dev
  # The ONNX frontend: protobuf classes, checker (libonnx); python3-onnx for
  # tests that re-save the committed models with external data.
  libonnx-dev libprotobuf-dev protobuf-compiler python3-onnx
)

# scripts/gen_onnx_models.py (re-exporting the committed ONNX test models)
# needs PyTorch: with --bench or --onnx-models.
if [[ "${1:-}" == "--onnx-models" ]]; then
  PACKAGES+=(python3-torch)
fi

# Benchmarks compare against PyTorch and OpenBLAS: only with --bench.
if [[ "${1:-}" == "--bench" ]]; then
  PACKAGES+=(python3-torch libopenblas0-pthread)
fi

missing=()
for pkg in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  if [[ $(id -u) -ne 0 ]]; then
    SUDO=sudo
  else
    SUDO=
  fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "setup: all packages present" >&2
fi

echo "setup: configuring and building in $BUILD_DIR" >&2
if [[ ! -f "$BUILD_DIR/build.ninja" ]]; then
  cmake -G Ninja -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
ninja -C "$BUILD_DIR"
