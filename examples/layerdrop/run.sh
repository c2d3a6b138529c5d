#!/usr/bin/env bash
# The LayerDrop study of docs/layerdrop.md, end to end: trains the three
# encoders (train.py: LayerDrop, structured head / FFN-group dropout,
# baseline), prunes and measures them with attn-compile (report.py: layers
# with --layer-drop, heads and FFN groups with --prune), and rewrites the
# table in docs/layerdrop.md and the plot docs/layerdrop.png.
#
#   scripts/setup.sh --generators        # build/ and .venv-gen
#   examples/layerdrop/run.sh [BUILD_DIR] [OUT_DIR]
#
# PYTHON overrides the interpreter (default: the checkout's .venv-gen).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${1:-$ROOT/build}"
OUT="${2:-$BUILD/layerdrop}"
PYTHON="${PYTHON:-$ROOT/.venv-gen/bin/python}"
"$PYTHON" "$ROOT/examples/layerdrop/train.py" --out "$OUT"
"$PYTHON" "$ROOT/examples/layerdrop/report.py" --tools "$BUILD/bin" \
  --data "$OUT" --md "$ROOT/docs/layerdrop.md" \
  --png "$ROOT/docs/layerdrop.png"
