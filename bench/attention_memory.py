#!/usr/bin/python3
"""Flash attention against the unfused lowering: latency and peak memory of
one attn.sdpa (B=1, H=4, D=64, f32) compiled by attnc for this CPU, with
attn-flash-attention (the default) and with --no-flash.

    bench/attention_memory.py [--seqs 512 2048 8192] [--runs 3]
                              [--masks none causal] [--workdir DIR]

For each sequence length S (Sq = Sk = S) and mask, both variants are
compiled, run once with `--bench RUNS` (after one warm-up run) and measured
in a child process of their own: latency is the model's median, peak memory
the process's maximum resident set size (/usr/bin/time -v, or os.wait4). The unfused lowering
holds the whole B x H x S x S score matrix (1 GiB at S = 8192), flash
attention one 64 x 64 tile per query block. With a causal mask flash
attention also skips the key blocks above the diagonal, so its latency
drops to about half; the unfused lowering computes every score and then
masks it.

Prints a Markdown table; ratios are unfused / flash (above 1: flash wins).
--max-unfused-gib skips unfused runs whose score matrix alone would exceed
that size (noted in the table).
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
B, H, D = 1, 4, 64


def model_text(seq, mask):
    t = f"tensor<{B}x{H}x{seq}x{D}xf32>"
    attrs = " causal" if mask == "causal" else ""
    return (f"func.func @main(%q: {t}, %k: {t}, %v: {t}) -> {t} {{\n"
            f"  %0 = attn.sdpa %q, %k, %v{attrs} : {t}, {t}, {t} -> {t}\n"
            f"  return %0 : {t}\n}}\n")


TIME = "/usr/bin/time"


def run_measured(cmd):
    """Runs cmd; returns (stdout, peak RSS in bytes) of that process alone.

    The peak comes from /usr/bin/time -v, whose own footprint is a few MiB.
    Without it, from os.wait4 on the child; but a child forked from this
    Python process starts its life with Python's (and numpy's) pages, so
    that floor is some 30 MiB.
    """
    with tempfile.TemporaryFile(mode="w+") as err:
        timed = os.path.exists(TIME)
        full = [TIME, "-v"] + cmd if timed else cmd
        proc = subprocess.Popen(full, stdout=subprocess.PIPE, stderr=err, text=True)
        stdout = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
        code = os.waitstatus_to_exitcode(status)
        err.seek(0)
        log = err.read()
        if code:
            sys.exit(f"{' '.join(cmd)} failed ({code}):\n{log}")
    if timed:
        m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", log)
        return stdout, int(m.group(1)) * 1024
    return stdout, usage.ru_maxrss * 1024  # Linux reports KiB


def fmt_ms(ms):
    return f"{ms / 1000:.2f} s" if ms >= 1000 else f"{ms:.1f} ms"


def fmt_mib(b):
    return f"{b / 2**20:.0f} MiB" if b < 2**30 else f"{b / 2**30:.2f} GiB"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seqs", type=int, nargs="+", default=[512, 2048, 8192])
    p.add_argument("--masks", nargs="+", default=["none", "causal"], choices=["none", "causal"])
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--max-unfused-gib", type=float, default=8.0,
                   help="skip unfused runs whose scores alone need more than this")
    p.add_argument("--workdir", default=os.path.join(ROOT, "build", "bench-attention-memory"))
    p.add_argument("--attn-compile", default=os.path.join(ROOT, "build", "bin", "attn-compile"))
    args = p.parse_args()
    os.makedirs(args.workdir, exist_ok=True)

    rows = []
    for seq in args.seqs:
        inputs = []
        for i, name in enumerate("qkv"):
            path = os.path.join(args.workdir, f"{name}{seq}.npy")
            if not os.path.exists(path):
                x = np.random.default_rng(i).standard_normal((B, H, seq, D)).astype(np.float32)
                np.save(path, x)
            inputs += ["--input", path]
        scores_bytes = B * H * seq * seq * 4
        for mask in args.masks:
            src = os.path.join(args.workdir, f"sdpa_{seq}_{mask}.mlir")
            with open(src, "w") as f:
                f.write(model_text(seq, mask))
            result = {}
            for variant, flags in (("flash", []), ("unfused", ["--no-flash"])):
                if variant == "unfused" and scores_bytes > args.max_unfused_gib * 2**30:
                    result[variant] = None
                    continue
                exe = os.path.join(args.workdir, f"sdpa_{seq}_{mask}_{variant}")
                print(f"S={seq} mask={mask} {variant}: compiling ...", file=sys.stderr, flush=True)
                subprocess.run([args.attn_compile, src, "-q", "-o", exe] + flags, check=True)
                print(f"S={seq} mask={mask} {variant}: running ...", file=sys.stderr, flush=True)
                out_path = os.path.join(args.workdir, f"out_{seq}_{mask}_{variant}.npy")
                stdout, rss = run_measured([exe, "-q"] + inputs +
                                           ["--output", out_path, "--bench", str(args.runs)])
                m = re.search(r"median ([0-9.eE+]+) ms", stdout)
                if not m:
                    sys.exit(f"no latency line in:\n{stdout}")
                result[variant] = (float(m.group(1)), rss, out_path)
            flash, unfused = result["flash"], result.get("unfused")
            if unfused:
                diff = float(np.max(np.abs(np.load(flash[2]) - np.load(unfused[2]))))
            rows.append((seq, mask, scores_bytes, flash, unfused,
                         diff if unfused else None))

    print(f"attn.sdpa B={B} H={H} D={D} f32, Sq = Sk = S, this CPU ({os.cpu_count()} "
          f"cores), median of {args.runs} runs; peak RSS of the whole process "
          f"(inputs and output included)\n")
    print("| S | mask | scores (unfused) | flash latency | unfused latency | latency ratio "
          "| flash peak RSS | unfused peak RSS | memory ratio | max abs diff |")
    print("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for seq, mask, scores, flash, unfused, diff in rows:
        if unfused:
            print(f"| {seq} | {mask} | {fmt_mib(scores)} | {fmt_ms(flash[0])} | "
                  f"{fmt_ms(unfused[0])} | {unfused[0] / flash[0]:.2f}x | {fmt_mib(flash[1])} | "
                  f"{fmt_mib(unfused[1])} | {unfused[1] / flash[1]:.1f}x | {diff:.1e} |")
        else:
            print(f"| {seq} | {mask} | {fmt_mib(scores)} | {fmt_ms(flash[0])} | skipped "
                  f"(> {args.max_unfused_gib:g} GiB) | | {fmt_mib(flash[1])} | | | |")
    by_key = {(r[0], r[1]): r for r in rows}
    for seq in args.seqs:
        if (seq, "none") in by_key and (seq, "causal") in by_key:
            full = by_key[(seq, "none")][3][0]
            causal = by_key[(seq, "causal")][3][0]
            print(f"\nS={seq}: flash causal / flash full latency = {causal / full:.2f} "
                  f"(key blocks above the diagonal are never visited)", end="")
    print()


if __name__ == "__main__":
    main()
