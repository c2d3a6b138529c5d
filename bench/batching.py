#!/usr/bin/env python3
"""Continuous batching throughput: many generation requests through one
KV-cache step compiled for B rows (slots), at B = 1, 4 and 16.

    bench/batching.py [--requests 32] [--slots 1,4,16] [--layers 12]
                      [--threads 2] [--workdir DIR]

Needs numpy, and torch with transformers to write the checkpoint once
(the .venv-bench of `scripts/setup.sh --bench`, or any Python with them);
the runs themselves use only the attnc Python package.

The model is Hugging Face's GPT2LMHeadModel at GPT-2-small size (12
layers, hidden 768, vocab 50257, f32, seeded random parameters), compiled
with `--input-shape 'input_ids=Bx?' --kv-cache 160` for each B. The
workload is --requests prompts (seeded: 8 to 64 tokens each, 8 to 64 new
tokens each, greedy). Two schedules run it on the same compiled model:

  continuous  Model.generate_many: a request takes a slot as soon as one is
              free and starts at its own position while the others go on
              (its prompt fed whole in the same run as their next tokens);
  static      Model.generate on groups of B requests in arrival order:
              a group's prompts are padded to its longest and it runs until
              its longest budget, so a short request's slot idles.

Every request's tokens are the same under both schedules (checked; greedy
results do not depend on what shares a run). The table gives total new
tokens / wall time per schedule, and the model runs each took.
OMP_NUM_THREADS is --threads.
"""

import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def static_schedule(model, prompts, budgets, slots):
    """Groups of `slots` requests, each group padded to its longest prompt
    and run to its longest budget; returns (tokens per request, runs)."""
    outs, runs = [], 0
    for first in range(0, len(prompts), slots):
        group = prompts[first:first + slots]
        need = max(budgets[first:first + slots])
        width = max(p.size for p in group)
        ids = np.zeros((len(group), width), np.int64)
        for r, p in enumerate(group):
            ids[r, :p.size] = p
        lengths = np.array([p.size for p in group], np.int64)
        got = model.generate(ids, need, lengths=lengths)
        runs += need
        outs += [got[r, :budgets[first + r]] for r in range(len(group))]
    return outs, runs


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=32)
    ap.add_argument("--slots", default="1,4,16")
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--workdir",
                    default=os.path.join(ROOT, "build", "bench-batching"))
    args = ap.parse_args()
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    sys.path.insert(0, os.path.join(ROOT, "python"))
    os.environ.setdefault("ATTNC_BIN_DIR", os.path.join(ROOT, "build", "bin"))
    import attnc

    ckpt = os.path.join(args.workdir, "gpt2-small-%d" % args.layers)
    if not os.path.exists(os.path.join(ckpt, "model.safetensors")):
        sys.path.insert(0, HERE)
        from decode import make_checkpoint  # the decode benchmark's model
        make_checkpoint(ckpt, args.layers)
    rng = np.random.default_rng(0)
    prompts = [rng.integers(0, 50257, int(rng.integers(8, 65)))
               for _ in range(args.requests)]
    budgets = [int(rng.integers(8, 65)) for _ in range(args.requests)]
    total = sum(budgets)
    print("%d requests, %d new tokens in all; load average %.2f"
          % (args.requests, total, os.getloadavg()[0]))
    rows = []
    for slots in [int(s) for s in args.slots.split(",")]:
        lib = attnc.compile(ckpt, os.path.join(args.workdir,
                                               "libgpt2_%d.so" % slots),
                            input_shape={"input_ids": (slots, None)},
                            kv_cache=160)
        with attnc.load(lib, weights=os.path.join(
                ckpt, "model.safetensors")) as model:
            model.generate_many(prompts[:1], 2)  # warm-up
            began = time.perf_counter()
            cont = model.generate_many(prompts, budgets)
            cont_s = time.perf_counter() - began
            cont_runs = model.last_generate_many_stats[0]
            began = time.perf_counter()
            stat, stat_runs = static_schedule(model, prompts, budgets, slots)
            stat_s = time.perf_counter() - began
            same = all(np.array_equal(a, b) for a, b in zip(cont, stat))
            if not same:
                print("slots %d: the schedules' tokens differ" % slots)
                return 1
            rows.append((slots, total / cont_s, cont_runs, total / stat_s,
                         stat_runs))
            print("slots %d: continuous %.1f tokens/s (%d runs), static "
                  "%.1f tokens/s (%d runs)" % rows[-1], flush=True)
    print("\n| slots | continuous tokens/s | runs | static tokens/s | runs "
          "| continuous / static |")
    print("|---|---|---|---|---|---|")
    for slots, ct, cr, st, sr in rows:
        print("| %d | %.1f | %d | %.1f | %d | %.2f |"
              % (slots, ct, cr, st, sr, ct / st))
    print("load average at the end %.2f" % os.getloadavg()[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
