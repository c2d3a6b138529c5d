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
    args = checkutil.attnc_parser().parse_args()
    attnc = checkutil.import_attnc(args.src, args.bin)
    os.makedirs(args.workdir, exist_ok=True)
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
            runs, produced, _ = model.last_generate_many_stats
            assert produced == sum(budgets), model.last_generate_many_stats
            print("%s: 12 prompts in 3 slots, %d runs: transformers' tokens, "
                  "the full-sequence argmax, each alone" % (name, runs))
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
    with full:
        expect_error(lambda: full.generate_many([[1, 2]], 2),
                     "slots need a KV-cache step")
    print("PASS")


if __name__ == "__main__":
    main()
