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
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "reference"))
import attn_ref  # noqa: E402
from gpu_kernel_emulator import (  # noqa: E402
    MUTATIONS, Emulator, bf16_bits_to_f64, f32_to_bf16_bits, parse_module,
    run_cases)

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
]


def case_ir(elem, b, hq, hkv, sq, sk, dk, dv, causal, lengths):
    q = f"tensor<{b}x{hq}x{sq}x{dk}x{elem}>"
    k = f"tensor<{b}x{hkv}x{sk}x{dk}x{elem}>"
    v = f"tensor<{b}x{hkv}x{sk}x{dv}x{elem}>"
    o = f"tensor<{b}x{hq}x{sq}x{dv}x{elem}>"
    args = f"%q: {q}, %k: {k}, %v: {v}"
    attrs = ""
    if lengths is not None:
        args += f", %len: tensor<{b}xi32>"
        attrs += f" kv_lengths(%len : tensor<{b}xi32>)"
    if causal:
        attrs += " causal"
    return (f"func.func @sdpa({args}) -> {o} {{\n"
            f"  %0 = attn.sdpa %q, %k, %v{attrs} : {q}, {k}, {v} -> {o}\n"
            f"  return %0 : {o}\n}}\n")


def to_f64(x, elem):
    return bf16_bits_to_f64(x).reshape(x.shape) if elem == "bf16" \
        else x.astype(np.float64)


def run_case(attn_opt, case, mutate, rng, workdir, pass_options=""):
    name, elem, b, hq, hkv, sq, sk, dk, dv, causal, lengths = case
    path = os.path.join(workdir, "case.mlir")
    with open(path, "w") as f:
        f.write(case_ir(elem, b, hq, hkv, sq, sk, dk, dv, causal, lengths))
    opts = "{" + pass_options + "}" if pass_options else ""
    out = subprocess.run(
        [attn_opt, path, "--pass-pipeline=builtin.module(func.func("
         "attn-gpu-flash-attention" + opts + "))", "--mlir-print-op-generic"],
        check=True, capture_output=True, text=True).stdout
    assert out.count('"gpu.launch"') == 1, "the pass did not take the case"
    func = parse_module(out)["sdpa"]

    def operand(shape):
        x = rng.standard_normal(shape).astype(np.float32)
        return f32_to_bf16_bits(x) if elem == "bf16" else x.astype(np.float16)

    q = operand((b, hq, sq, dk))
    k = operand((b, hkv, sk, dk))
    v = operand((b, hkv, sk, dv))
    inputs = [q, k, v]
    if lengths is not None:
        inputs.append(np.array(lengths, np.int32))
    emu = Emulator(mutate)
    result = emu.run_func(func, inputs)
    assert (result.writes == 1).all(), "output elements not written once"
    got = to_f64(result.a, elem)
    ref = attn_ref.sdpa(to_f64(q, elem), to_f64(k, elem), to_f64(v, elem),
                        kv_lengths=lengths, causal=causal)
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
