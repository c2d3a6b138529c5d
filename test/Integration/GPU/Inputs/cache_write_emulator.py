#!/usr/bin/env python3
"""Emulates the KV-cache write kernels of attn-gpu-cache-write.

For each case this script writes an attn.cache_write, runs
`attn-opt --pass-pipeline=builtin.module(func.func(attn-gpu-cache-write))
--mlir-print-op-generic` on it and interprets the IR the pass emitted with
gpu_kernel_emulator.py (every thread block, its threads in lockstep; bounds
checked on every access). The cache is passed as the function's argument:
the kernel must update that array in place (the returned tensor is the
argument's buffer), write every element of the new rows exactly once and
nothing else, and match the numpy reference (test/reference,
attn_ref.cache_write) at the positions clamped into [0, L - T] as the CPU
lowering clamps them.

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
from gpu_kernel_emulator import Emulator  # noqa: E402
from gpuemu.driver import run_cases, run_pass  # noqa: E402
from gpuemu.ir import parse_module  # noqa: E402
from gpuemu.numerics import f32_to_bf16_bits, to_f64  # noqa: E402

CASES = [
    # name, elem, index type, B, H, L, T, D, positions, block-threads
    ("f32 decode B=2 H=3 L=8 D=16", "f32", "i64", 2, 3, 8, 1, 16, [0, 7],
     128),
    ("f32 decode positions clamped (-3 -> 0, 9 -> 7)", "f32", "i64", 2, 2, 8,
     1, 16, [-3, 9], 128),
    ("f16 prefill T=3 D=24, partial last block", "f16", "i32", 2, 2, 8, 3, 24,
     [2, 5], 32),
    ("bf16 T=4 D=8 i32 positions", "bf16", "i32", 3, 1, 6, 4, 8, [0, 1, 2],
     128),
    ("f32 T = L (every position clamps to 0)", "f32", "i64", 1, 2, 4, 4, 8,
     [3], 128),
    ("f32 D=160 > block-threads: two blocks per row", "f32", "i64", 1, 2, 5,
     1, 160, [4], 128),
]


def case_ir(elem, ity, b, h, length, t, d):
    cache = f"tensor<{b}x{h}x{length}x{d}x{elem}>"
    new = f"tensor<{b}x{h}x{t}x{d}x{elem}>"
    pos = f"tensor<{b}x{ity}>"
    return (f"func.func @write(%cache: {cache}, %new: {new}, %pos: {pos}) "
            f"-> {cache} {{\n"
            f"  %0 = attn.cache_write %new into %cache at %pos : {new}, "
            f"{cache}, {pos}\n"
            f"  return %0 : {cache}\n}}\n")


def run_case(attn_opt, case, rng, workdir):
    name, elem, ity, b, h, length, t, d, positions, threads = case
    out = run_pass(attn_opt, os.path.join(workdir, "case.mlir"),
                   case_ir(elem, ity, b, h, length, t, d),
                   ["--pass-pipeline=builtin.module(func.func("
                    f"attn-gpu-cache-write{{block-threads={threads}}}))"])
    assert out.count('"gpu.launch"') == 1, "the pass did not take the case"
    func = parse_module(out)["write"]

    def operand(shape):
        x = rng.standard_normal(shape).astype(np.float32)
        return f32_to_bf16_bits(x) if elem == "bf16" else x.astype(
            {"f32": np.float32, "f16": np.float16}[elem])

    cache = operand((b, h, length, d))
    before = cache.copy()
    new = operand((b, h, t, d))
    pos = np.array(positions, {"i32": np.int32, "i64": np.int64}[ity])
    emu = Emulator()
    result = emu.run_func(func, [cache, new, pos])
    assert result is emu.args[0], "the result is not the cache argument"
    clamped = np.clip(positions, 0, length - t)
    ref = attn_ref.cache_write(to_f64(before, elem), to_f64(new, elem),
                               clamped)
    expected_writes = np.zeros(cache.shape, int)
    for i, p in enumerate(clamped):
        expected_writes[i, :, p:p + t] = 1
    assert (result.writes == expected_writes).all(), \
        "not exactly the new rows written once"
    # A copy is exact: compare bit for bit (NaN-free random inputs).
    return np.array_equal(to_f64(cache, elem), ref)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--attn-opt", required=True)
    args = ap.parse_args()
    rng = np.random.default_rng(11)
    with tempfile.TemporaryDirectory() as workdir:
        def run_one(case):
            ok = run_case(args.attn_opt, case, rng, workdir)
            return ok, ("in place, rows written once" if ok else
                        "wrong values")
        return run_cases(CASES, run_one, AssertionError, None)


if __name__ == "__main__":
    sys.exit(main())
