#!/usr/bin/python3
"""LayerDrop benchmark: latency and weight bytes read of the 12-layer
BERT-base example against its 6-layer every-other and top-k versions,
compiled by attnc for this CPU and timed in one run.

    bench/layerdrop.py [--runs N] [--workdir DIR] [--seq S]

Prints a table; ratios are against the 12-layer model measured in the same
run. Expect about 0.5x for 6 of 12 layers (the embedding-free example is all
layers, so latency should scale with depth).
"""

import argparse
import os
import re
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, os.path.join(ROOT, "test", "reference"))
import make_weights as mw  # noqa: E402
import tensorio  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--workdir", default=os.path.join(ROOT, "build", "bench-layerdrop"))
    p.add_argument("--attn-compile", default=os.path.join(ROOT, "build", "bin", "attn-compile"))
    args = p.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    model = os.path.join(ROOT, "examples", "bert_base.mlir")
    weights = os.path.join(args.workdir, "bert.safetensors")
    if not os.path.exists(weights):
        W, _ = mw.make_weights("bert", 0)
        tensorio.write_safetensors(weights, W)
    x = os.path.join(args.workdir, "x.npy")
    np.save(x, mw.make_inputs("bert", dict(mw.DEFAULTS["bert"]), 0)["x"])

    variants = [
        ("12 layers", ""),
        ("every-other (rate 0.5)", "strategy=every-other rate=0.5"),
        ("top-k (keep 6)", "strategy=top-k keep=6 scores-file=" +
         os.path.join(HERE, "bert_scores.json")),
    ]
    rows = []
    for name, drop in variants:
        exe = os.path.join(args.workdir, re.sub(r"\W+", "_", name))
        cmd = [args.attn_compile, model, "-q", "-o", exe]
        if drop:
            cmd.append("--layer-drop=" + drop)
        print(f"compiling {name} ...", file=sys.stderr, flush=True)
        subprocess.run(cmd, check=True, stderr=subprocess.DEVNULL)
        out = subprocess.run([exe, "--weights", weights, "--input", x, "--bench", str(args.runs),
                              "--warmup", "1"], check=True, capture_output=True, text=True).stdout
        if "latency:" not in out:
            sys.exit(f"no latency line from {exe}:\n{out}")
        mean = float(re.search(r"latency: mean ([0-9.e+-]+) ms", out).group(1))
        median = float(re.search(r"median ([0-9.e+-]+) ms", out).group(1))
        m = re.search(r"weights: read (\d+) bytes of (\d+)-byte file", out)
        rows.append((name, mean, median, int(m.group(1)), int(m.group(2))))
    base = rows[0][2]
    print(f"{'model':<26} {'median ms':>10} {'mean ms':>10} {'vs 12':>7} {'weight MB read':>15}")
    for name, mean, median, read, total in rows:
        print(f"{name:<26} {median:10.1f} {mean:10.1f} {median / base:7.2f} "
              f"{read / 1e6:8.1f} of {total / 1e6:.1f}")


if __name__ == "__main__":
    main()
