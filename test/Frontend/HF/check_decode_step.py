#!/usr/bin/env python3
"""Feeds a checkpoint's test ids (input_ids.npy, [1, 16]) token by token
through its decode step (compiled with --kv-cache 16) and compares the
logits at every position with the full-sequence model compiled from the
same checkpoint (1e-5 relative) and with transformers' logits
(expected.npy, 1e-4 relative, as the full model's own test)."""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "reference"))
import checkutil  # noqa: E402


def main():
    args, _, build = checkutil.checkpoint_builder()
    ids = np.load(os.path.join(args.checkpoint, "input_ids.npy"))
    expected = np.load(os.path.join(args.checkpoint, "expected.npy"))
    seq = ids.shape[1]
    full = build("full", input_shape={"input_ids": ids.shape})
    step = build("step", input_shape={"input_ids": (1, 1)}, kv_cache=seq)
    reference = full.run(input_ids=ids)["logits"].astype(np.float64)
    steps = np.concatenate(
        [step.run(input_ids=ids[:, t:t + 1],
                  positions=np.array([t], np.int64))["logits"]
         for t in range(seq)], axis=1).astype(np.float64)
    vs_full = checkutil.rel_err(steps, reference)
    vs_hf = checkutil.rel_err(steps, expected)
    return checkutil.verdict(
        vs_full <= 1e-5 and vs_hf <= 1e-4,
        f"{seq} positions: decode step vs full sequence {vs_full:.2e} (tol 1e-5), "
        f"vs transformers {vs_hf:.2e} (tol 1e-4)")


if __name__ == "__main__":
    sys.exit(main())
