#!/usr/bin/env python3
"""Emulates the tensor-core flash-attention kernels of attn-gpu-flash-attention.

For each case this script writes an f16/bf16 attn.sdpa, runs
`attn-opt --pass-pipeline=builtin.module(func.func(attn-gpu-flash-attention))
--mlir-print-op-generic` on it and interprets the IR the pass emitted with
gpu_kernel_emulator.py (all threads of a block in lockstep; only mma.sync
modelled, from the PTX ISA fragment layout; shared-memory race, bounds and
alignment checks). The result is compared with the numpy reference
(test/reference, attn_ref.sdpa, in float64 from the same f16/bf16 inputs)
and every output element must be written exactly once.

--mutate drop-barriers ignores every gpu.barrier, drop-leading-barrier only
the one that starts each key step (which keeps the next step's shared-memory
writes from overtaking slower warps' reads); the race check must then fail.

THIS IS NOT A SUBSTITUTE FOR RUNNING ON A GPU (see gpu_kernel_emulator.py).
"""

import argparse
import os
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "reference"))
import attn_ref  # noqa: E402
from gpu_kernel_emulator import MUTATIONS, Emulator  # noqa: E402
from gpuemu.driver import run_cases, run_pass  # noqa: E402
from gpuemu.ir import parse_module  # noqa: E402
from gpuemu.numerics import (  # noqa: E402
    bf16_bits_to_f64, f32_to_bf16_bits, to_f64)

# ---------------------------------------------------------------------------
# Cases.

CASES = [
    # name, elem, B, Hq, Hkv, Sq, Sk, Dk, Dv, causal, lengths
    ("f16 B=1 H=2 S=64 D=64", "f16", 1, 2, 2, 64, 64, 64, 64, False, None),
    ("f16 causal B=1 H=2 S=128 D=64", "f16", 1, 2, 2, 128, 128, 64, 64, True,
     None),
    ("f16 causal Sq=32 Sk=96 (bottom-right) D=32", "f16", 1, 1, 1, 32, 96, 32,
     32, True, None),
    ("f16 causal Sq=96 Sk=32 (rows see no key) D=16", "f16", 1, 1, 1, 96, 32,
     16, 16, True, None),
    ("f16 GQA Hq=4 Hkv=2 S=48 Dk=32 Dv=24", "f16", 1, 4, 2, 48, 48, 32, 24,
     False, None),
    ("f16 kv_lengths B=2 S=64 D=16", "f16", 2, 1, 1, 64, 64, 16, 16, False,
     [37, 64]),
    ("f16 D=128 S=32", "f16", 1, 1, 1, 32, 32, 128, 128, False, None),
    ("bf16 causal B=1 H=2 S=64 D=32", "bf16", 1, 2, 2, 64, 64, 32, 32, True,
     None),
    ("f16 causal+kv_lengths B=2 Sq=96 Sk=64 D=32", "f16", 2, 1, 1, 96, 64, 32,
     32, True, [0, 50]),
    ("bf16 GQA Hq=2 Hkv=1 S=48 Dk=16 Dv=40", "bf16", 1, 2, 1, 48, 48, 16, 40,
     False, None),
    # 128 threads, one block of 16 keys: V [16][8] has too few 4-byte chunks
    # for every thread to copy one, so the pipeline stages it plainly (K by
    # cp.async); Dv = 8 is a single ldmatrix x2 .trans.
    ("f16 Sq=64 Sk=16 Dk=16 Dv=8", "f16", 1, 1, 1, 64, 16, 16, 8, False,
     None),
    # The head split and merge folded into the kernel: Q, K, V read in
    # place from [B, S, H, D] tensors (transposed views), from one packed
    # [B, S, (Hq + Hkv) Dk + Hkv Dv] projection (slices of it, rows of 2
    # and 3 heads apart), the output written as [B, S, H, D].
    ("f16 [B,S,H,D] in and out, GQA Hq=4 Hkv=2 S=64 Dk=32 Dv=16", "f16", 2,
     4, 2, 64, 64, 32, 16, True, None, "bshd"),
    ("bf16 packed QKV H=2 S=48 D=32", "bf16", 1, 2, 2, 48, 48, 32, 32,
     False, [40], "packed"),
    # An additive score bias (attn.sdpa's bias, attn.mha's score_bias),
    # added to the scaled scores: a key-padding mask [B, 1, 1, Sk] of 0 and
    # -inf (padded keys; batch row 1 pads its last 3/8, so its padded query
    # rows still see its first keys), the same with the element type's
    # lowest finite value (transformers' (1 - mask) * finfo.min), a full
    # [B, Hq, Sq, Sk] bias, a per-row [1, Hq, Sq, 1] one (loaded once per
    # kernel) and [1, Hq, 1, Sk]; with causal, kv_lengths and GQA.
    ("f16 key-padding bias -inf B=2 H=2 S=64 D=32", "f16", 2, 2, 2, 64, 64,
     32, 32, False, None, "bhsd", "keypad-inf"),
    ("bf16 key-padding bias finfo.min B=2 H=2 S=64 D=32", "bf16", 2, 2, 2,
     64, 64, 32, 32, False, None, "bhsd", "keypad-min"),
    ("f16 key-padding bias finfo.min [B,S,H,D] B=2 H=2 S=64 D=64", "f16", 2,
     2, 2, 64, 64, 64, 64, False, None, "bshd", "keypad-min"),
    ("f16 full bias causal GQA Hq=4 Hkv=2 Sq=32 Sk=96 D=32", "f16", 1, 4, 2,
     32, 96, 32, 32, True, None, "bhsd", "full"),
    ("bf16 full bias kv_lengths B=2 S=48 Dk=16 Dv=24", "bf16", 2, 2, 2, 48,
     48, 16, 24, False, [30, 48], "bhsd", "full"),
    ("f16 per-row bias [1,H,Sq,1] H=2 S=32 D=16", "f16", 1, 2, 2, 32, 32, 16,
     16, False, None, "bhsd", "rows"),
    ("bf16 per-head key bias [1,H,1,Sk] H=2 Sq=64 Sk=128 D=32", "bf16", 1, 2,
     1, 64, 128, 32, 32, True, None, "bhsd", "head-keys"),
    # Static Sq and Sk that are not multiples of 16 (the 8-token ONNX
    # exports), run like run-time sizes: a partial query block, keys past Sk
    # staged as zeros and masked; with a key-padding mask, a full bias and
    # causal.
    ("f16 Sq=Sk=8 key-padding bias finfo.min B=2 H=2 D=16", "f16", 2, 2, 2,
     8, 8, 16, 16, False, None, "bshd", "keypad-min"),
    ("bf16 causal Sq=24 Sk=40 full bias GQA Hq=4 Hkv=2 D=32", "bf16", 1, 4,
     2, 24, 40, 32, 32, True, None, "bhsd", "full"),
    ("f16 Sq=40 Sk=8 D=16", "f16", 1, 1, 1, 40, 8, 16, 16, False, None),
    # Dk % 16 == 8 (the test checkpoints' head dim 8): the last k16 step of
    # S = Q K^T has zeros in the high halves of its fragments.
    ("f16 key-padding bias -inf B=2 H=4 S=16 D=8 [B,S,H,D]", "f16", 2, 4, 4,
     16, 16, 8, 8, False, None, "bshd", "keypad-inf"),
    ("bf16 causal GQA Hq=4 Hkv=2 S=16 D=8", "bf16", 1, 4, 2, 16, 16, 8, 8,
     True, None),
    ("f16 causal Sq=40 Sk=72 Dk=24 Dv=16", "f16", 1, 2, 2, 40, 72, 24, 16,
     True, None),
]

# Broadcast shape of each bias kind ([B, Hq, Sq, Sk] dims kept: 1 where
# broadcast).
BIAS_DIMS = {"keypad-inf": (1, 0, 0, 1), "keypad-min": (1, 0, 0, 1),
             "full": (1, 1, 1, 1), "rows": (0, 1, 1, 0),
             "head-keys": (0, 1, 0, 1)}


def bias_shape(kind, b, hq, sq, sk):
    return tuple(n if keep else 1
                 for n, keep in zip((b, hq, sq, sk), BIAS_DIMS[kind]))


def layout_ir(elem, b, hq, hkv, sq, sk, dk, dv, layout):
    """The function arguments and the IR that makes q, k, v ([B, H, S, D])
    from them, and the type the result is returned in, for an operand
    `layout`: "bhsd" (the arguments), "bshd" ([B, S, H, D] arguments,
    transposed) or "packed" (one [B, S, N] argument holding Q, K and V's
    heads side by side, sliced, expanded and transposed)."""
    def t(*dims):
        return "tensor<" + "x".join(str(d) for d in dims) + f"x{elem}>"
    shapes = {"q": (hq, sq, dk), "k": (hkv, sk, dk), "v": (hkv, sk, dv)}
    if layout == "bhsd":
        args = ", ".join(f"%{n}: {t(b, *s)}" for n, s in shapes.items())
        return args, "", t(b, hq, sq, dv)
    perm = "permutation = [0, 2, 1, 3]"
    ir = ""
    if layout == "bshd":
        args = ", ".join(f"%{n}_in: {t(b, s[1], s[0], s[2])}"
                         for n, s in shapes.items())
    else:
        assert sq == sk
        width = hq * dk + hkv * dk + hkv * dv
        args = f"%qkv: {t(b, sq, width)}"
        col = 0
        for n, (h, s, d) in shapes.items():
            ir += (f"  %{n}_s = tensor.extract_slice %qkv[0, 0, {col}] "
                   f"[{b}, {s}, {h * d}] [1, 1, 1] : {t(b, sq, width)} to "
                   f"{t(b, s, h * d)}\n"
                   f"  %{n}_in = tensor.expand_shape %{n}_s [[0], [1], "
                   f"[2, 3]] output_shape [{b}, {s}, {h}, {d}] : "
                   f"{t(b, s, h * d)} into {t(b, s, h, d)}\n")
            col += h * d
    for n, (h, s, d) in shapes.items():
        ir += (f"  %{n}_e = tensor.empty() : {t(b, h, s, d)}\n"
               f"  %{n} = linalg.transpose ins(%{n}_in : {t(b, s, h, d)}) "
               f"outs(%{n}_e : {t(b, h, s, d)}) {perm}\n")
    return args, ir, t(b, sq, hq, dv)


def case_ir(elem, b, hq, hkv, sq, sk, dk, dv, causal, lengths,
            layout="bhsd", bias=None):
    q = f"tensor<{b}x{hq}x{sq}x{dk}x{elem}>"
    k = f"tensor<{b}x{hkv}x{sk}x{dk}x{elem}>"
    v = f"tensor<{b}x{hkv}x{sk}x{dv}x{elem}>"
    o = f"tensor<{b}x{hq}x{sq}x{dv}x{elem}>"
    args, ir, ret = layout_ir(elem, b, hq, hkv, sq, sk, dk, dv, layout)
    attrs = ""
    if bias is not None:
        bt = ("tensor<" + "x".join(map(str, bias_shape(bias, b, hq, sq, sk)))
              + f"x{elem}>")
        args += f", %bias: {bt}"
        attrs += f" bias(%bias : {bt})"
    if lengths is not None:
        args += f", %len: tensor<{b}xi32>"
        attrs += f" kv_lengths(%len : tensor<{b}xi32>)"
    if causal:
        attrs += " causal"
    ir += f"  %0 = attn.sdpa %q, %k, %v{attrs} : {q}, {k}, {v} -> {o}\n"
    result = "%0"
    if ret != o:
        ir += (f"  %e = tensor.empty() : {ret}\n"
               f"  %1 = linalg.transpose ins(%0 : {o}) outs(%e : {ret}) "
               f"permutation = [0, 2, 1, 3]\n")
        result = "%1"
    return (f"func.func @sdpa({args}) -> {ret} {{\n{ir}"
            f"  return {result} : {ret}\n}}\n")


def run_case(attn_opt, case, mutate, rng, workdir, pass_options=""):
    name, elem, b, hq, hkv, sq, sk, dk, dv, causal, lengths = case[:11]
    layout = case[11] if len(case) > 11 else "bhsd"
    bias_kind = case[12] if len(case) > 12 else None
    opts = "{" + pass_options + "}" if pass_options else ""
    out = run_pass(attn_opt, os.path.join(workdir, "case.mlir"),
                   case_ir(elem, b, hq, hkv, sq, sk, dk, dv, causal, lengths,
                           layout, bias_kind),
                   ["--pass-pipeline=builtin.module(func.func("
                    "attn-gpu-flash-attention" + opts + "))"])
    assert out.count('"gpu.launch"') == 1, "the pass did not take the case"
    # Every head split and merge folded into the kernel's addressing.
    assert '"linalg.transpose"' not in out, "a transpose was not folded"
    func = parse_module(out)["sdpa"]

    def operand(shape):
        x = rng.standard_normal(shape).astype(np.float32)
        return f32_to_bf16_bits(x) if elem == "bf16" else x.astype(np.float16)

    q = operand((b, hq, sq, dk))
    k = operand((b, hkv, sk, dk))
    v = operand((b, hkv, sk, dv))

    def bshd(x):
        return np.ascontiguousarray(x.transpose(0, 2, 1, 3))

    if layout == "bshd":
        inputs = [bshd(q), bshd(k), bshd(v)]
    elif layout == "packed":
        inputs = [np.concatenate(
            [bshd(x).reshape(b, sq, -1) for x in (q, k, v)], axis=2)]
    else:
        inputs = [q, k, v]
    bias = None
    if bias_kind is not None:
        shape = bias_shape(bias_kind, b, hq, sq, sk)
        if bias_kind.startswith("keypad"):
            # Row r pads its last r * (3 Sk / 8) keys (row 0 none).
            low = -np.inf if bias_kind == "keypad-inf" else (
                -65504.0 if elem == "f16" else
                float(bf16_bits_to_f64(np.array([0xff7f], np.uint16))[0]))
            x = np.zeros(shape, np.float32)
            for r in range(b):
                if r:
                    x[r, ..., sk - r * (3 * sk // 8):] = low
        else:
            x = (2.0 * rng.standard_normal(shape)).astype(np.float32)
        bias = f32_to_bf16_bits(x) if elem == "bf16" else x.astype(
            np.float16)
        inputs.append(bias)
    if lengths is not None:
        inputs.append(np.array(lengths, np.int32))
    emu = Emulator(mutate)
    result = emu.run_func(func, inputs)
    assert (result.writes == 1).all(), "output elements not written once"
    got = to_f64(result.a, elem)
    ref = attn_ref.sdpa(to_f64(q, elem), to_f64(k, elem), to_f64(v, elem),
                        bias=None if bias is None else to_f64(bias, elem),
                        kv_lengths=lengths, causal=causal)
    if layout != "bhsd":
        ref = ref.transpose(0, 2, 1, 3)
    # P is rounded to f16/bf16 before P V (as in FlashAttention-2), the
    # output to f16/bf16: tolerances relative to the output's magnitude.
    tol = 2e-2 if elem == "f16" else 6e-2
    err = np.max(np.abs(got - ref)) / max(1.0, np.max(np.abs(ref)))
    return err <= tol, err, emu


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--attn-opt", required=True)
    ap.add_argument("--mutate", choices=MUTATIONS)
    ap.add_argument("--pass-options", default="",
                    help="options of attn-gpu-flash-attention, e.g. "
                    "'staging=cp-async'")
    args = ap.parse_args()
    rng = np.random.default_rng(7)
    with tempfile.TemporaryDirectory() as workdir:
        def run_one(case):
            ok, err, emu = run_case(args.attn_opt, case, args.mutate, rng,
                                    workdir, args.pass_options)
            return ok, (f"max rel err {err:.2e}, {emu.mma_count} mma.sync, "
                        f"{emu.ldmatrix_count} ldmatrix, "
                        f"{emu.async_copy_count} cp.async")
        return run_cases(CASES, run_one, AssertionError, args.mutate)


if __name__ == "__main__":
    sys.exit(main())
