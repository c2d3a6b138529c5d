#!/usr/bin/env python3
"""Runs the KV-cache step model (kv-cache-step.mlir) token by token through
the attnc Python package and compares every step's output with the numpy
reference's causal attention over the whole sequence (test/reference).

The two sequences of the batch run at different positions (sequence 1 starts
3 tokens later, with its cache rows 0..2 filled by earlier steps), so a
write at the wrong position, a stale or copied cache, or a cache that does
not persist between runs shows as an error."""

import argparse
import os
import sys

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", required=True)
    ap.add_argument("--library", required=True)
    args = ap.parse_args()
    sys.path.insert(0, os.path.join(args.src, "python"))
    sys.path.insert(0, os.path.join(args.src, "test", "reference"))
    import attnc
    import attn_ref

    model = attnc.load(args.library)
    print("states:", [(s.name, s.shape) for s in model.states])
    rng = np.random.default_rng(7)
    B, H, L, D = 2, 2, 8, 4
    q, k, v = (rng.standard_normal((B, H, L, D)).astype(np.float32)
               for _ in range(3))
    ref = attn_ref.sdpa(q, k, v, causal=True)
    start = [0, 3]
    worst = 0.0
    for step in range(L - start[1]):
        pos = np.array([start[0] + step, start[1] + step], np.int64)
        if step == 0:
            # Fill sequence 1's first rows as earlier decode steps would.
            for t in range(start[1]):
                p = np.array([0, t], np.int64)
                model.run(q=q[:, :, :1], k=np.stack([k[0, :, :1], k[1, :, t:t + 1]]),
                          v=np.stack([v[0, :, :1], v[1, :, t:t + 1]]),
                          positions=p, lengths=p + 1)
        sel = lambda a: np.stack([a[b, :, pos[b]:pos[b] + 1] for b in range(B)])
        out = model.run(q=sel(q), k=sel(k), v=sel(v), positions=pos,
                        lengths=pos + 1)["out"]
        want = sel(ref)
        worst = max(worst, float(np.max(np.abs(out - want))))
    verdict = "PASS" if worst <= 1e-5 else "FAIL"
    print(f"{verdict} {L - start[1]} steps, max abs err {worst:.2e} (tol 1e-5)")
    # A fresh cache forgets: after reset_state, attending to 2 rows sees
    # zeros where the first row was.
    model.reset_state()
    p = np.array([1, 1], np.int64)
    out = model.run(q=q[:, :, 1:2], k=k[:, :, 1:2], v=v[:, :, 1:2],
                    positions=p, lengths=p + 1)["out"]
    zeros_k = np.concatenate([np.zeros_like(k[:, :, :1]), k[:, :, 1:2]], 2)
    zeros_v = np.concatenate([np.zeros_like(v[:, :, :1]), v[:, :, 1:2]], 2)
    want = attn_ref.sdpa(q[:, :, 1:2], zeros_k, zeros_v)
    err = float(np.max(np.abs(out - want)))
    print(f"{'PASS' if err <= 1e-5 else 'FAIL'} reset_state: max abs err {err:.2e}")
    # Positions are checked before the run: a write past the cache fails.
    try:
        model.run(q=q[:, :, :1], k=k[:, :, :1], v=v[:, :, :1],
                  positions=np.array([0, 8], np.int64),
                  lengths=np.array([1, 8], np.int64))
        print("FAIL position 8 accepted")
    except attnc.AttncError as e:
        print("error:", e)
    return 0 if verdict == "PASS" and err <= 1e-5 else 1


if __name__ == "__main__":
    sys.exit(main())
