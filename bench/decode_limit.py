#!/usr/bin/env python3
"""Decoding against the memory-bandwidth limit, with the peers in one run.

    bench/decode_limit.py [--models gpt2,llama1b] [--threads 1,2]
                          [--prompt 32] [--new 48] [--rounds 3]
                          [--precisions f32,bf16,int8,int4,int8a,int4a,int4b]
                          [--quantize-group 128] [--no-ort] [--workdir DIR]
                          [--attn-compile PATH]

Run it with a Python that has torch 2.x, transformers 5.x, onnx and
onnxruntime from the Python package index: .venv-peers of
`scripts/setup.sh --peers`.

Decoding one token reads every weight a step multiplies by once, and the
KV caches up to the current position: it is bound by memory bandwidth,
not by arithmetic. This script measures that bound and puts each decoder's
tokens/s against it:

  bandwidth  bench/triad.c with N OpenMP threads (arrays of 512 MiB, best
             of 7, compiled here with the system C compiler, -O3
             -march=native -fopenmp): STREAM's triad, and a read-only sum,
             the bound of a step that reads weights and writes almost
             nothing. One sample per round, beside the sides; the limit
             uses the median read bandwidth
  bytes per  the bytes a decode step must read: every weight of the
  token      checkpoint at the precision's width (4 bytes for f32, 2 for
             bf16), except tables that are only gathered a row per token
             (position tables; the token embedding where a separate LM
             head exists: GPT-2 ties its embedding to the LM head, so it
             counts in full). For int8 and int4 (attn-compile
             --quantize=int8-weights / int4-weights --quantize-group=G;
             int8a / int4a add --int8-activations, int4b
             --bf16-activations)
             the bytes of the weights file attn-compile wrote (packed
             weights, their scales, the f32 norms and biases), except the
             tables gathered a row per token (there GPT-2's f32 token
             table is only gathered: its LM head reads the quantized
             copy). Plus the KV caches (f32) at the mean decode
             position (prompt + new / 2) at the cache's width as
             `--describe` reports attnc's step state
  limit      read bandwidth / bytes per token, in tokens/s
  best read  the highest read rate seen in the run at N threads: the
             triad's read samples, or a side's bytes per token times its
             tokens/s where that is higher (the host's bandwidth moves by
             a third within minutes, so a side can read faster than the
             median sample: "% of limit" above 100% is such a moment).
             "% of best" puts each side against it, a strict bound

Models (seeded random parameters, save_pretrained, f32):

  gpt2       GPT2LMHeadModel at GPT-2-small shape (12 layers, hidden 768,
             vocab 50257, tied LM head)
  llama1b    LlamaForCausalLM at TinyLlama-1.1B shape (22 layers, hidden
             2048, FFN 5632, 32 heads, 4 KV heads, vocab 32000)

Sides, batch 1, greedy, the same random prompt, in alternation for
--rounds rounds (medians):

  attnc      attn-compile DIR --input-shape input_ids=1x? --kv-cache P+N
             [--precision=bf16]; the executable's `generate` (prefill in
             one run, then one run per token), OMP_NUM_THREADS=N
  torch      transformers' `generate` (greedy, use_cache) on torch 2.x,
             in f32 and with the model cast to bf16;
             torch.set_num_threads(N). Decode tokens/s is (new - 1) / (the
             time of generate(new) - the time of generate(1)): the prefill
             and the first token are subtracted
  ort        the checkpoint exported with past key/values (TorchScript
             exporter, opset 17, as scripts/gen_onnx_exports.py writes the
             past exports), onnxruntime's CPU execution provider,
             intra_op_num_threads=N: one run over the prompt, then one run
             per token feeding the presents back (f32 only)

Every side's greedy tokens are compared with torch f32's (random weights
decide by margins far above f32 rounding; a bf16 side may differ, so it is
a count; so may int8 and int4, attnc only: torch and onnxruntime run no
weight-only int8 / int4 here).
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SEED = 0
WIDTH = {"f32": 4, "bf16": 2}
STATE_WIDTH = {"f32": 4, "bf16": 2, "f16": 2}
QUANTIZED = ("int8", "int4", "int8a", "int4a", "int4b")
# attn-compile flags of the quantized precisions; "int8a" / "int4a" are
# int8 / int4 weights with the activations quantized to int8 at run time,
# "int4b" int4 weights multiplied with bf16-rounded activations.
QUANTIZE_FLAGS = {"int8": ["--quantize=int8-weights"],
                  "int4": ["--quantize=int4-weights"],
                  "int8a": ["--quantize=int8-weights", "--int8-activations"],
                  "int4a": ["--quantize=int4-weights", "--int8-activations"],
                  "int4b": ["--quantize=int4-weights", "--bf16-activations"]}


def make_config(name):
    import transformers as T
    if name == "gpt2":
        return T.GPT2Config(n_layer=12, resid_pdrop=0.0, embd_pdrop=0.0,
                            attn_pdrop=0.0), T.GPT2LMHeadModel
    if name == "llama1b":
        return T.LlamaConfig(vocab_size=32000, hidden_size=2048,
                             intermediate_size=5632, num_hidden_layers=22,
                             num_attention_heads=32, num_key_value_heads=4,
                             max_position_embeddings=2048, rms_norm_eps=1e-5,
                             tie_word_embeddings=False), T.LlamaForCausalLM
    raise SystemExit(f"decode_limit: unknown model {name!r}")


def make_checkpoint(name, directory):
    import torch
    cfg, cls = make_config(name)
    torch.manual_seed(SEED)
    cls(cfg).eval().save_pretrained(directory)


def weight_elements(directory):
    """Elements a decode step reads in full, and those only gathered, from
    the safetensors header."""
    with open(os.path.join(directory, "model.safetensors"), "rb") as f:
        size = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(size))
    header.pop("__metadata__", None)
    has_head = any(n.endswith("lm_head.weight") for n in header)
    full = gathered = 0
    for name, info in header.items():
        count = 1
        for d in info["shape"]:
            count *= d
        if name.endswith("wpe.weight") or (
                has_head and name.endswith("embed_tokens.weight")):
            gathered += count
        else:
            full += count
    return full, gathered


def quantized_weight_bytes(path):
    """Bytes a decode step reads from the weights file attn-compile wrote
    for --quantize=int8-weights / int4-weights: every tensor but those only
    gathered a row per token (position tables; token tables whose LM head
    is a separate tensor or their quantized copy)."""
    with open(path, "rb") as f:
        size = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(size))
    header.pop("__metadata__", None)
    names = set(header)
    total = 0
    for name, info in header.items():
        a, b = info["data_offsets"]
        gathered = name.endswith("wpe.weight") or (
            name.endswith(("wte.weight", "embed_tokens.weight")) and
            (any(n.endswith("lm_head.weight") or n.startswith("lm_head.")
                 for n in names) or
             any(n.startswith(name + ".q") for n in names)))
        if not gathered:
            total += b - a
    return total


def state_bytes_per_position(binary):
    """Bytes of KV cache per cache position, from the step's --describe."""
    out = subprocess.run([binary, "--describe"], capture_output=True,
                         text=True, check=True).stdout
    total = 0
    for m in re.finditer(r"state\s+\d+ '[^']*' (\w+) \(([^)]*)\)", out):
        dims = [int(d) for d in m.group(2).split(",") if d.strip()]
        # [batch, heads, capacity, head width]: all but the capacity.
        per = STATE_WIDTH[m.group(1)]
        for i, d in enumerate(dims):
            if i != 2:
                per *= d
        total += per
    if not total:
        raise SystemExit(f"decode_limit: {binary} has no KV-cache state")
    return total


def triad(work, threads):
    exe = os.path.join(work, "triad")
    if not os.path.exists(exe):
        subprocess.run(["cc", "-O3", "-march=native", "-fopenmp",
                        os.path.join(HERE, "triad.c"), "-o", exe], check=True)
    out = subprocess.run([exe], capture_output=True, text=True, check=True,
                         env=dict(os.environ, OMP_NUM_THREADS=str(threads)))
    m = re.search(r"triad ([0-9.]+) GB/s, read ([0-9.]+) GB/s", out.stdout)
    return float(m.group(1)), float(m.group(2))


def torch_worker(directory, prompt_path, new, threads, dtype):
    """Prints one JSON line: tokens, prefill ms, decode tokens/s."""
    import numpy as np
    import torch
    import transformers
    torch.set_num_threads(threads)
    model = transformers.AutoModelForCausalLM.from_pretrained(
        directory, dtype=getattr(torch, dtype)).eval()
    ids = torch.from_numpy(np.load(prompt_path))
    kw = dict(do_sample=False, use_cache=True, eos_token_id=None,
              pad_token_id=0)

    def generate(n):
        start = time.perf_counter()
        with torch.no_grad():
            out = model.generate(ids, max_new_tokens=n, min_new_tokens=n,
                                 **kw)
        return time.perf_counter() - start, out[0, ids.shape[1]:].tolist()

    generate(2)  # warm-up: first-call allocations
    first, _ = generate(1)
    whole, tokens = generate(new)
    print(json.dumps({
        "tokens": tokens, "prefill_ms": first * 1e3,
        "tokens_per_s": (new - 1) / (whole - first),
        "version": f"torch {torch.__version__}, transformers "
                   f"{transformers.__version__}"}))


def export_ort(directory, path):
    import torch
    import transformers
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    from gen_onnx_exports import save_past_export
    model = transformers.AutoModelForCausalLM.from_pretrained(
        directory, dtype=torch.float32, attn_implementation="sdpa").eval()
    save_past_export(model, "ts17", path)


def worker(argv, env):
    r = subprocess.run([sys.executable, os.path.abspath(__file__)] + argv,
                       capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip().splitlines()[-1]
                           if r.stderr.strip() else f"exit {r.returncode}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="gpt2,llama1b")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--prompt", type=int, default=32)
    ap.add_argument("--new", type=int, default=48)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--precisions", default="f32,bf16")
    ap.add_argument("--quantize-group", type=int, default=128,
                    help="--quantize-group of the int8 / int4 builds")
    ap.add_argument("--no-ort", action="store_true",
                    help="skip the onnxruntime side")
    ap.add_argument("--workdir")
    ap.add_argument("--attn-compile",
                    default=os.path.join(ROOT, "build", "bin", "attn-compile"))
    ap.add_argument("--torch-worker", nargs=5, help=argparse.SUPPRESS)
    ap.add_argument("--ort-worker", nargs=4, help=argparse.SUPPRESS)
    ap.add_argument("--export-worker", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.torch_worker:
        d, p, n, t, dt = args.torch_worker
        torch_worker(d, p, int(n), int(t), dt)
        return 0
    if args.ort_worker:
        sys.path.insert(0, HERE)
        from decode import ort_worker
        m, p, n, t = args.ort_worker
        ort_worker(m, p, int(n), int(t))
        return 0
    if args.export_worker:
        export_ort(*args.export_worker)
        print("{}")
        return 0

    import numpy as np
    sys.path.insert(0, HERE)
    from decode import run_attnc

    if args.new < 2:
        raise SystemExit("decode_limit: --new must be at least 2")
    work = args.workdir or tempfile.mkdtemp(prefix="attnc-decode-limit-")
    os.makedirs(work, exist_ok=True)
    thread_counts = [int(t) for t in args.threads.split(",")]
    precisions = args.precisions.split(",")
    for p in precisions:
        if p not in WIDTH and p not in QUANTIZED:
            raise SystemExit(f"decode_limit: unknown precision {p!r}")
    # Bandwidth samples are taken in every round, beside the sides: the
    # machine's bandwidth varies with its load as the sides' speed does.
    bandwidth = {t: [] for t in thread_counts}
    cpu = next((line.split(":", 1)[1].strip()
                for line in open("/proc/cpuinfo")
                if line.startswith("model name")), "unknown CPU")
    print(f"{cpu}; load average at start: {os.getloadavg()[0]:.2f}")
    capacity = args.prompt + args.new
    mean_position = args.prompt + args.new / 2
    rows = []
    for name in args.models.split(","):
        directory = os.path.join(work, name)
        if not os.path.exists(os.path.join(directory, "model.safetensors")):
            make_checkpoint(name, directory)
        full, gathered = weight_elements(directory)
        cfg = json.load(open(os.path.join(directory, "config.json")))
        vocab = cfg["vocab_size"]
        prompt_path = os.path.join(work, f"{name}-prompt.npy")
        np.save(prompt_path, np.random.default_rng(1).integers(
            0, vocab, size=(1, args.prompt), dtype=np.int64))
        weights = os.path.join(directory, "model.safetensors")

        binaries, compile_s, per_position = {}, {}, {}
        side_weights, weight_bytes = {}, {}
        for p in precisions:
            binary = os.path.join(work, f"{name}-{p}")
            start = time.perf_counter()
            mode = QUANTIZE_FLAGS[p] + [
                f"--quantize-group={args.quantize_group}"] \
                if p in QUANTIZED else [f"--precision={p}"]
            subprocess.run([args.attn_compile, "-q", directory,
                            "--input-shape", "input_ids=1x?", "--kv-cache",
                            str(capacity), "-o", binary] + mode, check=True)
            side_weights[p] = binary + ".safetensors" \
                if p in QUANTIZED else weights
            weight_bytes[p] = quantized_weight_bytes(side_weights[p]) \
                if p in QUANTIZED else full * WIDTH[p]
            compile_s[p] = time.perf_counter() - start
            binaries[p] = binary
            per_position[p] = state_bytes_per_position(binary)

        onnx_path = os.path.join(work, f"{name}-past.onnx")
        ort_error = None
        if not args.no_ort and "f32" in precisions and \
                not os.path.exists(onnx_path):
            try:
                worker(["--export-worker", directory, onnx_path], os.environ)
            except RuntimeError as e:
                ort_error = f"export failed: {e}"

        sides = [("attnc", p) for p in precisions] + \
            [("torch", p) for p in precisions if p in WIDTH]
        if not args.no_ort and "f32" in precisions and ort_error is None:
            sides.append(("ort", "f32"))
        for threads in thread_counts:
            env = dict(os.environ, OMP_NUM_THREADS=str(threads))
            samples = {s: [] for s in sides}
            errors = {}
            for r in range(args.rounds):
                bandwidth[threads].append(triad(work, threads))
                order = sides[r % len(sides):] + sides[:r % len(sides)]
                for side in order:
                    who, p = side
                    if side in errors:
                        continue
                    try:
                        if who == "attnc":
                            s = run_attnc(binaries[p], directory, prompt_path,
                                          args.new, threads,
                                          weights=side_weights[p])
                        elif who == "torch":
                            s = worker(["--torch-worker", directory,
                                        prompt_path, str(args.new),
                                        str(threads),
                                        "float32" if p == "f32"
                                        else "bfloat16"], env)
                        else:
                            s = worker(["--ort-worker", onnx_path,
                                        prompt_path, str(args.new),
                                        str(threads)], env)
                    except (RuntimeError, subprocess.CalledProcessError) as e:
                        errors[side] = str(e)
                        continue
                    samples[side].append(s)
            read = statistics.median(b[1] for b in bandwidth[threads])
            reference = samples.get(("torch", "f32")) or [None]
            ref_tokens = reference[0]["tokens"] if reference[0] else None
            for side in sides:
                who, p = side
                got = samples[side]
                if not got:
                    rows.append((name, p, who, threads, None, None, None,
                                 None, errors.get(side, "no sample")))
                    continue
                rate = statistics.median(s["tokens_per_s"] for s in got)
                prefill = statistics.median(s["prefill_ms"] for s in got)
                state_width = per_position[p] if p in per_position else \
                    per_position["f32"] * WIDTH[p] // 4
                per_token = (weight_bytes[p] if who == "attnc"
                             else full * WIDTH[p]) + \
                    state_width * mean_position
                limit = read * 1e9 / per_token
                equal = None
                if ref_tokens is not None:
                    equal = sum(a == b for a, b in
                                zip(got[0]["tokens"], ref_tokens))
                rows.append((name, p, who, threads, rate, prefill,
                             per_token, limit, equal))
        print(f"{name}: {full / 1e6:.1f}M weights read per token "
              f"({gathered / 1e6:.1f}M gathered by row only); attnc "
              "compile " + ", ".join(f"{p} {compile_s[p]:.1f} s"
                                     for p in precisions), flush=True)
        if ort_error:
            print(f"{name}: onnxruntime side skipped: {ort_error}")

    # The best read rate seen at each thread count: a sample of the triad,
    # or what a side itself read.
    best_read = {t: max([b[1] for b in bandwidth[t]] +
                        [r[4] * r[6] / 1e9 for r in rows
                         if r[3] == t and r[4] is not None])
                 for t in thread_counts if bandwidth[t]}
    print()
    print("model | precision | side | threads | decode tok/s | MB/token | "
          "limit tok/s | % of limit | % of best | attnc / this side | "
          "tokens equal to torch f32 | prefill ms")
    print("---|---|---|---|---|---|---|---|---|---|---|---")
    by_key = {(r[0], r[1], r[2], r[3]): r for r in rows}
    for (name, p, who, threads, rate, prefill, per_token, limit,
         equal) in rows:
        if rate is None:
            print(f"{name} | {p} | {who} | {threads} | failed: {equal} "
                  "| | | | | | |")
            continue
        mine = by_key.get((name, p, "attnc", threads))
        ratio = "-" if who == "attnc" or not mine or mine[4] is None \
            else f"{mine[4] / rate:.2f}"
        # No torch f32 side ran (--precisions without f32): nothing to
        # compare the tokens with.
        same = "-" if equal is None else f"{equal}/{args.new}"
        print(f"{name} | {p} | {who} | {threads} | {rate:.2f} | "
              f"{per_token / 1e6:.0f} | {limit:.2f} | "
              f"{100 * rate / limit:.0f}% | "
              f"{100 * rate * per_token / 1e9 / best_read[threads]:.0f}% | "
              f"{ratio} | "
              f"{same} | {prefill:.0f}")
    print("bandwidth (median of the rounds' samples): " + "; ".join(
        f"{t} thread(s) triad "
        f"{statistics.median(b[0] for b in bandwidth[t]):.1f} GB/s, read "
        f"{statistics.median(b[1] for b in bandwidth[t]):.1f} GB/s"
        for t in thread_counts if bandwidth[t]))
    print("best read seen: " + "; ".join(
        f"{t} thread(s) {best_read[t]:.1f} GB/s" for t in best_read))
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
