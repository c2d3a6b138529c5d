#!/usr/bin/env bash
# Serving demo: a one-node Ray cluster on 127.0.0.1, two replicas of the
# tiny GPT-2 test checkpoint (and one of BERT) behind Ray Serve, a bounded
# number of concurrent requests whose answers are checked against the model
# run directly, then the cluster shut down (scripts/serve_demo.py).
#
#   scripts/serve_demo.sh [--requests N] [--load N] [--faults] [--bench N]
#
# $ATTNC_PYTHON is the interpreter (default python3): it needs numpy, Hugging
# Face's tokenizers and Ray Serve (pip install 'ray[serve]' tokenizers).
# $BUILD_DIR is the build tree (default build/), whose bin/ holds
# attn-compile.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${ATTNC_PYTHON:-python3}"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
WORK="$(mktemp -d -t attnc-serve-XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
if ! "$PYTHON" -c "import ray.serve, tokenizers, numpy" 2>/dev/null; then
  echo "serve_demo: $PYTHON cannot import ray.serve, tokenizers and numpy" \
       "(pip install 'ray[serve]' tokenizers numpy, or set ATTNC_PYTHON)" >&2
  exit 2
fi
"$PYTHON" "$ROOT/scripts/serve_demo.py" --src "$ROOT" --bin "$BUILD_DIR/bin" \
  --workdir "$WORK" "$@"
