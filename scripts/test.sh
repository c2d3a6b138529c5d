#!/usr/bin/env bash
# Runs the whole attnc test suite (lit + FileCheck, unit tests, numerical
# integration tests) against the build in build/, after scripts/setup.sh.
#
#   scripts/test.sh              the build in build/ (or $ATTNC_BUILD_DIR)
#   scripts/test.sh --sanitize   configures and builds build-sanitize/ with
#                                AddressSanitizer + UndefinedBehaviorSanitizer
#                                (compiled models link the sanitized runtime)
#                                and runs the same suite there
#
# The Python scripts run under lit's interpreter (Debian's python3), or
# $ATTNC_TEST_PYTHON (e.g. a virtual environment with numpy, Hugging
# Face's tokenizers and Ray Serve, whose text-generation and serving tests
# are otherwise unsupported).
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${ATTNC_BUILD_DIR:-$ROOT/build}"

if [[ "${1:-}" == "--sanitize" ]]; then
  BUILD_DIR="${ATTNC_SANITIZE_BUILD_DIR:-$ROOT/build-sanitize}"
  # The objects it does not instrument are the main build's, from ccache
  # (keys relative to the checkout, as scripts/setup.sh builds).
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$ROOT}"
  if [[ ! -f "$BUILD_DIR/build.ninja" ]]; then
    launcher=()
    if command -v ccache >/dev/null; then
      launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
    fi
    cmake -G Ninja -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release \
      -DATTNC_SANITIZE=ON "${launcher[@]}" >/dev/null || exit 1
  fi
  # Any report fails the process (and so its test); the corpus driver also
  # looks for reports in the output of every case. Sanitized code is slower:
  # the corpus time-outs stretch.
  # allow_user_poisoning=0: LLVM's BumpPtrAllocator poisons its slabs in
  # instrumented code (ours) but not in Debian's uninstrumented libMLIR,
  # which then writes into a slab ours poisoned (a false use-after-poison
  # in MLIR's attribute uniquer); real heap errors are still reported.
  export ASAN_OPTIONS="abort_on_error=1:detect_leaks=1:verify_asan_link_order=0:detect_stack_use_after_return=0:allow_user_poisoning=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
  export LSAN_OPTIONS="suppressions=$ROOT/scripts/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
  export ATTNC_CORPUS_TIMEOUT_SCALE="${ATTNC_CORPUS_TIMEOUT_SCALE:-4}"
elif [[ $# -gt 0 ]]; then
  echo "usage: scripts/test.sh [--sanitize]" >&2
  exit 2
fi

ninja -C "$BUILD_DIR" || exit 1
LIT=$(command -v lit-22 || echo /usr/lib/llvm-22/bin/lit)
params=()
if [[ -n "${ATTNC_TEST_PYTHON:-}" ]]; then
  params=(--param "python=$ATTNC_TEST_PYTHON")
fi
"$LIT" -sv "${params[@]}" "$BUILD_DIR/test" -o "$BUILD_DIR/lit-results.json"
status=$?
/usr/bin/python3 "$ROOT/scripts/lit_summary.py" "$BUILD_DIR/lit-results.json" || status=1
exit $status
