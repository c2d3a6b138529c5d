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
import sys

from transformers import AutoModelForCausalLM

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_hf_families import generate  # noqa: E402


def decoders(inputs):
    """(name, directory, transformers' model) of each decoder checkpoint in
    `inputs` (gpt2, llama)."""
    for name in ("gpt2", "llama"):
        d = os.path.join(inputs, name)
        yield name, d, AutoModelForCausalLM.from_pretrained(d).eval()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("inputs")
    for name, d, model in decoders(ap.parse_args().inputs):
        expected, min_gap = generate(model, d, first_id=0,
                                     vocab=model.config.vocab_size,
                                     stop_at_eos=True)
        print(f"{name}: expected {expected.tolist()} min top-2 logit gap "
              f"{min_gap:.3g}")


if __name__ == "__main__":
    main()
