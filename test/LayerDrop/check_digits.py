#!/usr/bin/env python3
"""Compiles the committed trained digit classifiers (Inputs/, written by
examples/layerdrop/report.py --write-lit) with each case's --layer-drop
strategy or --prune spec, runs them on the committed test split and checks
the layers (or heads / FFN groups) kept and the accuracy against PyTorch's
for the same network (expected.json).

    check_digits.py INPUTS_DIR --attn-compile PATH --workdir DIR [--only CASE]

Per case one line: `PASS <case>: kept [...], accuracy A (expected E)` or
`FAIL <case>: why`. Deterministic strategies must keep exactly the expected
layers and reach exactly PyTorch's accuracy; a --prune case builds its
spec from the committed per-layer scores ("head_scores" + "keep_heads",
"ffn_scores" + "keep_ffn_groups"), must prune every layer's attention or
FFN to the kept count and reach exactly PyTorch's accuracy with the heads /
groups those scores select; the search (run here on a
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


def prune_spec(case, inputs, workdir):
    """Writes the case's --prune spec; returns its path."""
    prune = case["prune"]
    unit = json.load(open(prune["scores"].replace("{inputs}", inputs)))
    layers = {}
    for i, (heads, groups) in enumerate(zip(unit["head_scores"],
                                            unit["ffn_scores"])):
        layer = {}
        if prune.get("keep_heads"):
            layer.update(head_scores=heads, keep_heads=prune["keep_heads"])
        if prune.get("keep_ffn_groups"):
            layer.update(ffn_scores=groups,
                         keep_ffn_groups=prune["keep_ffn_groups"])
        layers[str(i)] = layer
    path = os.path.join(workdir, case["name"] + ".prune.json")
    with open(path, "w") as f:
        json.dump(dict(ffn_group_size=unit["ffn_group_size"], layers=layers), f)
    return path


def pruned_counts(case, text):
    """The pruning remarks: None if each of the case's layers reports its
    kept heads / groups, else what is wrong."""
    prune, shape = case["prune"], case["pruned"]
    for key, unit, total in (("keep_heads", "heads", shape["heads"]),
                             ("keep_ffn_groups", "FFN groups", shape["groups"])):
        want = shape["layers"] if prune.get(key) else 0
        got = len(re.findall(rf"attn-prune-structure: kept {prune.get(key)} "
                             rf"of {total} {unit}", text))
        if got != want:
            return f"{got} remarks 'kept {prune.get(key)} of {total} {unit}', expected {want}"
    return None


def check(case, inputs, args):
    model = os.path.join(inputs, case["model"] + ".onnx")
    exe = os.path.join(args.workdir, case["name"])
    if case.get("prune"):
        return check_result(case, inputs, args, exe,
                            [args.attn_compile, model, "-o", exe, "--prune=" +
                             prune_spec(case, inputs, args.workdir)])
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
    return check_result(case, inputs, args, exe, cmd)


def check_result(case, inputs, args, exe, cmd):
    rc, text = run(cmd)
    if rc:
        return f"FAIL {case['name']}: attn-compile failed:\n{text}"
    if case.get("prune"):
        wrong = pruned_counts(case, text)
        if wrong:
            return f"FAIL {case['name']}: {wrong} in:\n{text}"
        p = case["prune"]
        kept = (f"{p.get('keep_heads') or case['pruned']['heads']} of "
                f"{case['pruned']['heads']} heads, "
                f"{p.get('keep_ffn_groups') or case['pruned']['groups']} of "
                f"{case['pruned']['groups']} FFN groups in each of "
                f"{case['pruned']['layers']} layers")
    else:
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
