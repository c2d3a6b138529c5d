#!/usr/bin/env python3
"""Writes the model coverage table (docs/coverage.md) from test results.

    scripts/coverage_table.py --onnx RESULTS.json [-o docs/coverage.md]

RESULTS.json is what test/ONNX/check_exports.py --results writes: one entry
per export of test/ONNX/Exports with its status (PASS, REFUSED,
NOT-EXPORTED, FAIL), whether it compiles, the largest relative error
against transformers, and the attention ops left after raising. The table
has a row per architecture, exporter/opset and attention implementation,
and says for each whether it compiles, matches transformers (1e-4
relative), runs fused attention and decodes with a KV cache.

    build/bin/attn-compile ... (via lit) or directly:
    python3 test/ONNX/check_exports.py test/ONNX/Exports \\
        --attn-compile build/bin/attn-compile --workdir out/exports \\
        --results out/exports.json
    python3 scripts/coverage_table.py --onnx out/exports.json
"""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ENCODERS = {"bert", "roberta", "distilbert", "electra", "albert"}
EXPORTERS = {"dynamo": "torch.onnx dynamo (default opset)",
             "dynamo23": "torch.onnx dynamo, opset 23",
             "ts17": "TorchScript exporter, opset 17"}


def mark(value):
    return {True: "yes", False: "no", None: "no"}.get(value, str(value))


def onnx_rows(results):
    rows = []
    for r in results:
        if r.get("past"):
            continue
        status = r["status"]
        if status == "NOT-EXPORTED":
            error = r.get("error", "")
            compiles, matches, fused = None, None, None
            if error.startswith("no such model: "):
                note = "transformers: " + error[len("no such model: "):][:120]
            else:
                note = ("the exporter fails: "
                        + error.replace("export failed: ", "")[:120])
        else:
            compiles = r.get("compiles", False)
            matches = r.get("matches") if compiles else None
            fused = (r.get("fused_attention", 0) > 0) if compiles else None
            note = ""
            if status == "REFUSED":
                note = r.get("error", "")[:160]
            elif status == "EXPORT-DIFFERS":
                note = "the export itself differs from transformers: " + \
                    r.get("error", "")[:160]
            elif status == "FAIL":
                note = "FAILS: " + r.get("error", "")[:160]
            elif matches:
                note = f"max rel. error {r['max_rel_err']:.1e}"
        exporter = EXPORTERS.get(r["exporter"], r["exporter"])
        opset = r.get("opset")
        # Decoding with a KV cache derived from the stateless export
        # (check_exports.py --decode).
        decodes = ("n/a" if r["family"] in ENCODERS else
                   r.get("decodes") if compiles else None)
        if decodes is False and r.get("decode_note"):
            note = (note + "; " if note else "") + r["decode_note"][:160]
        rows.append((r["family"], f"{exporter}", opset, r["attention"],
                     compiles, matches, fused, decodes, note))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--onnx", required=True)
    parser.add_argument("-o", "--output",
                        default=os.path.join(HERE, "..", "docs", "coverage.md"))
    args = parser.parse_args()
    with open(args.onnx) as f:
        data = json.load(f)
    rows = onnx_rows(data["results"])
    versions = data.get("versions", {})
    total = sum(1 for r in rows if r[4] is not None)
    compiled = sum(1 for r in rows if r[4])
    matched = sum(1 for r in rows if r[5])
    fused = sum(1 for r in rows if r[6])
    differs = sum(1 for r in data["results"]
                  if r["status"] == "EXPORT-DIFFERS")
    decoders = sum(1 for r in rows if r[7] != "n/a" and r[4])
    decoding = sum(1 for r in rows if r[7] is True)
    lines = [
        "# Model coverage",
        "",
        "Written by `scripts/coverage_table.py` from the results of",
        "`test/ONNX/check_exports.py` on the exports in `test/ONNX/Exports`",
        "(tiny random configs exported by "
        + ", ".join(f"{k} {v}" for k, v in sorted(versions.items())) + ").",
        "Each export is compiled once for the CPU with batch and sequence",
        "dynamic, run at three shapes with padded rows, and compared with",
        "transformers' own output (1e-4 relative). Each decoder is compiled",
        "again as a KV-cache step derived from the stateless export",
        "(`--input-shape input_ids=2x? --kv-cache 40`) and generates 24",
        "tokens greedily from two prompts; it decodes when the tokens equal",
        "transformers' `generate()`.",
        "",
        f"ONNX exports: {compiled} of {total} compile, {matched} match "
        f"transformers, {differs} are graphs that themselves differ from "
        "transformers (attnc agrees with onnxruntime or ONNX's reference "
        f"evaluator on them), {fused} run fused attention; {decoding} of the "
        f"{decoders} decoders that compile decode with a cache.",
        "",
        "| architecture | exporter | opset | attention | compiles | matches"
        " | fused attention | decodes with a cache | notes |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for (fam, exporter, opset, attn, compiles, matches, fused, decodes,
         note) in rows:
        note = note.replace("|", "\\|").replace("\n", " ")
        lines.append(f"| {fam} | {exporter} | {opset or '-'} | {attn} | "
                     f"{mark(compiles)} | {mark(matches)} | {mark(fused)} | "
                     f"{mark(decodes) if decodes != 'n/a' else 'n/a'} | "
                     f"{note} |")
    past = [r for r in data["results"] if r.get("past")]
    if past:
        lines += [
            "",
            "## Exports with past key/values",
            "",
            "Each decoder (sdpa attention; BLOOM's eager, its only one) "
            "exported with its past",
            "keys and values as inputs and presents as outputs, compiled as a",
            "KV-cache step bound from its past inputs (`--input-shape",
            "input_ids=2x? --kv-cache 40`) and generating as above: "
            f"{sum(1 for r in past if r.get('decodes'))} of {len(past)} "
            "decode with transformers' greedy tokens.",
            "",
            "| architecture | exporter | opset | decodes with a cache | notes |",
            "|---|---|---|---|---|",
        ]
        for r in past:
            note = ("" if r.get("decodes") else
                    r.get("error", "").replace("|", "\\|")[:160])
            lines.append(f"| {r['family']} | "
                         f"{EXPORTERS.get(r['exporter'], r['exporter'])} | "
                         f"{r.get('opset') or '-'} | {mark(r.get('decodes'))} "
                         f"| {note} |")
    lines.append("")
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    with open(args.output, "w") as f:
        f.write("\n".join(lines))
    print(f"wrote {args.output}: {len(rows)} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
