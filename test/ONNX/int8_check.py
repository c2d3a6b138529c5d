#!/usr/bin/python3
"""Checks attn-compile --quantize=int8 on a BERT-shaped ONNX export
(scripts/gen_onnx_models.py's BertLike: word + position + token-type
embeddings, post-LN layers, erf GELU, a padding bias from attention_mask)
against a numpy model of the same network computed from the ONNX file's
initializers:

- the numpy model in f32 must reproduce PyTorch's committed output
  (Models/<name>.ref.npy) to 1e-4: the reference itself is right;
- the same numpy model with every projection quantized as
  attn-cpu-quantize-int8 specifies (u8 activations per row with a zero
  point, s8 weights per output column, round half to even, i32 sums) must
  match attnc's int8 output to --int8-tol (relative to max|ref|): the
  quantized paths compute that scheme;
  with --bf16-attention (a build whose attention products take bf16
  inputs: attn-compile's int8-bf16-attention on AVX-512 BF16 hosts) the
  numpy model rounds Q, K, V and the softmax numerators to bf16 (to nearest
  even) before the products, which sum in f32;
- attnc's int8 output against PyTorch's f32 output: relative error
  max|y - ref| / max|ref| <= --f32-tol and cosine similarity >= --cosine.

    int8_check.py MODEL.onnx --attn-compile BIN --workdir DIR [--tag T]
                  [--bf16-attention] [--compile-arg=ARG ...]
"""

import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reference"))
import checkutil  # noqa: E402


def projections(model):
    """bias initializer name -> (weight [N, K] as nn.Linear holds it, bias)."""
    inits = {t.name: numpy_helper.to_array(t).astype(np.float32)
             for t in model.graph.initializer}
    consumers = {}
    for node in model.graph.node:
        for i in node.input:
            consumers.setdefault(i, []).append(node)
    out = {}
    for node in model.graph.node:
        if node.op_type != "MatMul" or node.input[1] not in inits:
            continue
        for add in consumers.get(node.output[0], []):
            bias = [i for i in add.input if i in inits]
            if add.op_type == "Add" and bias:
                out[bias[0]] = (np.ascontiguousarray(inits[node.input[1]].T),
                                inits[bias[0]])
    return inits, out


def quantized_linear(x, w, b):
    """attn-cpu-quantize-int8's projection, in f32 like the generated code."""
    f = np.float32
    lo = np.minimum(x.min(axis=-1, keepdims=True), f(0))
    hi = np.maximum(x.max(axis=-1, keepdims=True), f(0))
    s = (hi - lo) / f(255)
    s = np.where(s == 0, f(1), s).astype(f)
    z = np.rint(-lo / s).astype(f)
    q = np.clip(np.rint(x / s) + z, 0, 255).astype(np.int64)
    ws = (np.abs(w).max(axis=1) / f(127)).astype(f)
    ws = np.where(ws == 0, f(1), ws).astype(f)
    wq = np.clip(np.rint(w / ws[:, None]), -127, 127).astype(np.int64)
    colsum = wq.sum(axis=1).astype(f)
    p = (q @ wq.T).astype(f)
    return ((p - z * colsum) * (s * ws) + b).astype(f)


def bf16(x):
    """x rounded to bf16 (to nearest even), held in f32."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    u = (u + np.uint32(0x7FFF) + ((u >> 16) & np.uint32(1))) & np.uint32(0xFFFF0000)
    return u.view(np.float32)


def linear(x, w, b):
    return (x @ w.T + b).astype(np.float32)


def layer_norm(x, g, b, eps=1e-12):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return ((x - m) / np.sqrt(v + eps) * g + b).astype(np.float32)


def gelu(x):
    from math import erf, sqrt
    return (0.5 * x * (1 + np.vectorize(erf)(x / sqrt(2)))).astype(np.float32)


def bert_like(inits, proj, ids, mask, lin, round_attention=lambda t: t):
    d = inits["word.weight"].shape[1]
    layers = sorted({int(k.split(".")[1]) for k in proj if k.startswith("layers.")})
    heads = 4
    seq = ids.shape[1]
    h = (inits["word.weight"][ids] + inits["position.weight"][:seq][None]
         + inits["token_type.weight"][0][None, None])
    h = layer_norm(h, inits["emb_norm.weight"], inits["emb_norm.bias"])
    bias = (1.0 - mask[:, None, None, :].astype(np.float32)) * np.finfo(np.float32).min
    hd = d // heads
    for i in layers:
        p = "layers.%d." % i
        x = h

        def split(t):
            return t.reshape(t.shape[0], seq, heads, hd).transpose(0, 2, 1, 3)
        q = split(lin(x, *proj[p + "attention.query.bias"]))
        k = split(lin(x, *proj[p + "attention.key.bias"]))
        v = split(lin(x, *proj[p + "attention.value.bias"]))
        q, k, v = round_attention(q), round_attention(k), round_attention(v)
        sc = q @ k.transpose(0, 1, 3, 2) / np.float32(np.sqrt(hd)) + bias
        sc = np.exp(sc - sc.max(-1, keepdims=True))
        # Normalized after P V, as the flash kernel does.
        ctx = (round_attention(sc) @ v) / sc.sum(-1, keepdims=True)
        ctx = ctx.transpose(0, 2, 1, 3).reshape(x.shape[0], seq, d)
        a = lin(ctx.astype(np.float32), *proj[p + "attn_out.bias"])
        h = layer_norm(x + a, inits[p + "attn_norm.weight"], inits[p + "attn_norm.bias"])
        f = lin(gelu(lin(h, *proj[p + "intermediate.bias"])), *proj[p + "output.bias"])
        h = layer_norm(h + f, inits[p + "out_norm.weight"], inits[p + "out_norm.bias"])
    return h


def main():
    p = checkutil.onnx_model_parser()
    p.add_argument("--tag", default="")
    p.add_argument("--int8-tol", type=float, default=2e-3)
    p.add_argument("--f32-tol", type=float, default=5e-2)
    p.add_argument("--cosine", type=float, default=0.999)
    p.add_argument("--compile-arg", action="append", default=[])
    p.add_argument("--bf16-attention", action="store_true")
    args = p.parse_args()
    base, inputs = checkutil.model_inputs(args.model)
    ref = np.load(base + ".ref.npy")
    name = os.path.basename(args.model) + args.tag
    os.makedirs(args.workdir, exist_ok=True)
    exe = os.path.join(args.workdir, os.path.basename(args.model)[:-5] + args.tag)
    subprocess.run([args.attn_compile, "-q", args.model, "--target=cpu", "--quantize=int8",
                    "-o", exe] + checkutil.input_shape_flags(inputs) + args.compile_arg,
                   check=True)
    out = exe + ".out.npy"
    run = [exe, "-q", "--output", out]
    for key, path in inputs.items():
        run += ["--input", f"{key}={path}"]
    subprocess.run(run, check=True)
    y = np.load(out).astype(np.float64)

    inits, proj = projections(onnx.load(args.model))
    ids = np.load(inputs["input_ids"])
    mask = np.load(inputs["attention_mask"])
    mag = float(np.max(np.abs(ref)))
    f32 = bert_like(inits, proj, ids, mask, linear)
    ref_err = float(np.max(np.abs(f32 - ref))) / mag
    emu = bert_like(inits, proj, ids, mask, quantized_linear,
                    bf16 if args.bf16_attention else (lambda t: t))
    emu_err = float(np.max(np.abs(y - emu))) / mag
    f32_err = float(np.max(np.abs(y - ref))) / mag
    cos = float(np.dot(y.ravel(), ref.ravel())
                / (np.linalg.norm(y) * np.linalg.norm(ref)))
    ok = (bool(np.all(np.isfinite(y))) and ref_err <= 1e-4 and emu_err <= args.int8_tol
          and f32_err <= args.f32_tol and cos >= args.cosine)
    return checkutil.verdict(
        ok, f"{name}: numpy f32 vs PyTorch {ref_err:.1e} (<= 1e-4); attnc int8 vs numpy "
            f"int8{' (bf16 attention)' if args.bf16_attention else ''} {emu_err:.1e} (<= {args.int8_tol:g}); attnc int8 vs PyTorch f32: relative "
            f"error {f32_err:.1e} (<= {args.f32_tol:g}), cosine {cos:.6f} (>= {args.cosine:g})")


if __name__ == "__main__":
    sys.exit(main())
