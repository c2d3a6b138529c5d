#!/usr/bin/env bash
# Builds the GPU check's bundle on the build machine (no GPU needed).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
case "${1:-}" in
-h|--help)
  cat <<'USAGE'
usage: scripts/gpu/bundle.sh [--out DIR] [--build DIR] [-j N] [-v]

Builds the GPU check's bundle (default: gpu-bundle/, git-ignored, at most
48 MiB): CUDA executables for sm_90a of the examples (f32, f16, bf16;
static and dynamic), the ONNX test models, the tiny Hugging Face
checkpoints (full sequences and KV-cache steps, also from ONNX past-KV
exports), attention-only libraries for timing (f16, d64 and d128, seq 512
to 8k, causal and not), BERT-base at batch 1/32 x seq 128/512, GPT-2-small's
decode step; their small weights, inputs and reference outputs; any
non-system shared library they need (lib/); and cases.json, what scripts/gpu/run.sh runs.
Needs attn-compile (build/) and ptxas (the CUDA toolkit); no GPU, no torch.
Incremental (only what changed is recompiled) and parallel (-j, default:
all cores). Compile inputs that are not carried go to DIR.src/.

Then, on the GPU machine, with the bundle folder carried:
  scripts/gpu/run.sh            # see scripts/gpu/run.sh --help, docs/gpu.md
USAGE
  exit 0 ;;
esac
PY=${PYTHON:-/usr/bin/python3}
exec "$PY" "$ROOT/scripts/gpu/bundle.py" "$@"
