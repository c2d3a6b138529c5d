#!/usr/bin/env python3
"""Checks attn-compile's LayerDrop search against the numpy reference: the
subset it kept must be the one whose reference output is closest (relative
L2 error) to the full reference model's output on the same input.

    check_search.py KIND WEIGHTS INPUT.npy KEEP < attn-compile stderr
"""
import itertools
import os
import re
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "..", "scripts"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "reference"))
import make_weights as mw  # noqa: E402
import tensorio  # noqa: E402

kind, weights, inp, keep = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
log = sys.stdin.read()
m = re.search(r"kept \[([0-9,]*)\]: relative error ([0-9.e+-]+)", log)
if not m:
    sys.exit("no search result line in attn-compile's output:\n" + log)
chosen = [int(i) for i in m.group(1).split(",")]
W = tensorio.read_safetensors(weights)
cfg = dict(mw.DEFAULTS[kind])
inputs = {"ids" if kind == "small_encoder" else "x": np.load(inp)}
full = mw.run_reference(kind, W, inputs, cfg, None)
errors = {}
for subset in itertools.combinations(range(cfg["layers"]), keep):
    y = mw.run_reference(kind, W, inputs, cfg, list(subset))
    errors[subset] = float(np.linalg.norm(y - full) / np.linalg.norm(full))
best = min(errors, key=errors.get)
for subset, err in sorted(errors.items()):
    print(f"reference: keep {list(subset)} relative error {err:.4e}")
print(f"search kept {chosen} (reported {float(m.group(2)):.4e}); best by reference {list(best)}")
if tuple(chosen) != best:
    sys.exit("FAIL: search did not pick the best subset")
if abs(errors[best] - float(m.group(2))) > 1e-3 * max(1.0, errors[best]):
    sys.exit("FAIL: reported error differs from the reference's")
print("PASS")
