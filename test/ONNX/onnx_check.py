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

import argparse
import glob
import os
import re
import subprocess
import sys

import numpy as np


def main():
    p = argparse.ArgumentParser()
    p.add_argument("model")
    p.add_argument("--attn-compile", required=True)
    p.add_argument("--workdir", required=True)
    p.add_argument("--tol", type=float, default=1e-4)
    p.add_argument("--tag", default="")
    p.add_argument("--compile-arg", action="append", default=[],
                   help="an extra attn-compile argument (repeatable)")
    args = p.parse_args()

    base = re.sub(r"(-op\d+)?\.onnx$", "", args.model)
    name = os.path.basename(base)
    ref = np.load(base + ".ref.npy")
    inputs = {}
    for path in sorted(glob.glob(glob.escape(base) + ".*.npy")):
        key = path[len(base) + 1:-len(".npy")]
        if key != "ref":
            inputs[key] = path
    os.makedirs(args.workdir, exist_ok=True)
    stem = os.path.basename(args.model)[:-len(".onnx")] + args.tag
    exe = os.path.join(args.workdir, stem)
    cmd = [args.attn_compile, "-q", args.model, "--target=cpu", "-o", exe]
    for key, path in inputs.items():
        shape = np.load(path).shape
        cmd += ["--input-shape", key + "=" + "x".join(map(str, shape))]
    cmd += args.compile_arg
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
    print(f"{'PASS' if ok else 'FAIL'} {os.path.basename(args.model)}"
          f"{args.tag}: max abs error {err:.2e}, tolerance "
          f"{args.tol * mag:.1e}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
