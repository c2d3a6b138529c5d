#!/usr/bin/python3
"""Runs the single-op ONNX models of Ops/ (scripts/gen_onnx_op_models.py)
through attn-compile on the CPU and compares every output with
onnxruntime's committed one.

    check_ops.py CASE... --src SRC --bin BIN --workdir DIR

For each CASE, Ops/<case>.onnx (run-time inputs, fed from
Ops/<case>.<input>.npy) and Ops/<case>-folded.onnx (the same nodes on
Constant inputs) must both give Ops/<case>.<output>.ref.npy: integers
exactly, floats within 1e-5 * max(1, max|ref|) (NaN where the reference
has NaN). Where the case's ops fold (all but the compute ops), the folded
model's imported IR must be constants only: no linalg or tensor op left.
Prints one PASS/FAIL line per model.
"""

import glob
import os
import re
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "reference"))
import checkutil  # noqa: E402

OPS = os.path.join(HERE, "Ops")
# Compute ops (GELU, matmuls, norms) are not evaluated on the host: their
# folded variants still run them, on materialized constants.
NOT_FOLDED = {"gelu", "einsum", "layernorm_stash", "rmsnorm", "ms_norms",
              "attention", "attention_past", "rotary", "rotary_bcast",
              # Relu is a compute op (linalg), not host-folded.
              "shared_outputs",
              # Reductions and convolutions are computed, not folded.
              "argmax", "conv_patch"}
TOL = 1e-5


def compare(name, outputs, case):
    ok, worst = True, 0.0
    for path in sorted(glob.glob(os.path.join(OPS, case + ".*.ref.npy"))):
        key = os.path.basename(path)[len(case) + 1:-len(".ref.npy")]
        ref = np.load(path)
        y = outputs.get(key)
        if y is None:
            print(f"FAIL {name}: no output {key}")
            return False
        if y.shape != ref.shape:
            print(f"FAIL {name}: {key} has shape {y.shape}, reference {ref.shape}")
            return False
        if np.issubdtype(ref.dtype, np.integer) or ref.dtype == np.bool_:
            if not np.array_equal(y.astype(np.int64), ref.astype(np.int64)):
                print(f"FAIL {name}: {key} differs: {y.ravel()[:8]} vs {ref.ravel()[:8]}")
                ok = False
            continue
        nan = np.isnan(ref)
        if not np.array_equal(np.isnan(y), nan):
            print(f"FAIL {name}: {key} has NaN elsewhere than the reference")
            ok = False
            continue
        err = float(np.max(np.abs(y[~nan].astype(np.float64) - ref[~nan]), initial=0.0))
        worst = max(worst, err / max(1.0, float(np.max(np.abs(ref[~nan]), initial=0.0))))
    ok &= worst <= TOL
    return ok, worst


def main():
    ap = checkutil.attnc_parser()
    ap.add_argument("cases", nargs="+")
    args = ap.parse_args()
    attnc = checkutil.import_attnc(args.src, args.bin)
    os.makedirs(args.workdir, exist_ok=True)
    all_ok = True
    for case in args.cases:
        inputs = {os.path.basename(p)[len(case) + 1:-len(".npy")]: np.load(p)
                  for p in glob.glob(os.path.join(OPS, case + ".*.npy"))
                  if not p.endswith(".ref.npy")}
        for variant, feed in ((case, inputs), (case + "-folded", {})):
            model = os.path.join(OPS, variant + ".onnx")
            lib = attnc.compile(model, os.path.join(args.workdir, "lib%s.so" % variant))
            outputs = attnc.load(lib).run(**feed)
            result = compare(variant, outputs, case)
            if result is False:
                all_ok = False
                continue
            ok, worst = result
            note = ""
            if variant.endswith("-folded") and case not in NOT_FOLDED:
                ir = subprocess.run([os.path.join(args.bin, "attn-import"), model, "-o", "-",
                                     "--no-locations"], check=True, text=True,
                                    stdout=subprocess.PIPE).stdout
                left = sorted(set(re.findall(r"\b(linalg\.\w+|tensor\.\w+)", ir)))
                if left:
                    ok = False
                    note = ", not folded: " + " ".join(left)
                else:
                    note = ", folded"
            all_ok &= ok
            checkutil.verdict(ok, f"{variant}: max relative error {worst:.1e}{note}")
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
