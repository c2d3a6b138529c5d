#!/usr/bin/env python3
"""Greedy decoding with a compiled full-sequence encoder-decoder (inputs
input_ids [B, S] and decoder_input_ids [B, N + 1], output logits
[B, N + 1, V]): from the decoder start tokens [B, 1], step i runs the model
on the tokens so far, the positions after them filled with the start token
(the decoder is causal: they do not change the logits before them), and
appends the argmax at position i. Writes the N new tokens per row (int64
.npy) for check_tokens.py."""

import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model", help="the compiled model")
    ap.add_argument("weights")
    ap.add_argument("input_ids")
    ap.add_argument("decoder_start")
    ap.add_argument("new_tokens", type=int)
    ap.add_argument("output")
    args = ap.parse_args()
    start = np.load(args.decoder_start).astype(np.int64)
    tokens = np.repeat(start, args.new_tokens + 1, axis=1)
    with tempfile.TemporaryDirectory() as tmp:
        dec_path = os.path.join(tmp, "dec.npy")
        out_path = os.path.join(tmp, "logits.npy")
        for i in range(args.new_tokens):
            np.save(dec_path, tokens)
            subprocess.run([args.model, "--weights", args.weights,
                            "--input", args.input_ids, "--input", dec_path,
                            "--output", out_path, "-q"], check=True)
            tokens[:, i + 1] = np.load(out_path)[:, i].argmax(-1)
    np.save(args.output, tokens[:, 1:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
