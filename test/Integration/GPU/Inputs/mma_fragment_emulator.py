#!/usr/bin/env python3
"""Emulates the tensor-core kernels of attn-gpu-mma-matmul on the CPU.

For each case (element type, M, N, K, optional rank-3 input) this script
writes a buffer-level input (extf generics from f16/bf16 + the f32
contraction C[m, n] += A[m, k] * B[n, k]), runs
`attn-opt --attn-gpu-mma-matmul --mlir-print-op-generic` on it, and
interprets the IR the pass emitted with gpu_kernel_emulator.py: the host ops
around the gpu.launch and the launch body for every thread block, all its
threads (several warps) in lockstep. Only mma.sync m16n8k16 is modelled,
from the PTX ISA fragment layout, and the sm_80 data movement the kernels
use by default (ldmatrix, cp.async groups; see gpu_kernel_emulator.py).
--pass-options passes options to the pass (e.g. 'staging=plain ldmatrix=0'
for the plain staging and fragment loads).

The result must equal C0 + A @ B^T (f32 accumulation tolerance); every
element of C must be stored exactly once, every access must be in bounds and
as aligned as it claims, shared-memory accesses free of races, and the warps
must execute (M/16)(N/8)(K/16) mma.sync in all (ragged shapes, where M, N
or K is not a multiple of its mma tile: at least that many rounded up, the
edge blocks' padding included).

--mutate injects a fragment bug (e.g. the two rows of the B fragment
swapped) or drops barriers or the bounds masks of ragged edge tiles, to show
that the checks catch it (see mma-fragment-layout.test for which cases must
then FAIL).

THIS IS NOT A SUBSTITUTE FOR RUNNING ON A GPU (see gpu_kernel_emulator.py).
"""

import argparse
import os
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from gpu_kernel_emulator import MUTATIONS, Emulator  # noqa: E402
from gpuemu.driver import run_pass  # noqa: E402
from gpuemu.ir import parse_module  # noqa: E402
from gpuemu.numerics import bf16_bits_to_f64, f32_to_bf16_bits  # noqa: E402


# ---------------------------------------------------------------------------
# Cases.

EXT = """  %{wide} = memref.alloc() : memref<{shape}xf32>
  linalg.generic {{indexing_maps = [{idm}, {idm}], iterator_types = [{its}]}}
      ins(%{src} : memref<{shape}x{et}>) outs(%{wide} : memref<{shape}xf32>) {{
  ^bb0(%in: {et}, %out: f32):
    %0 = arith.extf %in : {et} to f32
    linalg.yield %0 : f32
  }}
"""


EPILOGUE = """  linalg.generic {{indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}}
      ins(%c, %{bias} : memref<{m}x{n}xf32>, memref<{n}xf32>) outs(%c : memref<{m}x{n}xf32>) {{
  ^bb0(%v: f32, %bv: f32, %out: f32):
    %zero = arith.constant 0.0 : f32
    %0 = arith.addf %v, %bv : f32
    %1 = arith.maximumf %0, %zero : f32
    linalg.yield %1 : f32
  }}
"""


def case_ir(et, m, n, k, rank3, epilogue=False, zero_fill=False):
    x_shape = (1, m, k) if rank3 else (m, k)
    xs = "x".join(map(str, x_shape))
    ir = ["#id2 = affine_map<(d0, d1) -> (d0, d1)>",
          "#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>",
          "#mk = affine_map<(d0, d1, d2) -> (d0, d2)>",
          "#nk = affine_map<(d0, d1, d2) -> (d1, d2)>",
          "#mn = affine_map<(d0, d1, d2) -> (d0, d1)>",
          "#row = affine_map<(d0, d1) -> (d1)>",
          f"func.func @mm(%x: memref<{xs}x{et}>, %w: memref<{n}x{k}x{et}>, "
          f"%c: memref<{m}x{n}xf32>"
          + (f", %bias: memref<{n}xf32>" if epilogue else "") + ") {"]
    ir.append(EXT.format(wide="xf", src="x", shape=xs, et=et,
                         idm=f"#id{len(x_shape)}",
                         its=", ".join(['"parallel"'] * len(x_shape))))
    a = "xf"
    if rank3:
        ir.append(f"  %xv = memref.collapse_shape %xf [[0, 1], [2]] : "
                  f"memref<{xs}xf32> into memref<{m}x{k}xf32>")
        a = "xv"
    ir.append(EXT.format(wide="wf", src="w", shape=f"{n}x{k}", et=et,
                         idm="#id2", its='"parallel", "parallel"'))
    if zero_fill:
        ir.append("  %c0f = arith.constant 0.0 : f32")
        if zero_fill == "copy":
            # A zero tensor shared by several contractions bufferizes to a
            # zero-filled buffer copied into each C.
            ir.append(f"  %zeros = memref.alloc() : memref<{m}x{n}xf32>")
            ir.append(f"  linalg.fill ins(%c0f : f32) outs(%zeros : memref<{m}x{n}xf32>)")
            ir.append(f"  memref.copy %zeros, %c : memref<{m}x{n}xf32> to memref<{m}x{n}xf32>")
        else:
            ir.append(f"  linalg.fill ins(%c0f : f32) outs(%c : memref<{m}x{n}xf32>)")
    ir.append(f"""  linalg.generic {{indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}}
      ins(%{a}, %wf : memref<{m}x{k}xf32>, memref<{n}x{k}xf32>) outs(%c : memref<{m}x{n}xf32>) {{
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }}
{EPILOGUE.format(m=m, n=n, bias="bias") if epilogue else ""}  memref.dealloc %xf : memref<{xs}xf32>
  memref.dealloc %wf : memref<{n}x{k}xf32>
  return
}}""")
    return "\n".join(ir) + "\n", x_shape


CASES = [
    # (element type, M, N, K, rank-3 input, bias + relu epilogue)
    ("f16", 16, 8, 16, False, False),    # one warp, one mma tile, one k step
    ("f16", 64, 128, 64, False, False),  # 2 x 2 warps of 2 x 4 tiles
    ("f16", 48, 24, 48, True, False),    # WM 1 MT 1 (48 % 32), WN 1 NT 1
                                         # (24 % 16), BK 16; collapsed input
    ("f16", 96, 48, 32, False, False),   # WM 2 MT 1, WN 2 NT 1: partial staging
    ("bf16", 32, 64, 32, True, False),
    ("bf16", 16, 40, 16, False, False),
    ("f16", 64, 64, 32, False, True),    # relu(C + x W^T + bias) in the stores
    # C zero-filled first (as attn.linear lowers): the kernel starts from
    # zero and the fill goes.
    ("f16", 64, 128, 64, False, False, True),
    ("bf16", 32, 64, 32, True, True, True),
    ("f16", 32, 32, 32, False, False, "copy"),
    # Ragged shapes (an LM head over an odd vocabulary, an FFN
    # down projection of K = 88, 8-token prompts): edge blocks with
    # clamped, zero-selecting staging loads and masked C accesses.
    ("f16", 16, 50, 32, False, False),          # N = 50: N % 8 = 2
    ("f16", 32, 77, 32, False, False),          # N = 72 + 5, odd: elementwise C
    ("f16", 64, 64, 40, False, False),          # K = 40: a partial k step
    ("f16", 8, 32, 32, True, False),            # M = 8 (rank-3 x)
    ("bf16", 40, 99, 88, False, False, True),   # M, N, K ragged, zero fill
    ("f16", 24, 35, 20, False, True),           # K % 8 = 4: elementwise
                                                # staging; + bias + relu
    ("bf16", 16, 99, 32, True, True, True),     # the test GPT-2's LM head
                                                # shape + bias + relu
    # The cp.async pipeline's ring of 3 buffers wrapping around (5 k
    # steps), 4-byte copies (K % 4 = 2), and plain staging where no copy
    # size keeps the rows aligned (K odd).
    ("f16", 32, 64, 160, False, False),
    ("f16", 16, 24, 18, False, False),
    ("bf16", 16, 16, 17, False, False, True),
]


NARROW = """#id1 = affine_map<(d0) -> (d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#mk = affine_map<(d0, d1, d2) -> (d0, d2)>
#nk = affine_map<(d0, d1, d2) -> (d1, d2)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @mm(%x: memref<{m}x{k}x{et}>, %w: memref<{n}x{k}x{et}>, %bias: memref<{n}x{et}>, %y: memref<1x{m}x{n}x{et}>) {{
  %c0f = arith.constant 0.0 : f32
{ext_x}{ext_w}{ext_b}  %c = memref.alloc() : memref<{m}x{n}xf32>
  linalg.fill ins(%c0f : f32) outs(%c : memref<{m}x{n}xf32>)
  linalg.generic {{indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}}
      ins(%xf, %wf : memref<{m}x{k}xf32>, memref<{n}x{k}xf32>) outs(%c : memref<{m}x{n}xf32>) {{
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }}
{epilogue}  %c3 = memref.expand_shape %c [[0, 1], [2]] output_shape [1, {m}, {n}] : memref<{m}x{n}xf32> into memref<1x{m}x{n}xf32>
  linalg.generic {{indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}}
      ins(%c3 : memref<1x{m}x{n}xf32>) outs(%y : memref<1x{m}x{n}x{et}>) {{
  ^bb0(%in: f32, %out: {et}):
    %0 = arith.truncf %in : f32 to {et}
    linalg.yield %0 : {et}
  }}
  memref.dealloc %xf : memref<{m}x{k}xf32>
  memref.dealloc %wf : memref<{n}x{k}xf32>
  memref.dealloc %bf : memref<{n}xf32>
  memref.dealloc %c : memref<{m}x{n}xf32>
  return
}}
"""

# An f16 model's projection as lowered: bias widened from the model's type,
# result truncated back to it. The kernel must read the narrow bias and
# store the narrow result itself (no f32 copy of either).
NARROW_CASES = [("f16", 64, 64, 32), ("bf16", 32, 64, 32),
                ("f16", 32, 77, 32), ("bf16", 40, 99, 88)]


def matmul_pass(attn_opt, path, ir, pass_options):
    """@mm of `ir` after --attn-gpu-mma-matmul, and its host ops' names
    (one gpu.launch)."""
    flag = "--attn-gpu-mma-matmul"
    if pass_options:
        flag += "=" + pass_options
    func = parse_module(run_pass(attn_opt, path, ir, [flag]))["mm"]
    names = [op.name for op in func.regions[0][1]]
    assert names.count("gpu.launch") == 1, names
    return func, names


def run_narrow_case(attn_opt, et, m, n, k, mutate, rng, workdir,
                    pass_options):
    ext2 = dict(idm="#id2", its='"parallel", "parallel"', et=et)
    ir = NARROW.format(
        m=m, n=n, k=k, et=et,
        ext_x=EXT.format(wide="xf", src="x", shape=f"{m}x{k}", **ext2),
        ext_w=EXT.format(wide="wf", src="w", shape=f"{n}x{k}", **ext2),
        ext_b=EXT.format(wide="bf", src="bias", shape=f"{n}", idm="#id1",
                         its='"parallel"', et=et),
        epilogue=EPILOGUE.format(m=m, n=n, bias="bf"))
    func, names = matmul_pass(
        attn_opt, os.path.join(workdir, f"narrow_{et}_{m}x{n}x{k}.mlir"), ir,
        pass_options)
    assert "linalg.generic" not in names and "memref.alloc" not in names, names

    x = rng.standard_normal((m, k)).astype(np.float32)
    w = rng.standard_normal((n, k)).astype(np.float32)
    bias = rng.standard_normal(n).astype(np.float32)
    if et == "f16":
        narrow = [v.astype(np.float16) for v in (x, w, bias)]
        wide = [v.astype(np.float64) for v in narrow]
        y = np.zeros((1, m, n), np.float16)
    else:
        narrow = [f32_to_bf16_bits(v) for v in (x, w, bias)]
        wide = [bf16_bits_to_f64(v) for v in narrow]
        y = np.zeros((1, m, n), np.uint16)
    emu = Emulator(None if mutate == "none" else mutate)
    try:
        emu.run_func(func, narrow + [y])
    except AssertionError as e:
        print(f"FAIL {et} M={m} N={n} K={k} narrow: {type(e).__name__}: {e}")
        return False
    xv, wv, bv = wide
    expected = np.maximum(xv @ wv.T + bv, 0.0)
    got = (y.astype(np.float64) if et == "f16"
           else bf16_bits_to_f64(y)).reshape(m, n)
    # One rounding to the narrow type (half an ulp: 2^-11 f16, 2^-8 bf16).
    rel = 2.0 ** -11 if et == "f16" else 2.0 ** -8
    err = float(np.max(np.abs(got - expected) / np.maximum(np.abs(expected), 1e-3)))
    ok = bool(np.all(np.abs(got - expected) <= rel * np.abs(expected) + 1e-6))
    print(f"{'PASS' if ok else 'FAIL'} {et} M={m} N={n} K={k} narrow bias, "
          f"narrow result: max rel err {err:.3e} (bound {rel:.1e}), "
          f"mma.sync: {emu.mma_count}, wgmma: {emu.wgmma_count}")
    return ok


def ragged(m, n, k):
    return m % 16 != 0 or n % 8 != 0 or k % 16 != 0


def run_case(attn_opt, et, m, n, k, rank3, epilogue, zero_fill, mutate, rng,
             workdir, pass_options):
    ir, x_shape = case_ir(et, m, n, k, rank3, epilogue, zero_fill)
    func, names = matmul_pass(
        attn_opt, os.path.join(workdir, f"mm_{et}_{m}x{n}x{k}.mlir"), ir,
        pass_options)
    assert "gpu.launch" in names, "the pass did not rewrite the contraction"
    assert "linalg.generic" not in names, names
    assert "linalg.fill" not in names and "memref.copy" not in names, names

    x = rng.standard_normal(x_shape).astype(np.float32)
    w = rng.standard_normal((n, k)).astype(np.float32)
    c0 = rng.standard_normal((m, n)).astype(np.float32)
    if et == "f16":
        xs, ws = x.astype(np.float16), w.astype(np.float16)
        xv, wv = xs.astype(np.float64), ws.astype(np.float64)
    else:
        xs, ws = f32_to_bf16_bits(x), f32_to_bf16_bits(w)
        xv, wv = bf16_bits_to_f64(xs), bf16_bits_to_f64(ws)
    c = c0.copy()
    bias = rng.standard_normal(n).astype(np.float32)
    emu = Emulator(None if mutate == "none" else mutate)
    try:
        emu.run_func(func, [xs, ws, c] + ([bias] if epilogue else []))
    except (AssertionError, NotImplementedError) as e:
        print(f"FAIL {et} M={m} N={n} K={k}: {type(e).__name__}: {e}")
        return False
    expected = (0.0 if zero_fill else c0.astype(np.float64)) + xv.reshape(m, k) @ wv.T
    if epilogue:
        expected = np.maximum(expected + bias, 0.0)
    err = float(np.max(np.abs(c - expected)))
    mag = max(1.0, float(np.max(np.abs(expected))))
    once = bool((emu.args[2].writes == 1).all())
    mmas = -(-m // 16) * -(-n // 8) * -(-k // 16)
    # A wgmma m64nNk16 does the work of 4 N / 8 mma.sync m16n8k16 (more
    # than the shape needs where M is not a multiple of 64: padding rows).
    wgmma_mmas = emu.wgmma_macs // (16 * 8 * 16)
    if emu.wgmma_count:
        enough = emu.mma_count == 0 and wgmma_mmas >= mmas
    else:
        enough = emu.mma_count >= mmas if ragged(m, n, k) else \
            emu.mma_count == mmas
    ok = err <= 1e-5 * mag and once and enough
    print(f"{'PASS' if ok else 'FAIL'} {et} M={m} N={n} K={k}"
          f"{' (rank-3 x)' if rank3 else ''}"
          f"{' + bias + relu' if epilogue else ''}"
          f"{' from a zero fill' if zero_fill is True else ''}"
          f"{' from a copy of zeros' if zero_fill == 'copy' else ''}"
          f": max abs err {err:.3e}, "
          f"C stored once: {once}, mma.sync executed: {emu.mma_count}/{mmas}"
          f", ldmatrix: {emu.ldmatrix_count}, cp.async: "
          f"{emu.async_copy_count}, wgmma: {emu.wgmma_count} "
          f"(m16n8k16 equivalent {wgmma_mmas}), tma: {emu.tma_count}")
    return ok


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--attn-opt", required=True)
    parser.add_argument("--mutate", default="none",
                        choices=["none"] + MUTATIONS)
    parser.add_argument("--pass-options", default="",
                        help="options of --attn-gpu-mma-matmul, e.g. "
                        "'staging=plain ldmatrix=0'")
    parser.add_argument("--narrow", action="store_true",
                        help="run the narrow bias / narrow result cases")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    failures = 0
    if args.narrow:
        with tempfile.TemporaryDirectory() as workdir:
            for case in NARROW_CASES:
                if not run_narrow_case(args.attn_opt, *case, args.mutate, rng,
                                       workdir, args.pass_options):
                    failures += 1
        print(f"{len(NARROW_CASES) - failures} passed, {failures} failed"
              f" (mutation: {args.mutate})")
        sys.exit(1 if failures else 0)
    with tempfile.TemporaryDirectory() as workdir:
        for case in CASES:
            case = tuple(case) + (False,) * (7 - len(case))
            if not run_case(args.attn_opt, *case, args.mutate, rng, workdir,
                            args.pass_options):
                failures += 1
    print(f"{len(CASES) - failures} passed, {failures} failed"
          f" (mutation: {args.mutate})")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
