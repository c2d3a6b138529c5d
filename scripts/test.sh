#!/usr/bin/env bash
# Runs the whole attnc test suite (lit + FileCheck, unit tests, numerical
# integration tests) against the build in build/, after scripts/setup.sh.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${ATTNC_BUILD_DIR:-$ROOT/build}"

ninja -C "$BUILD_DIR" || exit 1
LIT=$(command -v lit-22 || echo /usr/lib/llvm-22/bin/lit)
"$LIT" -sv "$BUILD_DIR/test" -o "$BUILD_DIR/lit-results.json"
status=$?
/usr/bin/python3 "$ROOT/scripts/lit_summary.py" "$BUILD_DIR/lit-results.json" || status=1
exit $status
