#!/usr/bin/env python3
"""Compiles one example model once per --no-* switch of attn-compile (each
alone, then all together), runs each binary on seeded random weights and
inputs and compares it with the numpy reference (test/reference/attn_ref.py)
at max|y - ref| <= tol * max(1, max|ref|).

    flagcheck.py KIND --attn-compile PATH --workdir DIR [--tol T]

The switches are read from `attn-compile --help`, so a new one is covered
(and its absence from the test's CHECK lines noticed) without editing this
script. KIND is small_encoder or decoder_block (the example files as they
are) or bert: the BERT example's template (scripts/gen_examples.py) at 2
layers, d_model 128, 4 heads, d_ff 256, seq 32, so that a dozen compiles fit
in CI; it has the same ops, erf GELU and epsilon as the 12-layer file.
"""

import argparse
import os
import re
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, os.path.join(ROOT, "test", "reference"))
import gen_examples  # noqa: E402
import make_weights as mw  # noqa: E402

SMALL_BERT = dict(layers=2, d=128, heads=4, dff=256, seq=32)


def no_switches(attn_compile):
    """The --no-* switches attn-compile lists in --help, sorted; those for
    imported models only (described as "model.onnx: ...") and those for one
    CUDA chip (described as "sm_XY...: ...", e.g. --no-wgmma) do not apply
    to these CPU runs."""
    text = subprocess.run([attn_compile, "--help"], check=True,
                          capture_output=True, text=True).stdout
    found = re.findall(r"^\s+(--no-[a-z0-9-]+)\s+- (.*)$", text, re.M)
    return sorted({name for name, desc in found
                   if not desc.startswith("model.onnx:")
                   and not re.match(r"sm_\d+a?:", desc)})


def model_and_config(kind, workdir):
    cfg = dict(mw.DEFAULTS[kind])
    if kind == "bert":
        cfg.update(SMALL_BERT)
        path = os.path.join(workdir, "bert_small.mlir")
        with open(path, "w") as f:
            f.write(gen_examples.bert_base(seq=cfg["seq"], d=cfg["d"], heads=cfg["heads"],
                                           dff=cfg["dff"], layers=cfg["layers"]))
        return path, cfg
    return os.path.join(ROOT, "examples", kind + ".mlir"), cfg


def main():
    p = argparse.ArgumentParser()
    p.add_argument("kind", choices=mw.MODELS)
    p.add_argument("--attn-compile", required=True)
    p.add_argument("--workdir", required=True)
    p.add_argument("--tol", type=float, default=1e-5)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    os.makedirs(args.workdir, exist_ok=True)
    model, cfg = model_and_config(args.kind, args.workdir)
    W, resolved = mw.make_weights(args.kind, args.seed,
                                  **{k: v for k, v in cfg.items() if k != "seq"})
    seq = cfg["seq"]
    cfg.update(resolved)
    cfg["seq"] = seq
    weights = os.path.join(args.workdir, "weights.safetensors")
    mw.tensorio.write_safetensors(weights, W)
    inputs = mw.make_inputs(args.kind, cfg, args.seed)
    expected = np.asarray(mw.run_reference(args.kind, W, inputs, cfg), dtype=np.float64)
    mag = max(1.0, float(np.max(np.abs(expected))))
    run_inputs = []
    for i, x in enumerate(inputs.values()):
        path = os.path.join(args.workdir, f"in{i}.npy")
        np.save(path, x)
        run_inputs += ["--input", path]

    switches = no_switches(args.attn_compile)
    print(f"switches: {' '.join(switches)}")
    failed = 0
    for combo in [[s] for s in switches] + [switches]:
        label = combo[0] if len(combo) == 1 else "all"
        exe = os.path.join(args.workdir, "model" + label.replace("-", "_"))
        out = exe + ".out.npy"
        compiled = subprocess.run([args.attn_compile, model, "--target=cpu", "-q", "-o", exe]
                                  + combo, capture_output=True, text=True)
        if compiled.returncode != 0:
            print(f"FAIL {args.kind} {label}: attn-compile exited with "
                  f"{compiled.returncode}\n{compiled.stderr[-2000:]}")
            failed += 1
            continue
        ran = subprocess.run([exe, "--weights", weights] + run_inputs + ["--output", out],
                             capture_output=True, text=True)
        if ran.returncode != 0:
            print(f"FAIL {args.kind} {label}: the model exited with "
                  f"{ran.returncode}\n{ran.stderr[-2000:]}")
            failed += 1
            continue
        y = np.load(out).astype(np.float64)
        ok = y.shape == expected.shape and bool(np.all(np.isfinite(y)))
        err = float(np.max(np.abs(y - expected))) if ok else float("inf")
        ok = ok and err <= args.tol * mag
        failed += not ok
        print(f"{'PASS' if ok else 'FAIL'} {args.kind} {label}: max abs err {err:.3e}, "
              f"tolerance {args.tol * mag:.1e}")
        for path in (exe, out):
            os.remove(path)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
