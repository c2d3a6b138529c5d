#!/usr/bin/env python3
"""Exports the tiny GPT-2 checkpoint with past key/values to ONNX, as
decoders are exported for incremental decoding, and writes onnxruntime's
outputs on seeded inputs as the references for the past-KV tests.

    .venv-bench/bin/python scripts/gen_onnx_past_kv.py [OUTDIR]

Needs torch, transformers (4.40), onnx and onnxruntime (the bench venv).
The checkpoint is test/Frontend/HF/Inputs/gpt2 (scripts/gen_hf_checkpoints.py),
so transformers' greedy tokens committed there (generate_expected.npy) are
also the reference for generation with the exported model.

Writes into OUTDIR (default test/ONNX/Models):
  gpt2_past-op17.onnx      inputs input_ids [batch, sequence], attention_mask
                           [batch, past_sequence + sequence] and
                           past_key_values.<i>.key/value [batch, 4,
                           past_sequence, 8]; outputs logits and
                           present.<i>.key/value
  past/gpt2_past.<B>x<P>x<T>.<input>.npy and .<output>.ref.npy
                           onnxruntime on seeded inputs (mask of ones)
"""

import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
import torch
from transformers import GPT2LMHeadModel

HERE = os.path.dirname(os.path.abspath(__file__))
CKPT = os.path.join(HERE, "..", "test", "Frontend", "HF", "Inputs", "gpt2")
SHAPES = ((2, 3, 4), (1, 5, 1), (2, 1, 7))  # (batch, past, new tokens)


class WithPast(torch.nn.Module):
    """Flat inputs and outputs: (input_ids, attention_mask, past...)."""

    def __init__(self, model):
        super().__init__()
        self.model = model
        self.layers = model.config.n_layer

    def forward(self, input_ids, attention_mask, *flat):
        past = tuple((flat[2 * i], flat[2 * i + 1]) for i in range(self.layers))
        out = self.model(input_ids=input_ids, attention_mask=attention_mask,
                         past_key_values=past, use_cache=True)
        result = [out.logits]
        for k, v in out.past_key_values:
            result += [k, v]
        return tuple(result)


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        HERE, "..", "test", "ONNX", "Models")
    model = GPT2LMHeadModel.from_pretrained(CKPT).eval()
    cfg = model.config
    layers, heads = cfg.n_layer, cfg.n_head
    head_dim = cfg.n_embd // heads
    gen = torch.Generator().manual_seed(7)
    b, p, t = 2, 3, 4
    ids = torch.randint(0, cfg.vocab_size, (b, t), generator=gen)
    mask = torch.ones(b, p + t, dtype=torch.long)
    flat = [torch.randn(b, heads, p, head_dim, generator=gen)
            for _ in range(2 * layers)]
    kv = [f"{i}.{x}" for i in range(layers) for x in ("key", "value")]
    names = ["input_ids", "attention_mask"] + [f"past_key_values.{n}" for n in kv]
    outputs = ["logits"] + [f"present.{n}" for n in kv]
    axes = {"input_ids": {0: "batch", 1: "sequence"},
            "attention_mask": {0: "batch", 1: "past_sequence + sequence"},
            "logits": {0: "batch", 1: "sequence"}}
    for n in names[2:]:
        axes[n] = {0: "batch", 2: "past_sequence"}
    for n in outputs[1:]:
        axes[n] = {0: "batch", 2: "past_sequence + sequence"}
    path = os.path.join(outdir, "gpt2_past-op17.onnx")
    with torch.no_grad():
        torch.onnx.export(WithPast(model), (ids, mask, *flat), path,
                          input_names=names, output_names=outputs,
                          dynamic_axes=axes, opset_version=17,
                          do_constant_folding=True)
    onnx.checker.check_model(onnx.load(path))
    print(f"{path}: {os.path.getsize(path)} bytes")

    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    refdir = os.path.join(outdir, "past")
    os.makedirs(refdir, exist_ok=True)
    rng = np.random.default_rng(11)
    for b, p, t in SHAPES:
        feeds = {"input_ids": rng.integers(0, cfg.vocab_size, (b, t),
                                           dtype=np.int64),
                 "attention_mask": np.ones((b, p + t), dtype=np.int64)}
        for n in names[2:]:
            feeds[n] = rng.standard_normal((b, heads, p, head_dim)).astype(
                np.float32)
        refs = session.run(None, feeds)
        stem = os.path.join(refdir, f"gpt2_past.{b}x{p}x{t}")
        for key, value in feeds.items():
            np.save(f"{stem}.{key}.npy", value)
        for key, value in zip(outputs, refs):
            np.save(f"{stem}.{key}.ref.npy", value.astype(np.float32))
        print(f"{stem}: logits {refs[0].shape}")


if __name__ == "__main__":
    main()
