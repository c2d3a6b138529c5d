#!/usr/bin/env python3
"""f16/bf16 attn.linear cases that attn-gpu-mma-matmul turns into tensor-core
(mma.sync m16n8k16) kernels, ragged shapes (M, N or K not a multiple of the
mma tile) included,
compiled as one model, run on seeded random data and compared with the numpy
reference (test/reference/attn_ref.py) through opcheck.run_group.

    tensor_cores_check.py --attn-compile PATH --workdir DIR [--target cuda]

(--target cpu runs the same cases on the host, which checks the harness and
the reference, not the tensor-core kernels.)
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "reference"))

import attn_ref as ref  # noqa: E402
from opcheck import Case, T, run_group, ttype  # noqa: E402


def linear(name, m_shape, n, dtype, bias=False, tol=None):
    """attn.linear of x: m_shape (last dim K) with w: [n, K] (and b: [n])."""
    k = m_shape[-1]
    ts = [T("x", m_shape, dtype=dtype), T("w", (n, k), "weight", dtype)]
    if bias:
        ts.append(T("b", (n,), "weight", dtype))
    out = tuple(m_shape[:-1]) + (n,)
    operands = "$x, $w" + (", $b" if bias else "")
    types = ", ".join(ttype(s, d) for (_, s, _, d, _) in ts)
    op = f"attn.linear {operands} : ({types}) -> {ttype(out, dtype)}"
    return Case(name, ts, op, out,
                lambda e: ref.linear(e["x"], e["w"], e.get("b")), dtype=dtype,
                tol=tol)


def cases():
    return [
        # The shape of test/Target/cuda-tensor-cores.test (K = 128: 4 k
        # steps of 32 staged in shared memory).
        linear("linear_f16_64x128x256", (1, 64, 128), 256, "f16"),
        linear("linear_f16_bias", (2, 16, 64), 96, "f16", bias=True),
        # N = 24: one warp of one n8 tile per block.
        linear("linear_f16_n24", (16, 32), 24, "f16"),
        linear("linear_bf16_64x128x256", (1, 64, 128), 256, "bf16"),
        linear("linear_bf16_bias", (32, 48), 40, "bf16", bias=True),
        # Ragged shapes (edge blocks with bounds-checked staging and masked
        # stores): K = 40, M = 8, an LM head of an odd vocabulary (N = 99),
        # N = 50 with bias, K = 20 (element-wise staging) in bf16.
        linear("linear_f16_k40", (16, 40), 16, "f16"),
        linear("linear_f16_m8", (8, 32), 16, "f16"),
        linear("linear_f16_n99", (1, 16, 32), 99, "f16"),
        linear("linear_f16_n50_bias", (8, 32), 50, "f16", bias=True),
        linear("linear_bf16_m24_n35_k20", (24, 20), 35, "bf16"),
    ]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--attn-compile", required=True)
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--target", default="cuda")
    args = parser.parse_args()
    group = cases()
    failures = run_group("tensor_cores", group, args.attn_compile,
                         args.workdir, args.target)
    print(f"{len(group) - failures} passed, {failures} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
