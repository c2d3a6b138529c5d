#!/usr/bin/python3
"""Compiles an exported ONNX model once with its symbolic dimensions left
dynamic (no --input-shape), runs it at every shape that has a committed
reference and compares with onnxruntime's outputs; also compiles the static
twin at each shape (--input-shape from the inputs) and compares the two.

    onnx_dyn_check.py MODEL.onnx --attn-compile BIN --workdir DIR
                      [--tol 1e-4] [--tag T] [--compile-arg=ARG ...]
                      [--no-static]

References: Models/dynamic/<name>.<B>x<S>.<input>.npy and
Models/dynamic/<name>.<B>x<S>.ref.npy (scripts/gen_onnx_models.py
--dynamic-refs). Passes when, at every shape,
    max|y - ref| <= tol * max(1, max|ref|)
and the static twin's output agrees with the dynamic model's to the same
tolerance. Prints one PASS/FAIL line per shape and one overall.
"""

import glob
import os
import re
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reference"))
import checkutil  # noqa: E402


def shapes_of(model):
    """{"BxS": {input: path}, ...} and the reference paths of `model`."""
    base = re.sub(r"(-op\d+)?\.onnx$", "", model)
    name = os.path.basename(base)
    ddir = os.path.join(os.path.dirname(base), "dynamic")
    out = {}
    for ref in sorted(glob.glob(os.path.join(glob.escape(ddir), name + ".*.ref.npy"))):
        shape = ref[len(os.path.join(ddir, name)) + 1:-len(".ref.npy")]
        stem = os.path.join(ddir, f"{name}.{shape}")
        inputs = {}
        for path in sorted(glob.glob(glob.escape(stem) + ".*.npy")):
            key = path[len(stem) + 1:-len(".npy")]
            if key != "ref":
                inputs[key] = path
        out[shape] = (inputs, ref)
    return name, out


def run(exe, inputs, out):
    cmd = [exe, "-q", "--output", out]
    for key, path in inputs.items():
        cmd += ["--input", f"{key}={path}"]
    subprocess.run(cmd, check=True)
    return np.load(out)


def main():
    p = checkutil.onnx_model_parser()
    p.add_argument("--tol", type=float, default=1e-4)
    p.add_argument("--tag", default="")
    p.add_argument("--compile-arg", action="append", default=[])
    p.add_argument("--no-static", action="store_true",
                   help="skip the static twins")
    args = p.parse_args()
    name, shapes = shapes_of(args.model)
    if len(shapes) < 3:
        print(f"FAIL {name}: {len(shapes)} reference shapes, expected 3")
        return 1
    os.makedirs(args.workdir, exist_ok=True)
    stem = os.path.basename(args.model)[:-len(".onnx")] + args.tag
    exe = os.path.join(args.workdir, stem + "-dyn")
    subprocess.run([args.attn_compile, "-q", args.model, "--target=cpu", "-o",
                    exe] + args.compile_arg, check=True)
    ok = True
    for shape, (inputs, refpath) in shapes.items():
        ref = np.load(refpath)
        y = run(exe, inputs, os.path.join(args.workdir, f"{stem}.{shape}.out.npy"))
        mag = max(1.0, float(np.max(np.abs(ref))))
        good = y.shape == ref.shape and bool(np.all(np.isfinite(y)))
        err = float(np.max(np.abs(y.astype(np.float64) - ref))) if good else float("inf")
        good = good and err <= args.tol * mag
        msg = f"{name}{args.tag} {shape}: shape {y.shape}, max abs error {err:.2e}"
        if not args.no_static:
            static = os.path.join(args.workdir, f"{stem}-{shape}")
            subprocess.run([args.attn_compile, "-q", args.model, "--target=cpu",
                            "-o", static] + checkutil.input_shape_flags(inputs)
                           + args.compile_arg, check=True)
            ys = run(static, inputs, os.path.join(args.workdir, f"{stem}.{shape}.static.npy"))
            serr = float(np.max(np.abs(ys.astype(np.float64) - y))) if ys.shape == y.shape else float("inf")
            good = good and serr <= args.tol * mag
            msg += f", static twin differs by {serr:.2e}"
        checkutil.verdict(good, msg)
        ok = ok and good
    return checkutil.verdict(ok, f"{name}{args.tag}: dynamic model at {len(shapes)} shapes")


if __name__ == "__main__":
    sys.exit(main())
