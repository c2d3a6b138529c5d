#!/usr/bin/env python3
"""Compiles a model with dynamic dimensions once and runs it at several
sizes, through the model executable (`MODEL --input ids.npy`) and through
the attnc Python package, against the numpy reference (test/reference) and
against a static twin compiled for each size.

    dynamic_shapes_check.py --src SRC --attn-compile BIN --workdir DIR
        [--kind small_encoder|decoder_block] --model DYN.mlir
        --static-template STATIC.mlir --pattern 1x16x
        --shape 1x5 --shape 1x16 --shape 1x37 [--flag F ...]

DYN.mlir is the example model of KIND (examples/KIND.mlir) with `?` where
the batch and/or sequence are (e.g. tensor<1x?x64xf32>); the static twin
for inputs of batch B and sequence S is STATIC.mlir with every PATTERN
(`1x16x`) replaced by `BxSx`. Weights and inputs (ids, or activations for
decoder_block) are seeded (scripts/make_weights.py). Each check prints one
line:

    PASS 1x5 cli vs reference max err 1.2e-07 (tol 1e-05)

with tol relative to max(1, max|reference|).
"""

import argparse
import os
import subprocess
import sys

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", required=True)
    ap.add_argument("--attn-compile", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--kind", default="small_encoder",
                    choices=("small_encoder", "decoder_block"))
    ap.add_argument("--model", required=True)
    ap.add_argument("--static-template", required=True)
    ap.add_argument("--pattern", default="1x16x")
    ap.add_argument("--shape", action="append", required=True)
    ap.add_argument("--flag", action="append", default=[],
                    help="extra attn-compile flag for both builds")
    ap.add_argument("--tol", type=float, default=1e-5)
    args = ap.parse_args()
    sys.path.insert(0, os.path.join(args.src, "python"))
    sys.path.insert(0, os.path.join(args.src, "scripts"))
    sys.path.insert(0, os.path.join(args.src, "test", "reference"))
    import attnc
    import make_weights as mw
    import tensorio

    os.makedirs(args.workdir, exist_ok=True)
    work = lambda name: os.path.join(args.workdir, name)
    cfg = dict(mw.DEFAULTS[args.kind])
    W, resolved = mw.make_weights(
        args.kind, 0, **{k: v for k, v in cfg.items() if k != "seq"})
    cfg.update(resolved)
    weights = work("w.safetensors")
    tensorio.write_safetensors(weights, W)

    # One compile of the dynamic model: an executable and a library.
    compile_ = [args.attn_compile, "-q", "--target=cpu"] + args.flag
    exe, lib = work("dyn"), work("libdyn.so")
    subprocess.run(compile_ + [args.model, "-o", exe], check=True)
    subprocess.run(compile_ + [args.model, "--shared", "-o", lib], check=True)
    model = attnc.load(lib, weights=weights)
    print("inputs:", [(i.name, i.shape) for i in model.inputs])
    print("outputs:", [(o.name, o.shape) for o in model.outputs])

    failed = False

    def check(what, got, want, tol):
        nonlocal failed
        err = float(np.max(np.abs(np.asarray(got, np.float64) - want)))
        bound = tol * max(1.0, float(np.max(np.abs(want))))
        ok = got.shape == want.shape and err <= bound
        failed |= not ok
        print("%s %s max err %.2g (tol %.2g)%s"
              % ("PASS" if ok else "FAIL", what, err, bound,
                 "" if got.shape == want.shape else
                 " shape %s != %s" % (got.shape, want.shape)))

    template = open(args.static_template).read()
    rng = np.random.default_rng(1)
    for text in args.shape:
        b, s = (int(v) for v in text.split("x"))
        if args.kind == "small_encoder":
            name = "ids"
            ids = rng.integers(0, cfg["vocab"], size=(b, s)).astype(np.int32)
        else:
            name = "x"
            ids = rng.standard_normal((b, s, cfg["d"])).astype(np.float32)
        ids_path = work("%s_%s.npy" % (name, text))
        np.save(ids_path, ids)
        ref = np.asarray(mw.run_reference(args.kind, W, {name: ids}, cfg),
                         np.float64)

        out = work("dyn_%s.npy" % text)
        subprocess.run([exe, "-q", "--weights", weights, "--input", ids_path,
                        "--output", out], check=True)
        cli = np.load(out)
        check("%s cli vs reference" % text, cli, ref, args.tol)
        py = model.run(ids)
        (py_out,) = py.values()
        check("%s python vs cli" % text, py_out, cli.astype(np.float64), 0.0)

        # The static twin at this size, compiled on its own.
        static_mlir = work("static_%s.mlir" % text)
        with open(static_mlir, "w") as f:
            f.write(template.replace(args.pattern, "%dx%dx" % (b, s)))
        static_exe = work("static_%s" % text)
        subprocess.run(compile_ + [static_mlir, "-o", static_exe], check=True)
        static_out = work("static_%s.npy" % text)
        subprocess.run([static_exe, "-q", "--weights", weights, "--input",
                        ids_path, "--output", static_out], check=True)
        check("%s dynamic vs static twin" % text, cli,
              np.load(static_out).astype(np.float64), args.tol)
    print("FAIL" if failed else "ALL PASS")
    return 1 if failed else 0



if __name__ == "__main__":
    sys.exit(main())
