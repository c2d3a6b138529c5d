#!/usr/bin/env python3
"""Checks a KV-cache step compiled with a run-time token count
(--input-shape input_ids=1x? --kv-cache 16) run on the checkpoint's 16
test ids in pieces of 11, 1 and 4 tokens (each at the cache's length)
against transformers' logits of the same pieces over its KV cache
(step_expected.npy, 1e-4 relative): for rotary frequencies that follow
the run-time length, the cached keys keep the rotation of the run that
wrote them, so the pieces differ from the whole-sequence logits."""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "reference"))
import checkutil  # noqa: E402

SPLITS = (11, 1, 4)


def main():
    args, _, build = checkutil.checkpoint_builder()
    ids = np.load(os.path.join(args.checkpoint, "input_ids.npy"))
    ref = np.load(os.path.join(args.checkpoint, "step_expected.npy"))
    whole = np.load(os.path.join(args.checkpoint, "expected.npy"))
    step = build("pieces", input_shape={"input_ids": (1, None)},
                 kv_cache=ids.shape[1])
    step.reset_state()
    pieces, start = [], 0
    for t in SPLITS:
        y = step.run(input_ids=np.ascontiguousarray(ids[:, start:start + t]),
                     positions=np.array([start], np.int64))["logits"]
        pieces.append(y.astype(np.float64))
        start += t
    y = np.concatenate(pieces, axis=1)
    err = checkutil.rel_err(y, ref)
    # The reference must tell the pieces from the whole sequence.
    apart = checkutil.rel_err(whole, ref)
    return checkutil.verdict(
        err <= 1e-4 and apart > 1e-3,
        f"pieces {SPLITS}: max rel err {err:.2e} vs transformers' pieces; "
        f"whole-sequence logits differ by {apart:.2e}")


if __name__ == "__main__":
    sys.exit(main())
