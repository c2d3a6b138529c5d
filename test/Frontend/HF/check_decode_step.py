#!/usr/bin/env python3
"""Feeds a checkpoint's test ids (input_ids.npy, [1, 16]) token by token
through its decode step (compiled with --kv-cache 16) and compares the
logits at every position with the full-sequence model compiled from the
same checkpoint (1e-5 relative) and with transformers' logits
(expected.npy, 1e-4 relative, as the full model's own test)."""

import argparse
import os
import sys

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", required=True)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--checkpoint", required=True)
    ap.add_argument("--workdir", required=True)
    args = ap.parse_args()
    sys.path.insert(0, os.path.join(args.src, "python"))
    os.environ["ATTNC_BIN_DIR"] = args.bin
    import attnc

    ids = np.load(os.path.join(args.checkpoint, "input_ids.npy"))
    expected = np.load(os.path.join(args.checkpoint, "expected.npy"))
    weights = os.path.join(args.checkpoint, "model.safetensors")
    name = os.path.basename(os.path.normpath(args.checkpoint))
    seq = ids.shape[1]
    full = attnc.load(attnc.compile(
        args.checkpoint, os.path.join(args.workdir, f"lib{name}-full.so"),
        input_shape={"input_ids": ids.shape}), weights=weights)
    step = attnc.load(attnc.compile(
        args.checkpoint, os.path.join(args.workdir, f"lib{name}-step.so"),
        input_shape={"input_ids": (1, 1)}, kv_cache=seq), weights=weights)
    reference = full.run(input_ids=ids)["logits"].astype(np.float64)
    steps = np.concatenate(
        [step.run(input_ids=ids[:, t:t + 1],
                  positions=np.array([t], np.int64))["logits"]
         for t in range(seq)], axis=1).astype(np.float64)

    def rel(a, b):
        return float(np.max(np.abs(a - b)) / max(1.0, np.max(np.abs(b))))

    vs_full, vs_hf = rel(steps, reference), rel(steps, expected)
    ok = vs_full <= 1e-5 and vs_hf <= 1e-4
    print(f"{'PASS' if ok else 'FAIL'} {seq} positions: decode step vs full "
          f"sequence {vs_full:.2e} (tol 1e-5), vs transformers {vs_hf:.2e} "
          f"(tol 1e-4)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
