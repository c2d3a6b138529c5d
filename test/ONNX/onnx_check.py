#!/usr/bin/python3
"""Compiles an exported ONNX model with attn-compile, runs it on the
committed reference inputs and compares with PyTorch's committed output.

    onnx_check.py MODEL.onnx --attn-compile BIN --workdir DIR
                  [--tol 1e-4] [--tag T] [--compile-arg=ARG ...]

The inputs are Models/<name>.<input>.npy and the reference is
Models/<name>.ref.npy, where <name> is the model file's name without the
-op<N>.onnx suffix (both written by scripts/gen_onnx_models.py). The
inputs' symbolic dimensions are fixed from the .npy shapes
(--input-shape), the inputs are passed by name, and the executable finds
its weights beside it (no --weights). Passes when
    max|y - ref| <= tol * max(1, max|ref|)
and prints one PASS/FAIL line with the figures.
"""

import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reference"))
import checkutil  # noqa: E402


def main():
    p = checkutil.onnx_model_parser()
    p.add_argument("--tol", type=float, default=1e-4)
    p.add_argument("--tag", default="")
    p.add_argument("--compile-arg", action="append", default=[],
                   help="an extra attn-compile argument (repeatable)")
    args = p.parse_args()

    base, inputs = checkutil.model_inputs(args.model)
    name = os.path.basename(base)
    ref = np.load(base + ".ref.npy")
    os.makedirs(args.workdir, exist_ok=True)
    stem = os.path.basename(args.model)[:-len(".onnx")] + args.tag
    exe = os.path.join(args.workdir, stem)
    cmd = [args.attn_compile, "-q", args.model, "--target=cpu", "-o", exe]
    cmd += checkutil.input_shape_flags(inputs) + args.compile_arg
    subprocess.run(cmd, check=True)
    if not os.path.exists(exe + ".safetensors"):
        sys.exit(f"FAIL {name}: attn-compile wrote no {exe}.safetensors")
    out = os.path.join(args.workdir, stem + ".out.npy")
    run = [exe, "-q", "--output", out]
    # Reversed order on purpose: inputs are matched by name, not position.
    for key, path in reversed(list(inputs.items())):
        run += ["--input", f"{key}={path}"]
    subprocess.run(run, check=True)
    y = np.load(out)
    if y.shape != ref.shape:
        print(f"FAIL {name}{args.tag}: shape {y.shape}, reference {ref.shape}")
        return 1
    err = float(np.max(np.abs(y.astype(np.float64) - ref)))
    mag = max(1.0, float(np.max(np.abs(ref))))
    ok = bool(np.all(np.isfinite(y))) and err <= args.tol * mag
    return checkutil.verdict(ok, f"{os.path.basename(args.model)}{args.tag}: max abs "
                                 f"error {err:.2e}, tolerance {args.tol * mag:.1e}")


if __name__ == "__main__":
    sys.exit(main())
