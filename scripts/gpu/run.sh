#!/usr/bin/env bash
# Runs the GPU check's bundle on the GPU machine (or, with --dry, here).
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
usage() {
  cat <<'USAGE'
usage: scripts/gpu/run.sh [--dry] [--bundle DIR] [--out DIR] [--time S]
                          [--only REGEX] [--no-bench] [--no-sanitize]
                          [--case-timeout S] [--build DIR]

On the GPU machine (H100/H200, CUDA driver, compute-sanitizer, python3 with
torch and transformers; no MLIR, no network), in the repository root with
the bundle (scripts/gpu/bundle.sh) carried beside it as gpu-bundle.tar.gz
(unpacked on first use):

  scripts/gpu/run.sh

runs every case of the bundle and prints one table: each model's output
against its reference at the emulation tests' tolerances, with CUDA graphs
on and off (ATTNRT_CUDA_GRAPHS=0, equal outputs); compute-sanitizer memcheck
and racecheck on the f16 small encoder and the GPT-2 KV-cache step; timings
against PyTorch (fused attention vs scaled_dot_product_attention, BERT-base
vs eager and torch.compile, GPT-2-small decode vs transformers' generate).
Each case has a timeout; a case that fails, crashes or hangs is reported
and the run goes on. The whole run stops within --time seconds (default
420: 7 minutes; later cases are reported as skipped). Writes
$OUT/gpu-report.json (rewritten after every case) and $OUT/gpu-check.log
(everything printed). Exit status 1 if a case failed.

options:
  --dry            no GPU: run the same bundle on the dry fake driver
                   (build/lib/dry-cuda/libcuda.so.1: real cubins loaded,
                   every launch validated, nothing executed), the f32 small
                   encoder's values through the whole-model emulator, and
                   check the bundle's size (scripts/test.sh runs this)
  --bundle DIR     the bundle (default: gpu-bundle; DIR.tar.gz is unpacked
                   when DIR has no cases.json)
  --out DIR        report folder (default: $OUT if set, else
                   build/gpu-report)
  --time S         stop within S seconds (default 420; dry: 1800)
  --only REGEX     only the cases whose name matches
  --no-bench       no timings;  --no-sanitize: no compute-sanitizer
  --case-timeout S per-case timeout (default 60)
  --build DIR      (--dry) the build folder (default: build)

One device call (bundle built here first; the command, run in the
repository root on the GPU machine, with gpu-bundle.tar.gz carried):
  scripts/gpu/run.sh --out "$OUT"           # timeout 540 s leaves a rerun
See docs/gpu.md.
USAGE
}
DRY=0
BUNDLE=$ROOT/gpu-bundle
OUTDIR=${OUT:-$ROOT/build/gpu-report}
BUILD=$ROOT/build
TIME=
PASS=()
while [ $# -gt 0 ]; do
  case "$1" in
  -h|--help) usage; exit 0 ;;
  --dry) DRY=1 ;;
  --bundle) BUNDLE=$2; shift ;;
  --out) OUTDIR=$2; shift ;;
  --time) TIME=$2; shift ;;
  --build) BUILD=$2; shift ;;
  --only|--case-timeout) PASS+=("$1" "$2"); shift ;;
  --no-bench|--no-sanitize) PASS+=("$1") ;;
  *) echo "run.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
mkdir -p "$OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)
LOG=$OUTDIR/gpu-check.log
export PYTHONUNBUFFERED=1
if [ "$DRY" = 1 ]; then
  TIME=${TIME:-1800}
  PY=${PYTHON:-/usr/bin/python3}
  DRIVER=$BUILD/lib/dry-cuda
  if [ ! -e "$DRIVER/libcuda.so.1" ]; then
    echo "run.sh: $DRIVER/libcuda.so.1 not found (build attnc: ninja -C $BUILD)" | tee "$LOG" >&2
    exit 1
  fi
  export LD_LIBRARY_PATH=$DRIVER:$BUNDLE/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  MODE=(--dry --build "$BUILD")
else
  TIME=${TIME:-420}
  PY=${PYTHON:-python3}
  export LD_LIBRARY_PATH=$BUNDLE/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  # compute-sanitizer and nvcc, where the toolkit is not on PATH.
  export PATH=$PATH:/usr/local/cuda/bin:/usr/local/cuda/compute-sanitizer
  MODE=()
fi
# The bundle travels packed (scripts/gpu/carry.py): unpacked here once.
if [ ! -f "$BUNDLE/cases.json" ] && [ -f "$BUNDLE.tar.gz" ]; then
  tar -xzf "$BUNDLE.tar.gz" -C "$(dirname "$BUNDLE")" ||
    echo "run.sh: could not unpack $BUNDLE.tar.gz" >&2
fi
if [ ! -f "$BUNDLE/cases.json" ]; then
  echo "run.sh: no bundle at $BUNDLE (build it with scripts/gpu/bundle.sh and carry it)" | tee "$LOG" >&2
  printf '{"mode": "%s", "error": "no bundle at %s", "results": []}\n' \
    "$([ "$DRY" = 1 ] && echo dry || echo gpu)" "$BUNDLE" > "$OUTDIR/gpu-report.json"
  exit 1
fi
{
  echo "run.sh: $(date -u '+%F %T UTC'), bundle $BUNDLE, report $OUTDIR, within ${TIME} s"
  [ "$DRY" = 1 ] || nvidia-smi 2>&1 | head -15
} | tee "$LOG"
# run.py keeps 20 s of the budget in hand; the hard limit kills a stuck run
# (the report, rewritten after every case, stays).
timeout -k 5 "$TIME" "$PY" "$ROOT/scripts/gpu/run.py" ${MODE[@]+"${MODE[@]}"} \
  --bundle "$BUNDLE" --out "$OUTDIR" --budget "$((TIME - 20))" \
  ${PASS[@]+"${PASS[@]}"} 2>&1 | tee -a "$LOG"
rc=${PIPESTATUS[0]}
[ "$rc" = 124 ] && echo "run.sh: stopped after $TIME s" | tee -a "$LOG"
exit "$rc"
