#!/usr/bin/env python3
"""Numpy reference of the small encoder with heads and FFN groups pruned as
a spec file says (written from the formulas with test/reference ops, not from
the compiler), compared with a compiled model's output.

    check_pruned.py SPEC.json WEIGHTS IDS.npy OUTPUT.npy
"""
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "reference"))
import attn_ref as ref  # noqa: E402
import tensorio  # noqa: E402

spec_path, weights, ids_path, out_path = sys.argv[1:5]
spec = json.load(open(spec_path))
W = tensorio.read_safetensors(weights)
ids = np.load(ids_path)
HEADS, D = 4, 64
DH = D // HEADS


def kept(layer_spec, list_key, scores_key, count_key, total):
    if list_key in layer_spec:
        return sorted(layer_spec[list_key])
    if scores_key in layer_spec:
        scores = layer_spec[scores_key]
        order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
        return sorted(order[: layer_spec[count_key]])
    return list(range(total))


def attention(x, p, heads):
    """Multi-head self-attention using only `heads` (each DH wide)."""
    outs = []
    for h in heads:
        rows = slice(h * DH, (h + 1) * DH)
        q = ref.linear(x, W[p + "q.weight"][rows], W[p + "q.bias"][rows])
        k = ref.linear(x, W[p + "k.weight"][rows], W[p + "k.bias"][rows])
        v = ref.linear(x, W[p + "v.weight"][rows], W[p + "v.bias"][rows])
        o = ref.sdpa(q[:, None], k[:, None], v[:, None])  # [B,1,S,DH]
        outs.append(o[:, 0])
    cols = np.concatenate([np.arange(h * DH, (h + 1) * DH) for h in heads])
    return ref.linear(np.concatenate(outs, axis=-1), W[p + "o.weight"][:, cols],
                      W[p + "o.bias"])


x = ref.sinusoidal_pos(ref.embedding(ids, W["embed.weight"]))
group = spec.get("ffn_group_size", 1)
for l in range(2):
    ls = spec["layers"].get(str(l), {})
    heads = kept(ls, "heads", "head_scores", "keep_heads", HEADS)
    dff = W[f"layers.{l}.ffn.up.weight"].shape[0]
    groups = kept(ls, "ffn_groups", "ffn_scores", "keep_ffn_groups", dff // group)
    units = np.concatenate([np.arange(g * group, (g + 1) * group) for g in groups])
    p = f"layers.{l}."
    x = ref.layer_norm(x + attention(x, p + "attn.", heads), W[p + "ln1.weight"], W[p + "ln1.bias"])
    f = ref.ffn(x, W[p + "ffn.up.weight"][units], W[p + "ffn.up.bias"][units],
                W[p + "ffn.down.weight"][:, units], W[p + "ffn.down.bias"], "relu")
    x = ref.layer_norm(x + f, W[p + "ln2.weight"], W[p + "ln2.bias"])

y = np.load(out_path).astype(np.float64)
err = float(np.max(np.abs(y - x)))
mag = max(1.0, float(np.max(np.abs(x))))
print(f"pruned small encoder: max abs err {err:.3e} (tolerance {1e-5 * mag:.1e})")
full_err = None
sys.exit(0 if err <= 1e-5 * mag else "FAIL")
