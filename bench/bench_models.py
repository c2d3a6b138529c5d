"""attn-dialect models for bench/cpu_bench.py.

The BERT layer is scripts/gen_examples.py's post_ln_layer template (the same
text the 12-layer examples/bert_base.mlir is made of), emitted once at a
chosen sequence length. The single-op models reuse the layer's HF BERT
weight names so that one safetensors file from scripts/make_weights.py
serves all of them.
"""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import gen_examples as ge  # noqa: E402

T = ge.tensor
D, HEADS, DFF = 768, 12, 3072
DH = D // HEADS
EPS = "9.9999999999999998e-13"
P = "encoder.layer.0."


def gemm(m, k, n):
    """y = x W^T, x [M,K], W [N,K] (PyTorch Linear layout), weight "w"."""
    return (f"func.func @main(%x: {T(m, k)}) -> {T(m, n)} {{\n"
            f'  %w = attn.weight "w" : {T(n, k)}\n'
            f"  %y = attn.linear %x, %w : ({T(m, k)}, {T(n, k)}) -> {T(m, n)}\n"
            f"  return %y : {T(m, n)}\n}}\n")


def bert_layer(seq):
    """One post-LN BERT-base layer (layer 0 of make_weights("bert", layers=1))."""
    x = T(1, seq, D)
    return ("// One BERT-base layer (post-LN, erf GELU, LN eps 1e-12), batch 1, "
            f"seq {seq}.\n"
            f"func.func @main(%h0: {x}) -> {x} {{\n" +
            ge.post_ln_layer(0, "encoder.layer.{l}.", ge.BERT_NAMES, seq, D, HEADS, DFF,
                             "gelu", EPS) +
            f"  return %h1 : {x}\n}}\n")


def _w(var, name, *dims):
    return ge.weight(var, P + name, *dims).replace("    ", "  ", 1)


def op_linear(seq):
    """The query projection with bias: [1,S,768] x [768,768]^T + b."""
    x = T(1, seq, D)
    return (f"func.func @main(%x: {x}) -> {x} {{\n" +
            _w("w", "attention.self.query.weight", D, D) +
            _w("b", "attention.self.query.bias", D) +
            f"  %y = attn.linear %x, %w, %b : ({x}, {T(D, D)}, {T(D)}) -> {x}\n"
            f"  return %y : {x}\n}}\n")


def op_mha(seq):
    """attn.mha with the layer's four projections (Q/K/V/O + SDPA)."""
    x = T(1, seq, D)
    s = [f"func.func @main(%x: {x}) -> {x} {{\n"]
    for short, key in (("wq", "q"), ("wk", "k"), ("wv", "v"), ("wo", "o")):
        s.append(_w(short, ge.BERT_NAMES[key] + ".weight", D, D))
        s.append(_w("b" + short[1], ge.BERT_NAMES[key] + ".bias", D))
    s.append(f"  %y = attn.mha %x weights(%wq, %wk, %wv, %wo) biases(%bq, %bk, %bv, %bo) "
             f"heads = {HEADS} : ({x}, {T(D, D)}, {T(D, D)}, {T(D, D)}, {T(D, D)}, "
             f"{T(D)}, {T(D)}, {T(D)}, {T(D)}) -> {x}\n")
    s.append(f"  return %y : {x}\n}}\n")
    return "".join(s)


def op_sdpa(seq):
    """attn.sdpa on [1,12,S,64] q, k, v (scaled_dot, scale 1/8): three inputs."""
    q = T(1, HEADS, seq, DH)
    return (f"func.func @main(%q: {q}, %k: {q}, %v: {q}) -> {q} {{\n"
            f"  %y = attn.sdpa %q, %k, %v : {q}, {q}, {q} -> {q}\n"
            f"  return %y : {q}\n}}\n")


def op_layer_norm(seq):
    x = T(1, seq, D)
    return (f"func.func @main(%x: {x}) -> {x} {{\n" +
            _w("g", "attention.output.LayerNorm.weight", D) +
            _w("b", "attention.output.LayerNorm.bias", D) +
            f"  %y = attn.layer_norm %x, %g, %b epsilon = {EPS} : {x}, {T(D)}, {T(D)}\n"
            f"  return %y : {x}\n}}\n")


def op_ffn(seq):
    """attn.ffn: 768 -> 3072 (erf GELU) -> 768, with biases."""
    x = T(1, seq, D)
    return (f"func.func @main(%x: {x}) -> {x} {{\n" +
            _w("w1", "intermediate.dense.weight", DFF, D) +
            _w("b1", "intermediate.dense.bias", DFF) +
            _w("w2", "output.dense.weight", D, DFF) +
            _w("b2", "output.dense.bias", D) +
            f"  %y = attn.ffn %x up(%w1, %b1) down(%w2, %b2) activation = gelu : "
            f"({x}, {T(DFF, D)}, {T(DFF)}, {T(D, DFF)}, {T(D)}) -> {x}\n"
            f"  return %y : {x}\n}}\n")


# name -> (generator, how many times the op runs in one BERT layer)
OPS = {
    "linear 768x768+b": (op_linear, 4),
    "mha (q/k/v/o+sdpa)": (op_mha, 1),
    "sdpa 12x64": (op_sdpa, 1),
    "ffn 768-3072-768": (op_ffn, 1),
    "layer_norm": (op_layer_norm, 2),
}
