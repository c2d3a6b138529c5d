#!/usr/bin/env python3
"""Continuous batching throughput: many generation requests through one
KV-cache step compiled for B rows (slots), at B = 1, 4 and 16.

    bench/batching.py [--requests 32] [--slots 1,4,16] [--chunks 0,1]
                      [--no-unpadded] [--pad-budgets 32,64]
                      [--reuse-libs] [--rounds 2]
                      [--prompts 8:64] [--budgets 8:64] [--layers 12]
                      [--run-costs 1,2,4,8,16]
                      [--threads 2] [--workdir DIR]

Needs numpy, and torch with transformers to write the checkpoint once
(the .venv-bench of `scripts/setup.sh --bench`, or any Python with them);
the runs themselves use only the attnc Python package.

The model is Hugging Face's GPT2LMHeadModel at GPT-2-small size (12
layers, hidden 768, vocab 50257, f32, seeded random parameters), compiled
with `--input-shape 'input_ids=Bx?' --kv-cache 160` for each B. The
workload is --requests prompts (seeded: --prompts LO:HI tokens each,
--budgets LO:HI new tokens each, uniform, greedy). Two schedules run it on the same compiled model:

  continuous  Model.generate_many: a request takes a slot as soon as one is
              free and starts at its own position while the others go on,
              its prompt fed in the same runs as their next tokens: whole
              (chunk 0; the running rows are padded to its length) or
              --chunks C tokens per run;
  unpadded    Model.generate_many(prefill=...): each prompt fed alone by a
              one-row build (input_ids=1x?, --logits=last: the LM head over
              its last token only) over its slot's cache rows, the running
              slots a token per run of the B-row step;
  pad budget  the unpadded schedule with the cost rule for short prompts
              (generate_many(prefill=..., pad_budget=K) for each of
              --pad-budgets K): a prompt of n tokens with B x n <= K is
              padded into the B-row run beside the running slots' tokens
              instead of running alone;
  static      Model.generate on groups of B requests in arrival order:
              a group's prompts are padded to its longest and it runs until
              its longest budget, so a short request's slot idles.

Every request's tokens are the same under both schedules (checked; greedy
results do not depend on what shares a run). The table gives total new
tokens / wall time per schedule (the best of --rounds rounds, each running
every schedule once in a rotated order), and the model runs each took.
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


def run_costs(model, one, slots, lengths, reps):
    """The pad budget's trade, measured: a prompt of n tokens padded into
    the B-row run makes it a run at T = n instead of T = 1; alone it is a
    run of the one-row step at n. Each is the median of `reps` runs,
    interleaved (the machine may be shared)."""
    rng = np.random.default_rng(1)

    def timed(m, rows, tokens):
        ids = rng.integers(0, 50257, (rows, tokens))
        m.run(input_ids=ids, positions=np.zeros(rows, np.int64))
        return m.last_run_ms
    times = {}
    for _ in range(reps):
        for n in lengths:
            for key, m, rows, tokens in (("T=1", model, slots, 1),
                                         ("T=n", model, slots, n),
                                         ("one", one, 1, n)):
                times.setdefault((key, n), []).append(timed(m, rows,
                                                            tokens))
    med = {k: float(np.median(v)) for k, v in times.items()}
    base = float(np.median([med[("T=1", n)] for n in lengths]))
    print("slots %d: a run at T = 1 %.1f ms; load average %.2f"
          % (slots, base, os.getloadavg()[0]))
    print("| n | slots x n | B-row run at T = n, ms | padding's extra, ms | "
          "one-row run of n, ms | cheaper |")
    print("|---|---|---|---|---|---|")
    for n in lengths:
        extra = med[("T=n", n)] - base
        print("| %d | %d | %.1f | %.1f | %.1f | %s |" % (
            n, slots * n, med[("T=n", n)], extra, med[("one", n)],
            "padded" if extra < med[("one", n)] else "alone"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=32)
    ap.add_argument("--slots", default="1,4,16")
    ap.add_argument("--chunks", default="0,1",
                    help="prompt tokens per run of the continuous schedule "
                         "(0: whole)")
    ap.add_argument("--no-unpadded", dest="unpadded", action="store_false",
                    help="skip the schedule with a one-row prefill step")
    ap.add_argument("--pad-budgets", default="32,64",
                    help="pad budgets of the unpadded schedule's cost rule "
                         "for short prompts ('' for none)")
    ap.add_argument("--run-costs", default="",
                    help="prompt lengths (e.g. 1,2,4,8,16) at which to time "
                         "single runs instead of the schedules: the B-row "
                         "step at T = 1 and T = n, the one-row step at n")
    ap.add_argument("--rounds", type=int, default=2,
                    help="runs of every schedule, alternating; the best "
                         "counts")
    ap.add_argument("--reuse-libs", action="store_true",
                    help="load the libraries an earlier run compiled in "
                         "--workdir instead of compiling them again")
    ap.add_argument("--prompts", default="8:64",
                    help="prompt lengths LO:HI (uniform)")
    ap.add_argument("--budgets", default="8:64",
                    help="new tokens per request LO:HI (uniform)")
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
    span = lambda text: [int(v) for v in text.split(":")]
    (plo, phi), (blo, bhi) = span(args.prompts), span(args.budgets)
    prompts = [rng.integers(0, 50257, int(rng.integers(plo, phi + 1)))
               for _ in range(args.requests)]
    budgets = [int(rng.integers(blo, bhi + 1)) for _ in range(args.requests)]
    total = sum(budgets)
    print("%d requests (prompts %s tokens, budgets %s), %d new tokens in "
          "all; load average %.2f" % (args.requests, args.prompts,
                                      args.budgets, total,
                                      os.getloadavg()[0]))
    def build(name, **options):
        lib = os.path.join(args.workdir, name)
        if args.reuse_libs and os.path.exists(lib):
            return lib
        return attnc.compile(ckpt, lib, **options)

    rows = []
    chunks = [int(c) for c in args.chunks.split(",")]
    one = None
    if args.unpadded:
        one = attnc.load(build(
            "libgpt2_1_last.so", input_shape={"input_ids": (1, None)}, kv_cache=160,
            logits="last"), weights=os.path.join(ckpt, "model.safetensors"))
    # The continuous schedules: (label, prompt_chunk, prefill model, pad
    # budget).
    schedules = [("whole prompts" if c == 0 else "%d per run" % c, c, None,
                  0) for c in chunks]
    if one is not None:
        schedules.append(("unpadded", 0, one, 0))
        schedules += [("pad budget %d" % int(k), 0, one, int(k))
                      for k in args.pad_budgets.split(",") if k]
    for slots in [int(s) for s in args.slots.split(",")]:
        lib = build("libgpt2_%d.so" % slots,
                    input_shape={"input_ids": (slots, None)}, kv_cache=160)
        with attnc.load(lib, weights=os.path.join(
                ckpt, "model.safetensors")) as model:
            if args.run_costs:
                run_costs(model, one, slots,
                          [int(n) for n in args.run_costs.split(",")],
                          args.rounds)
                continue
            model.generate_many(prompts[:1], 2)  # warm-up
            # Each round runs every schedule once, in a rotated order; the
            # best round of each counts (the machine may be shared).
            best = [0.0] * (1 + len(schedules))
            runs = [0] * (1 + len(schedules))
            order = list(range(1 + len(schedules)))
            for rnd in range(args.rounds):
                for k in order[rnd % len(order):] + order[:rnd % len(order)]:
                    began = time.perf_counter()
                    if k == 0:  # first in the first round: the reference
                        stat, runs[0] = static_schedule(model, prompts,
                                                        budgets, slots)
                    else:
                        _, chunk, prefill, pad = schedules[k - 1]
                        cont = model.generate_many(prompts, budgets,
                                                   prompt_chunk=chunk,
                                                   prefill=prefill,
                                                   pad_budget=pad)
                        runs[k] = model.last_generate_many_stats[0]
                        if not all(np.array_equal(a, b)
                                   for a, b in zip(cont, stat)):
                            print("slots %d, %s: the schedules' tokens "
                                  "differ" % (slots, schedules[k - 1][0]))
                            return 1
                    best[k] = max(best[k],
                                  total / (time.perf_counter() - began))
            row = [slots, best[0], runs[0]]
            for k in range(1, 1 + len(schedules)):
                row += [best[k], runs[k]]
            rows.append(row)
            print("slots %d: static %.1f tokens/s (%d runs)" % tuple(row[:3])
                  + "".join(", continuous %s %.1f tokens/s (%d runs)"
                            % (label, row[3 + 2 * i], row[4 + 2 * i])
                            for i, (label, _, _, _) in enumerate(schedules))
                  + "; load average %.2f" % os.getloadavg()[0], flush=True)
    print("\n| slots | static tokens/s (runs) | "
          + " | ".join("continuous, %s (runs) | / static" % label
                       for label, _, _, _ in schedules) + " |")
    print("|---" * (2 + 2 * len(schedules)) + "|")
    for row in rows:
        cells = ["%d" % row[0], "%.1f (%d)" % (row[1], row[2])]
        for i in range(len(schedules)):
            tps, runs = row[3 + 2 * i], row[4 + 2 * i]
            cells += ["%.1f (%d)" % (tps, runs), "%.2f" % (tps / row[1])]
        print("| " + " | ".join(cells) + " |")
    print("load average at the end %.2f" % os.getloadavg()[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
