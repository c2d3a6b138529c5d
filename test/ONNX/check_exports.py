#!/usr/bin/python3
"""Compiles every export of test/ONNX/Exports (scripts/gen_onnx_exports.py:
tiny transformers models exported by torch's dynamo exporter at its default
opset and at opset 23, and by the TorchScript exporter, with eager and sdpa
attention) for the CPU with batch and sequence dynamic, runs each at the
committed shapes and compares with transformers' own output.

    check_exports.py EXPORTS_DIR --attn-compile BIN --workdir DIR
                     [--only REGEX] [--jobs N] [--results FILE.json]
                     [--decode] [--precision f16|bf16]

One line per export:
  PASS     name: compiled, matches at every shape (max relative error),
           attention ops after raising (attn.sdpa + attn.mha)
  REFUSED  name: attn-compile exited 1 with a located error naming the file
           ("<file>.onnx[:<node>]: error: ...") and wrote nothing
  EXPORT-DIFFERS name: the exported graph itself is not transformers'
           model (onnxruntime or ONNX's reference evaluator on the file
           differs from transformers beyond 1e-4, as the generator
           recorded), and attnc's output differs from transformers by that
           same amount: not counted as a match
  FAIL     name: anything else: a crash, a message without a location, a
           wrong answer, a partial output
With --decode, each decoder that compiles is compiled again as a KV-cache
step (--input-shape input_ids=2x? --kv-cache 40, derived from the
stateless export) and generates greedily from the family's committed
prompts: the line adds "decodes" when the tokens equal transformers'
(<family>.generate_expected.npy), or "no cache: <the located error>" when
attn-compile refused the step. Other tokens are a FAIL where the export
matches transformers (a wrong answer); where the export itself differs,
the line says so and the export does not count as decoding.
Exports with past key/values (manifest "past", <name>-past.onnx) are
checked by decoding alone: PASS with "decodes" when the KV-cache step bound
from their past inputs (--input-shape input_ids=2x? --kv-cache 40)
generates transformers' greedy tokens, REFUSED with the located error, FAIL
otherwise.
Exports the exporter itself refused (manifest "export failed") are listed
as NOT-EXPORTED. The last line counts them all. --results writes the same
as JSON for scripts/coverage_table.py. A compiled model passes when, at
every shape, max|y - ref| <= 1e-4 * max(1, max|ref|). --precision compiles
with --precision=f16 or bf16 (f32 accumulation) and checks at the precision
tests' tolerances (4e-3, 3e-2) at the unpadded positions instead (a
padded query whose keys are all masked sees finfo.min, which f16 rounds to
-inf: zeros from attention, a mean from transformers); exports with past
key/values are
then skipped and --decode does not apply (greedy tokens from rounded logits
need not be transformers' f32 ones).
"""

import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys

import numpy as np

TOL = 1e-4
# --precision: the tolerances of Integration/CPU/precision.test.
PRECISION_TOL = {"f16": 4e-3, "bf16": 3e-2}
LOCATED = re.compile(r"^\S+\.onnx(:[^\n]*)?: error: ", re.M)


def shapes(exports, family):
    """[(tag, {input: path}, ref path)] of a family's committed shapes."""
    out = []
    for name in sorted(os.listdir(exports)):
        m = re.fullmatch(re.escape(family) + r"\.(\d+x\d+)\.ref\.npy", name)
        if not m:
            continue
        tag = m.group(1)
        inputs = {k: os.path.join(exports, f"{family}.{tag}.{k}.npy")
                  for k in ("input_ids", "attention_mask")}
        out.append((tag, inputs, os.path.join(exports, name)))
    return out


def count_attention(text):
    return len(re.findall(r"\battn\.(sdpa|mha)\b", text))


def check_decode(args, model, work, family):
    """(decodes, note): True when the derived KV-cache step generates
    transformers' greedy tokens, False with the reason otherwise, None when
    the family has no generation reference."""
    ref = {k: os.path.join(args.exports, f"{family}.generate_{k}.npy")
           for k in ("prompt", "lengths", "expected")}
    if not os.path.exists(ref["expected"]):
        return None, ""
    step_dir = os.path.join(work, "step")
    os.makedirs(step_dir, exist_ok=True)
    step = os.path.join(step_dir, "step")
    p = subprocess.run([args.attn_compile, "-q", model, "--target=cpu",
                        "--input-shape", "input_ids=2x?", "--kv-cache", "40",
                        "-o", step], capture_output=True, text=True,
                       timeout=600)
    if p.returncode != 0:
        located = LOCATED.search(p.stderr)
        if p.returncode == 1 and located and not os.listdir(step_dir):
            return False, "no cache: " + (
                located.group(0) + p.stderr[located.end():].splitlines()[0])
        return "FAIL", (f"--kv-cache: exit {p.returncode}: "
                        + p.stderr.strip()[-300:])
    out = os.path.join(work, "generated.npy")
    r = subprocess.run([step, "generate", "--weights", step + ".safetensors",
                        "--prompt", ref["prompt"], "--prompt-lengths",
                        ref["lengths"], "--max-new-tokens", "24", "--output",
                        out, "-q"], capture_output=True, text=True,
                       timeout=300)
    if r.returncode != 0:
        return "FAIL", f"generate failed: {r.stderr.strip()[-300:]}"
    got, want = np.load(out), np.load(ref["expected"])
    if got.shape != want.shape or not np.array_equal(got, want):
        diff = np.argwhere(got != want) if got.shape == want.shape else None
        where = (f"row {diff[0][0]} token {diff[0][1]}" if diff is not None
                 and diff.size else f"shape {got.shape}")
        return "WRONG", f"generated tokens differ from transformers' at {where}"
    return True, ""


def check_past(args, name, entry):
    """An export with past key/values: decoding only (check_decode)."""
    family = entry["family"]
    work = os.path.join(args.workdir, name)
    os.makedirs(work, exist_ok=True)
    result = {"name": name, "family": family, "attention": entry["attention"],
              "exporter": entry["exporter"], "opset": entry.get("opset"),
              "past": True}
    decodes, note = check_decode(
        args, os.path.join(args.exports, name + ".onnx"), work, family)
    result["decodes"] = decodes is True
    result["decode_note"] = note
    result["status"] = ("PASS" if decodes is True else
                        "REFUSED" if decodes is False else "FAIL")
    result["compiles"] = decodes is True or decodes == "WRONG"
    if decodes is not True:
        result["error"] = note
    return result


def check(args, name, entry):
    if entry.get("past"):
        return check_past(args, name, entry)
    family = entry["family"]
    model = os.path.join(args.exports, name + ".onnx")
    work = os.path.join(args.workdir, name)
    os.makedirs(work, exist_ok=True)
    result = {"name": name, "family": family, "attention": entry["attention"],
              "exporter": entry["exporter"], "opset": entry.get("opset")}
    exe = os.path.join(work, "model")
    precision = ["--precision=" + args.precision] if args.precision else []
    p = subprocess.run([args.attn_compile, "-q", model, "--target=cpu", "-o",
                        exe] + precision, capture_output=True, text=True,
                       timeout=600)
    if p.returncode != 0:
        leftovers = sorted(os.listdir(work))
        located = LOCATED.search(p.stderr)
        first = (located.group(0) + p.stderr[located.end():].splitlines()[0]
                 if located else p.stderr.strip()[:300])
        result["compiles"] = False
        result["error"] = first
        if p.returncode == 1 and located and not leftovers:
            result["status"] = "REFUSED"
        else:
            result["status"] = "FAIL"
            result["error"] = (f"exit {p.returncode}, wrote {leftovers}: "
                               + p.stderr.strip()[-300:])
        return result
    result["compiles"] = True
    attn = subprocess.run([args.attn_compile, "-q", model, "--emit=attn", "-o",
                           "-"], capture_output=True, text=True, timeout=600)
    result["fused_attention"] = count_attention(attn.stdout)
    worst = 0.0
    ok = True
    for tag, inputs, ref_path in shapes(args.exports, family):
        out = os.path.join(work, f"{tag}.out.npy")
        cmd = [exe, "-q", "--output", out]
        for key, path in inputs.items():
            cmd += ["--input", f"{key}={path}"]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            ok = False
            result["error"] = f"{tag}: run failed: {r.stderr.strip()[-300:]}"
            break
        y, ref = np.load(out), np.load(ref_path)
        if y.shape != ref.shape or not np.all(np.isfinite(y)):
            ok = False
            result["error"] = f"{tag}: shape {y.shape} (expected {ref.shape})"
            break
        diff = np.abs(y.astype(np.float64) - ref)
        if args.precision:
            # Unpadded positions only: a padded query whose window holds only
            # padding sees keys all at finfo.min, which f16 rounds to -inf
            # (attention then gives zeros, transformers a mean).
            diff = diff[np.load(inputs["attention_mask"]) != 0]
        err = float(np.max(diff) / max(1.0, float(np.max(np.abs(ref)))))
        worst = max(worst, err)
        if err > (PRECISION_TOL[args.precision] if args.precision else TOL):
            ok = False
            result["error"] = f"{tag}: relative error {err:.2e}"
    result["max_rel_err"] = worst
    result["matches"] = ok
    result["status"] = "PASS" if ok else "FAIL"
    if args.decode:
        decodes, note = check_decode(args, model, work, family)
        if decodes == "FAIL" or (decodes == "WRONG" and ok):
            result["status"] = "FAIL"
            result["error"] = note
            decodes = False
        elif decodes == "WRONG":
            decodes = False
            note = "export differs: " + note
        if decodes is not None:
            result["decodes"] = decodes
            result["decode_note"] = note
    # The exporter wrote a graph that itself differs from transformers
    # (onnxruntime or ONNX's reference evaluator on the same file, recorded
    # by the generator): attnc computing that graph gives the same error.
    exported = entry.get("export_max_rel_err")
    if (not ok and exported is not None and exported > TOL and
            "shape" not in result.get("error", "") and
            abs(worst - exported) <= max(TOL, 1e-3 * exported)):
        result["status"] = "EXPORT-DIFFERS"
        result["error"] = (
            f"the exported graph is {exported:.2e} from transformers "
            f"({entry.get('export_checked_by')}); attnc's output differs from "
            f"transformers by the same {worst:.2e}")
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("exports")
    parser.add_argument("--attn-compile", required=True)
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--only", default="")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--results")
    parser.add_argument("--decode", action="store_true",
                        help="also decode with a derived KV cache")
    parser.add_argument("--precision", choices=("f16", "bf16"),
                        help="compile at this precision (f32 accumulation)")
    args = parser.parse_args()
    if args.precision and args.decode:
        parser.error("--decode compares greedy tokens with transformers' "
                     "f32 ones: not with --precision")
    with open(os.path.join(args.exports, "manifest.json")) as f:
        manifest = json.load(f)
    entries = {n: e for n, e in sorted(manifest["exports"].items())
               if re.search(args.only, n) and
               not (args.precision and e.get("past"))}
    results = []
    todo = {}
    for name, entry in entries.items():
        if entry["status"] != "exported":
            results.append({"name": name, "family": entry["family"],
                            "attention": entry["attention"],
                            "exporter": entry["exporter"],
                            "status": "NOT-EXPORTED",
                            "error": entry["status"]})
            continue
        todo[name] = entry
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = {pool.submit(check, args, n, e): n for n, e in todo.items()}
        for future in futures:
            try:
                results.append(future.result())
            except Exception as e:  # a time-out or an unreadable output
                results.append({"name": futures[future], "status": "FAIL",
                                "error": str(e)[:300]})
    results.sort(key=lambda r: r["name"])
    counts = {}
    for r in results:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
        line = f"{r['status']} {r['name']}: "
        if r["status"] == "PASS" and r.get("past"):
            line += "with past key/values"
        elif r["status"] == "PASS":
            line += (f"max relative error {r['max_rel_err']:.1e}, "
                     f"{r['fused_attention']} attention ops")
        else:
            line += r.get("error", "")
        if r.get("decodes") is True:
            line += ", decodes"
        elif (r.get("decodes") is False and r["status"] != "FAIL" and
              not r.get("past")):
            line += ", " + r["decode_note"]
        print(line)
    if args.results:
        with open(args.results, "w") as f:
            json.dump({"versions": manifest.get("versions", {}),
                       "results": results}, f, indent=1)
    print(", ".join(f"{counts.get(s, 0)} {s.lower()}" for s in
                    ("PASS", "REFUSED", "NOT-EXPORTED", "EXPORT-DIFFERS",
                     "FAIL")))
    if args.decode:
        for past in (False, True):
            decoders = [r for r in results
                        if "decodes" in r and bool(r.get("past")) == past]
            print(f"{sum(1 for r in decoders if r['decodes'] is True)} of "
                  f"{len(decoders)} "
                  + ("exports with past key/values" if past else "decoders")
                  + " decode with a cache")
    return 1 if counts.get("FAIL") else 0


if __name__ == "__main__":
    sys.exit(main())
