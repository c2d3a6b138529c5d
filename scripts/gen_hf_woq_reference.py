#!/usr/bin/env python3
"""Writes woq_expected.npy beside the tiny GPT-2 and LLaMA checkpoints:
transformers' f32 greedy continuation (55 new tokens, past eos, each row of
generate_prompt.npy alone at its generate_lengths.npy length), so that a
row fills the checkpoints' 64 positions. The reference that the
weight-only quantized builds (test/Frontend/HF/woq-cpu.test) agree with.

    /path/to/venv/bin/python scripts/gen_hf_woq_reference.py test/Frontend/HF/Inputs
"""

import argparse
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_hf_generation import decoders  # noqa: E402

NEW_TOKENS = 55


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("inputs")
    for name, d, model in decoders(ap.parse_args().inputs):
        prompt = np.load(os.path.join(d, "generate_prompt.npy"))
        lengths = np.load(os.path.join(d, "generate_lengths.npy"))
        out = np.zeros((len(lengths), NEW_TOKENS), np.int64)
        for row, length in enumerate(lengths):
            ids = torch.from_numpy(prompt[row:row + 1, :length])
            with torch.no_grad():
                seq = model.generate(ids, attention_mask=torch.ones_like(ids),
                                     max_new_tokens=NEW_TOKENS,
                                     min_new_tokens=NEW_TOKENS,
                                     do_sample=False, pad_token_id=0,
                                     eos_token_id=None)
            out[row] = seq[0, length:].numpy()
        np.save(os.path.join(d, "woq_expected.npy"), out)
        print(name, out.tolist())


if __name__ == "__main__":
    main()
