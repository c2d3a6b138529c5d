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
  # Compiler cache: the sanitized build (scripts/test.sh --sanitize) reuses
  # this build's objects for the code it does not instrument.
  ccache
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

# The test-data generators that export models with today's tools
# (scripts/gen_onnx_exports.py): only with --generators, which creates
# .venv-gen with the pinned versions below from the Python package index.
if [[ "${1:-}" == "--generators" ]]; then
  PACKAGES+=(python3-venv)
fi

# bench/peers.py's peers as users install them today (--peers, below):
# the interpreter for their virtual environment.
if [[ "${1:-}" == "--peers" ]]; then
  PACKAGES+=(python3-venv)
fi

# Benchmarks compare against PyTorch and OpenBLAS: only with --bench, which
# also creates .venv-bench with the peers from the Python package index.
if [[ "${1:-}" == "--bench" ]]; then
  PACKAGES+=(python3-torch libopenblas0-pthread python3-venv)
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

# Creates the virtual environment $1 (python3 -m venv with the options after
# it) unless a run before did.
make_venv() {
  local venv="$1"
  shift
  if [[ ! -x "$venv/bin/python" ]]; then
    echo "setup: creating $venv" >&2
    /usr/bin/python3 -m venv "$@" "$venv"
  fi
}

# The peers of bench/decode.py (and the Python of the older exports in
# scripts/gen_onnx_models.py) in a virtual environment that sees
# Debian's numpy and torch 1.13 (--system-site-packages); numpy stays 1.x,
# which that torch needs. Nothing else (compiler, tests) uses it. Each peer
# is installed on its own so that one that cannot be fetched or built for
# this platform is reported and the others still come.
if [[ "${1:-}" == "--bench" ]]; then
  VENV="$ROOT/.venv-bench"
  make_venv "$VENV" --system-site-packages
  PIP=("$VENV/bin/pip" install -q --disable-pip-version-check)
  # Versions the benchmark was written and checked with.
  PEERS=(
    "transformers==4.40.2"                     # BertModel for the export and PyTorch eager
    "onnx==1.23.2"                             # iree-import-onnx needs >= 1.16 (Debian's is 1.12)
    "onnxruntime==1.32.0"
    "iree-base-compiler==3.13.0 iree-base-runtime==3.13.0"
  )
  failed=()
  for spec in "${PEERS[@]}"; do
    # shellcheck disable=SC2086 # a spec may name two packages
    if ! "${PIP[@]}" "numpy<2" $spec; then
      failed+=("$spec")
    fi
  done
  if ((${#failed[@]})); then
    echo "setup: WARNING: could not install ${failed[*]}; bench/peers.py reports them as not installed" >&2
  fi
fi

# bench/peers.py's peers from the Python package index, as users have them
# today: torch 2.x (MKL and oneDNN), transformers 5.x, ONNX Runtime with its
# transformer optimizer and quantizer, IREE. A virtual environment of its
# own: .venv-bench keeps Debian's torch 1.13 for the other benchmarks.
if [[ "${1:-}" == "--peers" ]]; then
  VENV="$ROOT/.venv-peers"
  make_venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check \
    "torch==2.15.0" "transformers==5.23.0" "onnx==1.23.2" "onnxruntime==1.32.0" \
    "iree-base-compiler==3.13.0" "iree-base-runtime==3.13.0"
fi

if [[ "${1:-}" == "--generators" ]]; then
  VENV="$ROOT/.venv-gen"
  make_venv "$VENV"
  # What users export with today; the committed test models say which
  # versions made them (test/ONNX/Exports/manifest.json). scikit-learn
  # ships the digits data set and matplotlib draws the plot of the
  # LayerDrop study (examples/layerdrop, docs/layerdrop.md).
  "$VENV/bin/pip" install -q --disable-pip-version-check \
    "torch==2.15.0" "transformers==5.23.0" "onnx==1.23.2" \
    "onnxruntime==1.32.0" "onnxscript==0.7.2" "safetensors==0.8.0" \
    "scikit-learn==1.9.1" "matplotlib==3.11.2"
fi

echo "setup: configuring and building in $BUILD_DIR" >&2
# Paths relative to the checkout in ccache's keys, so that build/ and
# build-sanitize/ (and other clones) share objects compiled alike.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$ROOT}"
if [[ ! -f "$BUILD_DIR/build.ninja" ]]; then
  cmake -G Ninja -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache \
    >/dev/null
fi
ninja -C "$BUILD_DIR"
