#!/usr/bin/env python3
"""Compiles the committed trained digit classifiers (Inputs/, written by
examples/layerdrop/report.py --write-lit) with each case's --layer-drop
strategy, runs them on the committed test split and checks the layers kept
and the accuracy against PyTorch's for the same layers (expected.json).

    check_digits.py INPUTS_DIR --attn-compile PATH --workdir DIR [--only CASE]

Per case one line: `PASS <case>: kept [...], accuracy A (expected E)` or
`FAIL <case>: why`. Deterministic strategies must keep exactly the expected
layers and reach exactly PyTorch's accuracy; the search (run here on a
smaller calibration set than the study's) must reach the expected accuracy
within the case's tolerance. Needs numpy only.
"""

import argparse
import json
import os
import re
import subprocess
import sys

import numpy as np


def run(cmd):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    return proc.returncode, proc.stdout + proc.stderr


def check(case, inputs, args):
    model = os.path.join(inputs, case["model"] + ".onnx")
    exe = os.path.join(args.workdir, case["name"])
    spec = case["spec"].replace("{inputs}", inputs)
    extra = [a.replace("{inputs}", inputs).replace("{workdir}", args.workdir)
             for a in case.get("args", [])]
    cmd = [args.attn_compile, model, "-o", exe, "--layer-drop=" + spec] + extra
    if "search" in spec:
        # The search runs at the calibration's size; its keep list is then
        # compiled for the test split's batch.
        rc, text = run(cmd[:3] + [exe + ".mlir", "--emit=linalg"] + cmd[4:])
        if rc:
            return f"FAIL {case['name']}: search failed:\n{text}"
        m = re.search(r"search \(.*\) kept \[([^\]]*)\]", text)
        if not m:
            return f"FAIL {case['name']}: no search result in:\n{text}"
        cmd = [args.attn_compile, model, "-o", exe,
               "--layer-drop=strategy=keep-list layers=" + m.group(1)]
    rc, text = run(cmd)
    if rc:
        return f"FAIL {case['name']}: attn-compile failed:\n{text}"
    m = re.search(r"attn-layer-drop \([a-z-]+\): kept \[([^\]]*)\]", text)
    if not m:
        return f"FAIL {case['name']}: no LayerDrop remark in:\n{text}"
    kept = [int(t.split()[0]) for t in m.group(1).split(",") if t.strip()]
    out = exe + ".logits.npy"
    rc, text = run([exe, "--input",
                    "pixels=" + os.path.join(inputs, "test_x.npy"),
                    "--output", out])
    if rc:
        return f"FAIL {case['name']}: the executable failed:\n{text}"
    labels = np.load(os.path.join(inputs, "test_y.npy"))
    logits = np.load(out)
    if logits.shape != (labels.shape[0], 10):
        return f"FAIL {case['name']}: logits of shape {logits.shape}"
    correct = int((logits.argmax(-1) == labels).sum())
    accuracy = correct / labels.shape[0]
    expected = case["accuracy"]
    line = (f"{case['name']}: kept {kept}, accuracy {accuracy:.4f} "
            f"({correct}/{labels.shape[0]}; expected {expected:.4f}")
    tolerance = case.get("tolerance", 0.0)
    if tolerance:
        line += f" +- {tolerance}"
    line += ")"
    if case.get("kept") is not None and kept != case["kept"]:
        return f"FAIL {line}: expected kept {case['kept']}"
    # expected.json rounds accuracies to 6 digits: compare image counts.
    expected_correct = round(expected * labels.shape[0])
    if abs(correct - expected_correct) > round(tolerance * labels.shape[0]):
        return f"FAIL {line}"
    return f"PASS {line}"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("inputs")
    p.add_argument("--attn-compile", required=True)
    p.add_argument("--workdir", required=True)
    p.add_argument("--only", action="append", default=[])
    args = p.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    cases = json.load(open(os.path.join(args.inputs, "expected.json")))["cases"]
    failed = 0
    for case in cases:
        if args.only and case["name"] not in args.only:
            continue
        line = check(case, args.inputs, args)
        failed += line.startswith("FAIL")
        print(line, flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
