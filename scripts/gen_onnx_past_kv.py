#!/usr/bin/env python3
"""Exports the tiny GPT-2 or LLaMA checkpoint with past key/values to ONNX,
as decoders are exported for incremental decoding, and writes onnxruntime's
outputs on seeded inputs as the references for the past-KV tests.

    .venv-bench/bin/python scripts/gen_onnx_past_kv.py [--model gpt2|llama] [OUTDIR]

Needs torch, transformers (4.40), onnx and onnxruntime (the bench venv).
The checkpoint is test/Frontend/HF/Inputs/<model> (scripts/gen_hf_checkpoints.py),
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
  llama_past-op17.onnx     (--model llama) the inputs optimum exports for
                           LLaMA: input_ids, attention_mask, position_ids
                           [batch, sequence] and past_key_values.<i>.key/value
                           [batch, 2, past_sequence, 8] (grouped-query: 2 of
                           4 heads); eager attention, legacy tuple past
  past/llama_past.<B>x<P>x<T>.*.npy
                           as for GPT-2; position_ids = P + arange(T)
"""

import argparse
import os
import types

import numpy as np
import onnx
import onnxruntime as ort
import torch
from transformers import GPT2LMHeadModel, LlamaForCausalLM

HERE = os.path.dirname(os.path.abspath(__file__))
INPUTS = os.path.join(HERE, "..", "test", "Frontend", "HF", "Inputs")
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


def llama_causal_mask(self, attention_mask, input_tensor, cache_position,
                      past_seen_tokens):
    """LlamaModel._update_causal_mask (transformers 4.40, eager attention,
    dynamic cache, 2-D mask) without its in-place write of the padding into
    `causal_mask[..., :mask_length]`: the mask spans every key here
    (mask_length == target_length), so the write is a masked_fill of the
    whole mask. Traced, the write is a ScatterND of computed indices; this
    form exports as Equal/Where, as optimum's patched mask does."""
    dtype = input_tensor.dtype
    min_dtype = torch.finfo(dtype).min
    sequence_length = input_tensor.shape[1]
    target_length = attention_mask.shape[-1]
    causal_mask = torch.full((sequence_length, target_length),
                             fill_value=min_dtype, dtype=dtype)
    if sequence_length != 1:
        causal_mask = torch.triu(causal_mask, diagonal=1)
    causal_mask *= torch.arange(target_length) > cache_position.reshape(-1, 1)
    causal_mask = causal_mask[None, None, :, :].expand(
        input_tensor.shape[0], 1, -1, -1)
    padding_mask = causal_mask + attention_mask[:, None, None, :]
    return causal_mask.masked_fill(padding_mask == 0, min_dtype)


class LlamaWithPast(torch.nn.Module):
    """Flat inputs as optimum exports LLaMA: (input_ids, attention_mask,
    position_ids, past...); the past a legacy tuple (transformers turns it
    into a DynamicCache and back)."""

    def __init__(self, model):
        super().__init__()
        self.model = model
        self.layers = model.config.num_hidden_layers

    def forward(self, input_ids, attention_mask, position_ids, *flat):
        past = tuple((flat[2 * i], flat[2 * i + 1]) for i in range(self.layers))
        out = self.model(input_ids=input_ids, attention_mask=attention_mask,
                         position_ids=position_ids, past_key_values=past,
                         use_cache=True)
        result = [out.logits]
        for k, v in out.past_key_values:
            result += [k, v]
        return tuple(result)


def export(kind, ckpt, path):
    """Exports the `kind` ("gpt2" or "llama") checkpoint at `ckpt` with past
    key/values to `path`; returns (config, past input names, output names,
    the names of the other inputs, kv heads, head width)."""
    llama = kind == "llama"
    if llama:
        # Eager attention: the exported graph is the attention arithmetic
        # (the SDPA path exports a fused op the importer does not read).
        model = LlamaForCausalLM.from_pretrained(
            ckpt, attn_implementation="eager").eval()
        cfg = model.config
        layers, heads = cfg.num_hidden_layers, cfg.num_key_value_heads
        head_dim = cfg.hidden_size // cfg.num_attention_heads
        model.model._update_causal_mask = types.MethodType(
            llama_causal_mask, model.model)
        wrapper = LlamaWithPast(model)
    else:
        model = GPT2LMHeadModel.from_pretrained(ckpt).eval()
        cfg = model.config
        layers, heads = cfg.n_layer, cfg.n_head
        head_dim = cfg.n_embd // heads
        wrapper = WithPast(model)
    gen = torch.Generator().manual_seed(7)
    b, p, t = 2, 3, 4
    ids = torch.randint(0, cfg.vocab_size, (b, t), generator=gen)
    mask = torch.ones(b, p + t, dtype=torch.long)
    extra = [torch.arange(p, p + t).expand(b, t)] if llama else []
    flat = [torch.randn(b, heads, p, head_dim, generator=gen)
            for _ in range(2 * layers)]
    kv = [f"{i}.{x}" for i in range(layers) for x in ("key", "value")]
    first = ["input_ids", "attention_mask"] + (["position_ids"] if llama else [])
    names = first + [f"past_key_values.{n}" for n in kv]
    outputs = ["logits"] + [f"present.{n}" for n in kv]
    axes = {"input_ids": {0: "batch", 1: "sequence"},
            "attention_mask": {0: "batch", 1: "past_sequence + sequence"},
            "logits": {0: "batch", 1: "sequence"}}
    if llama:
        axes["position_ids"] = {0: "batch", 1: "sequence"}
    for n in names[len(first):]:
        axes[n] = {0: "batch", 2: "past_sequence"}
    for n in outputs[1:]:
        axes[n] = {0: "batch", 2: "past_sequence + sequence"}
    with torch.no_grad():
        torch.onnx.export(wrapper, (ids, mask, *extra, *flat), path,
                          input_names=names, output_names=outputs,
                          dynamic_axes=axes, opset_version=17,
                          do_constant_folding=True)
    return cfg, names[len(first):], outputs, first, heads, head_dim


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", choices=("gpt2", "llama"), default="gpt2")
    ap.add_argument("outdir", nargs="?", default=os.path.join(
        HERE, "..", "test", "ONNX", "Models"))
    args = ap.parse_args()
    outdir = args.outdir
    llama = args.model == "llama"
    os.makedirs(outdir, exist_ok=True)
    path = os.path.join(outdir, f"{args.model}_past-op17.onnx")
    cfg, pasts, outputs, first, heads, head_dim = export(
        args.model, os.path.join(INPUTS, args.model), path)
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
        if llama:
            feeds["position_ids"] = np.broadcast_to(
                np.arange(p, p + t, dtype=np.int64), (b, t)).copy()
        for n in pasts:
            feeds[n] = rng.standard_normal((b, heads, p, head_dim)).astype(
                np.float32)
        refs = session.run(None, feeds)
        stem = os.path.join(refdir, f"{args.model}_past.{b}x{p}x{t}")
        for key, value in feeds.items():
            np.save(f"{stem}.{key}.npy", value)
        for key, value in zip(outputs, refs):
            np.save(f"{stem}.{key}.ref.npy", value.astype(np.float32))
        print(f"{stem}: logits {refs[0].shape}")


if __name__ == "__main__":
    main()
