#!/usr/bin/env python3
"""Compiles an example model with attn-compile, runs it on seeded random
weights and inputs, and compares its output with the numpy reference model
(test/reference/attn_ref.py) at a stated tolerance.

    modelcheck.py MODEL.mlir KIND --attn-compile PATH --workdir DIR
                  [--layer-drop OPTS --keep 0,2,4] [--tol T] [--cfg k=v ...]
                  [--compile-flag FLAG ...]

KIND is small_encoder, bert or decoder_block (scripts/make_weights.py).
--layer-drop passes LayerDrop options to attn-compile; --keep gives the
reference the layers it should keep. The check is
    max|y - ref| <= tol * max(1, max|ref|).
Prints the error and, from the binary's summary, the weight bytes read.
"""

import argparse
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
sys.path.insert(0, os.path.join(HERE, "..", "reference"))
import make_weights as mw  # noqa: E402
import tensorio  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("model")
    p.add_argument("kind", choices=mw.MODELS)
    p.add_argument("--attn-compile", required=True)
    p.add_argument("--workdir", required=True)
    p.add_argument("--layer-drop", default="")
    p.add_argument("--keep", default="")
    p.add_argument("--tol", type=float, default=1e-5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--target", default="cpu", choices=("cpu", "cuda"))
    p.add_argument("--cfg", nargs="*", default=[], help="make_weights config overrides, k=v")
    p.add_argument("--weights", default="", help="use this weights file instead of generating one")
    p.add_argument("--compile-flag", action="append", default=[],
                   help="extra attn-compile flag (repeatable), e.g. --precision=f16")
    args = p.parse_args()

    os.makedirs(args.workdir, exist_ok=True)
    cfg = dict(mw.DEFAULTS[args.kind])
    for kv in args.cfg:
        k, v = kv.split("=")
        cfg[k] = int(v)
    stem = os.path.join(args.workdir, os.path.splitext(os.path.basename(args.model))[0])
    if args.weights:
        weights_path = args.weights
        W = tensorio.read_safetensors(weights_path)
    else:
        W, resolved = mw.make_weights(
            args.kind, args.seed, **{k: v for k, v in cfg.items() if k != "seq"})
        cfg.update(resolved)
        weights_path = stem + ".safetensors"
        tensorio.write_safetensors(weights_path, W)
    inputs = mw.make_inputs(args.kind, cfg, args.seed)
    keep = [int(i) for i in args.keep.split(",")] if args.keep else None
    expected = np.asarray(mw.run_reference(args.kind, W, inputs, cfg, keep), dtype=np.float64)

    exe = stem + ".bin"
    cmd = [args.attn_compile, args.model, "--target=" + args.target, "-q", "-o", exe]
    if args.layer_drop:
        cmd.append("--layer-drop=" + args.layer_drop)
    cmd += args.compile_flag
    subprocess.run(cmd, check=True)
    run = [exe, "--weights", weights_path]
    for i, (name, x) in enumerate(inputs.items()):
        path = f"{stem}.in{i}.npy"
        np.save(path, x)
        run += ["--input", path]
    out = stem + ".out.npy"
    run += ["--output", out]
    summary = subprocess.run(run, check=True, capture_output=True, text=True).stdout
    for line in summary.splitlines():
        if line.startswith("weights:"):
            print(line)
    y = np.load(out).astype(np.float64)
    if y.shape != expected.shape:
        print(f"FAIL {args.kind}: shape {y.shape} vs reference {expected.shape}")
        sys.exit(1)
    err = float(np.max(np.abs(y - expected)))
    mag = max(1.0, float(np.max(np.abs(expected))))
    ok = bool(np.all(np.isfinite(y))) and err <= args.tol * mag
    print(f"{'PASS' if ok else 'FAIL'} {os.path.basename(args.model)} ({args.kind}"
          f"{', keep ' + args.keep if keep else ''}): max abs err {err:.3e}, "
          f"tolerance {args.tol * mag:.1e}, |ref| max {mag:.3g}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
