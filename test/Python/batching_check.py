#!/usr/bin/python3
"""Continuous batching (Model.generate_many over the runtime's session
slots) on the tiny GPT-2 checkpoint compiled as a KV-cache step with 3
slots: 12 prompts of different lengths and budgets share the slots, each
prompt starting when one frees. Checked against independent paths:

- the two prompts of transformers' generation fixture give transformers'
  greedy tokens (scripts/gen_hf_generation.py);
- every generated token is the argmax of the full-sequence build's logits
  (no cache, its own compile) over the prompt and the tokens before it;
- each prompt's tokens equal its generation alone (Model.generate).

    batching_check.py --src ATTNC_SRC --bin BUILD_BIN --workdir DIR
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "reference"))
import checkutil  # noqa: E402
from api_check import expect_error  # noqa: E402


def main():
    args, attnc = checkutil.attnc_check()
    hf = os.path.join(args.src, "test", "Frontend", "HF", "Inputs", "gpt2")
    weights = os.path.join(hf, "model.safetensors")
    fixture = np.load(os.path.join(hf, "generate_prompt.npy"))
    fixture_lengths = np.load(os.path.join(hf, "generate_lengths.npy"))
    fixture_want = np.load(os.path.join(hf, "generate_expected.npy"))

    rng = np.random.default_rng(7)
    prompts = [fixture[r, :fixture_lengths[r]] for r in range(2)]
    budgets = [fixture_want.shape[1]] * 2
    for _ in range(10):
        prompts.append(rng.integers(0, 99, int(rng.integers(1, 14))))
        budgets.append(int(rng.integers(2, 20)))

    full_lib = attnc.compile(hf, os.path.join(args.workdir, "libfull.so"),
                             input_shape={"input_ids": (1, 40)})
    full = attnc.load(full_lib, weights=weights)

    def check_against_full(name, outs):
        for i, (p, out) in enumerate(zip(prompts, outs)):
            seq = np.concatenate([p, out])
            ids = np.zeros((1, 40), np.int64)
            ids[0, :seq.size] = seq
            logits = list(full.run(input_ids=ids).values())[0][0]
            want = logits[p.size - 1:seq.size - 1].argmax(axis=-1)
            assert np.array_equal(want, out), (name, i, want, out)

    results = {}
    for name, shape in (("dynamic", (3, None)), ("one-token", (3, 1))):
        lib = attnc.compile(hf, os.path.join(args.workdir,
                                             "lib%s.so" % name),
                            input_shape={"input_ids": shape}, kv_cache=40)
        with attnc.load(lib, weights=weights) as model:
            outs = model.generate_many(prompts, budgets)
            for r in range(2):
                assert np.array_equal(outs[r], fixture_want[r]), (r, outs[r])
            assert [o.size for o in outs] == budgets
            check_against_full(name, outs)
            for i, (p, n) in enumerate(zip(prompts, budgets)):
                alone = model.generate(p, n)[0]
                assert np.array_equal(alone, outs[i]), (i, alone, outs[i])
            results[name] = outs
            runs, produced, _ = model.last_generate_many_stats
            assert produced == sum(budgets), model.last_generate_many_stats
            # Prompts fed a few tokens per run: the same tokens.
            for chunk in (1, 3):
                assert all(np.array_equal(a, b) for a, b in zip(
                    model.generate_many(prompts, budgets, prompt_chunk=chunk),
                    outs)), chunk
            print("%s: 12 prompts in 3 slots, %d runs: transformers' tokens, "
                  "the full-sequence argmax, each alone, prompts in pieces"
                  % (name, runs))
            # eos: a prompt stops at its first eos, its slot goes to the next.
            eos = int(outs[2][1])
            stopped = model.generate_many(prompts, budgets, eos=eos)
            for i, out in enumerate(outs):
                hits = np.flatnonzero(out == eos)
                want = out[:hits[0] + 1] if hits.size else out
                assert np.array_equal(stopped[i], want), (i, stopped[i], want)
            print("%s: eos ends a prompt early" % name)
            sampled = [model.generate_many(prompts[:5], 6, temperature=1.0,
                                           seed=s) for s in (1, 1, 2)]
            assert all(np.array_equal(a, b)
                       for a, b in zip(sampled[0], sampled[1]))
            assert any(not np.array_equal(a, b)
                       for a, b in zip(sampled[0], sampled[2]))
            print("%s: sampling reproducible by seed" % name)
            expect_error(lambda: model.generate_many([np.arange(30)], 20),
                         "prompt 0: 30 tokens plus 20 new tokens exceed")
            expect_error(lambda: model.generate_many([[]], 2),
                         "prompt 0 must be a non-empty")
    outs = results["dynamic"]

    # --logits=last: the LM head over each row's last token. A one-row
    # step's logits for a whole prompt are transformers' last column.
    one_lib = attnc.compile(hf, os.path.join(args.workdir, "libone.so"),
                            input_shape={"input_ids": (1, None)},
                            kv_cache=40, logits="last")
    one = attnc.load(one_lib, weights=weights)
    ids = np.load(os.path.join(hf, "input_ids.npy"))
    want = np.load(os.path.join(hf, "expected.npy"))
    got = list(one.run(input_ids=ids,
                       positions=np.zeros(1, np.int64)).values())[0]
    assert got.shape == (1, 1, want.shape[2]), got.shape
    err = float(np.abs(got[0, 0] - want[0, -1]).max())
    assert err < 1e-4, err
    print("last-token logits: [1, 1, %d], transformers' last column within "
          "%.1e" % (want.shape[2], err))

    # A prompt fed alone through the one-row step over its slot's cache
    # rows, the running slots a token per run of the 3-row step.
    with attnc.load(os.path.join(args.workdir, "libdynamic.so"),
                    weights=weights) as model:
        for chunk in (0, 1, 5):
            got = model.generate_many(prompts, budgets, prompt_chunk=chunk,
                                      prefill=one)
            assert all(np.array_equal(a, b) for a, b in zip(got, outs)), chunk
        check_against_full("prefill", got)
        runs = model.last_generate_many_stats[0]
        print("unpadded prompts: 12 prompts in 3 slots, %d runs: the same "
              "tokens, the full-sequence argmax, prompts in pieces" % runs)
        # The pad budget's rule: prompts of at most 5 tokens (3 slots x 5
        # <= 15) fed in the 3-row run beside the running slots, the longer
        # ones alone; all of them padded (1000); in pieces of 4.
        for budget, chunk in ((15, 0), (1000, 0), (15, 4)):
            got = model.generate_many(prompts, budgets, prompt_chunk=chunk,
                                      prefill=one, pad_budget=budget)
            assert all(np.array_equal(a, b)
                       for a, b in zip(got, outs)), (budget, chunk)
            padded_runs = model.last_generate_many_stats[0]
            assert padded_runs < runs, (budget, padded_runs, runs)
        check_against_full("pad budget", got)
        print("pad budget: short prompts padded into the 3-row run, long ones "
              "alone: the same tokens, fewer runs")
        expect_error(lambda: model.generate_many(prompts, budgets,
                                                 prefill=one, pad_budget=-1),
                     "slot pad budget: must be >= 0")
        expect_error(lambda: model.generate_many(prompts, budgets,
                                                 prefill=model),
                     "slot prefill: the one-row step does not fit the "
                     "session's: it must be a KV-cache step for one row")
    # A 3-row step with last-token logits: prefill and slots feed each
    # row's prompt in runs that end at it.
    last_lib = attnc.compile(hf, os.path.join(args.workdir, "liblast.so"),
                             input_shape={"input_ids": (3, None)},
                             kv_cache=40, logits="last")
    with attnc.load(last_lib, weights=weights) as model:
        for chunk in (0, 3):
            got = model.generate_many(prompts, budgets, prompt_chunk=chunk)
            assert all(np.array_equal(a, b) for a, b in zip(got, outs)), chunk
        check_against_full("logits=last", got)
        group = prompts[2:5]
        padded = np.zeros((3, max(p.size for p in group)), np.int64)
        for r, p in enumerate(group):
            padded[r, :p.size] = p
        n = min(budgets[2:5])
        got = model.generate(padded, n, lengths=np.array(
            [p.size for p in group], np.int64))
        for r in range(3):
            assert np.array_equal(got[r], outs[2 + r][:n]), (r, got[r])
        print("logits=last step: generate_many and generate give the same "
              "tokens")
    one.close()
    with full:
        expect_error(lambda: full.generate_many([[1, 2]], 2),
                     "slots need a KV-cache step")
    print("PASS")


if __name__ == "__main__":
    main()
