#!/usr/bin/env python3
"""Inputs and numpy reference for raise-attention.test.

    raise_attention_check.py gen DIR
        writes seeded random DIR/q.npy, k.npy, v.npy ([4, 16, 8] f32) and
        DIR/mask.npy ([4, 16, 16] f32, an additive mask: small noise, with
        about a third of the keys pushed to -1e4, never the diagonal).
    raise_attention_check.py check DIR LABEL=OUT.npy [LABEL=OUT.npy ...]
        compares each output with softmax(q @ k^T / sqrt(8) + mask) @ v,
        computed by test/reference/attn_ref.py's sdpa (score 'dot' with the
        mask as bias), and prints one PASS or FAIL line per output; exits 1
        if any fails. Tolerance: max abs error <= 1e-5 * max(1, max|ref|).
"""
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "reference"))
import attn_ref as ref  # noqa: E402

N, S, D = 4, 16, 8


def gen(d):
    rng = np.random.default_rng(20240611)
    os.makedirs(d, exist_ok=True)
    for name in ("q", "k", "v"):
        np.save(os.path.join(d, name + ".npy"),
                rng.standard_normal((N, S, D)).astype(np.float32))
    mask = 0.5 * rng.standard_normal((N, S, S))
    hidden = rng.random((N, S, S)) < 0.3
    hidden[:, np.arange(S), np.arange(S)] = False
    mask[hidden] = -1e4
    np.save(os.path.join(d, "mask.npy"), mask.astype(np.float32))


def check(d, outputs):
    load = lambda name: np.load(os.path.join(d, name + ".npy"))  # noqa: E731
    q, k, v, mask = load("q"), load("k"), load("v"), load("mask")
    expected = ref.sdpa(q[None], k[None], v[None], bias=mask[None],
                        score="dot", scale=1.0 / math.sqrt(D))[0]
    tol = 1e-5 * max(1.0, float(np.max(np.abs(expected))))
    ok = True
    for spec in outputs:
        label, path = spec.split("=", 1)
        got = np.load(path)
        if got.shape != expected.shape or got.dtype != np.float32:
            print("FAIL %s: got %s %s, expected %s float32"
                  % (label, got.dtype, got.shape, expected.shape))
            ok = False
            continue
        err = float(np.max(np.abs(got.astype(np.float64) - expected)))
        passed = err <= tol
        ok &= passed
        print("%s %s: max abs err %.3g (tol %.3g)"
              % ("PASS" if passed else "FAIL", label, err, tol))
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "gen":
        gen(sys.argv[2])
        sys.exit(0)
    if len(sys.argv) >= 4 and sys.argv[1] == "check":
        sys.exit(check(sys.argv[2], sys.argv[3:]))
    sys.exit(__doc__)
