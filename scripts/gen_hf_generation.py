#!/usr/bin/env python3
"""Greedy continuations of the tiny decoder checkpoints, by transformers.

For each decoder in test/Frontend/HF/Inputs (gpt2, llama) this writes
  generate_prompt.npy    int64 [2, 9], row 0 uses its first 5 tokens
  generate_lengths.npy   int64 [2]
  generate_expected.npy  int64 [2, 24], transformers' greedy new tokens
computed by `model.generate(do_sample=False)` on each row alone (no
padding), the independent reference for `model generate` and the session
API. It prints the smallest gap between the best and second-best logit over
all steps: a near tie could flip under float rounding, so it must not be
tiny.

  .venv-hf/bin/python scripts/gen_hf_generation.py test/Frontend/HF/Inputs
(the environment of scripts/gen_hf_checkpoints.py). The output is committed.
"""

import argparse
import os

import numpy as np
import torch
from transformers import AutoModelForCausalLM

NEW_TOKENS = 24
LENGTHS = [5, 9]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("inputs")
    args = ap.parse_args()
    for name in ("gpt2", "llama"):
        d = os.path.join(args.inputs, name)
        model = AutoModelForCausalLM.from_pretrained(d).eval()
        vocab = model.config.vocab_size
        rng = np.random.default_rng(1234)
        prompt = rng.integers(0, vocab, size=(len(LENGTHS), max(LENGTHS)),
                              dtype=np.int64)
        expected = np.zeros((len(LENGTHS), NEW_TOKENS), dtype=np.int64)
        min_gap = float("inf")
        for row, length in enumerate(LENGTHS):
            ids = torch.from_numpy(prompt[row:row + 1, :length])
            with torch.no_grad():
                out = model.generate(ids, max_new_tokens=NEW_TOKENS,
                                     do_sample=False, output_scores=True,
                                     return_dict_in_generate=True,
                                     pad_token_id=0)
            expected[row] = out.sequences[0, length:].numpy()
            for scores in out.scores:
                top2 = torch.topk(scores[0], 2).values
                min_gap = min(min_gap, float(top2[0] - top2[1]))
        np.save(os.path.join(d, "generate_prompt.npy"), prompt)
        np.save(os.path.join(d, "generate_lengths.npy"),
                np.array(LENGTHS, dtype=np.int64))
        np.save(os.path.join(d, "generate_expected.npy"), expected)
        print(f"{name}: expected {expected.tolist()} min top-2 logit gap "
              f"{min_gap:.3g}")


if __name__ == "__main__":
    main()
