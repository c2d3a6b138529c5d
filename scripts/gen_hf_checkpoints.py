#!/usr/bin/env python3
"""Builds the tiny Hugging Face checkpoints that test `attn-import --hf`.

Each model is constructed from a config object with random initialization
(nothing is downloaded), saved with `save_pretrained` as the transformers
library writes it (config.json + model.safetensors, or a sharded index), and
run by transformers itself on seeded input ids; its output (BERT: last hidden
state, GPT-2 and LLaMA: logits) is the independent reference the compiled
model is checked against.

Needs transformers (with LLaMA's num_key_value_heads) and safetensors, e.g.
  /usr/bin/python3 -m venv --system-site-packages .venv-hf   # Debian's torch 1.13
  .venv-hf/bin/pip install "transformers==4.40.2" "safetensors<0.5"
  .venv-hf/bin/python scripts/gen_hf_checkpoints.py test/Frontend/HF/Inputs
The output is committed, so the tests need neither package. The committed
bert, gpt2 and llama checkpoints were made with transformers 4.40; the other
families' come from scripts/gen_hf_families.py (transformers 5.23).
"""

import argparse
import json
import os
import shutil

import numpy as np
import torch
import transformers
from transformers import (BertConfig, BertModel, GPT2Config, GPT2LMHeadModel,
                          LlamaConfig, LlamaForCausalLM)

SEQ = 16
VOCAB = 99


def bert():
    cfg = BertConfig(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2,
                     num_attention_heads=4, intermediate_size=64,
                     max_position_embeddings=64, type_vocab_size=2,
                     hidden_act="gelu", layer_norm_eps=1e-12,
                     hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    return BertModel(cfg), lambda out: out.last_hidden_state


def gpt2():
    cfg = GPT2Config(vocab_size=VOCAB, n_embd=32, n_layer=2, n_head=4,
                     n_positions=64, activation_function="gelu_new",
                     resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    return GPT2LMHeadModel(cfg), lambda out: out.logits


def llama():
    cfg = LlamaConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=88,
                      num_hidden_layers=2, num_attention_heads=4,
                      num_key_value_heads=2, max_position_embeddings=64,
                      rms_norm_eps=1e-6, rope_theta=10000.0,
                      tie_word_embeddings=False)
    return LlamaForCausalLM(cfg), lambda out: out.logits


MODELS = {
    # name: (builder, batch, save_pretrained options)
    "bert": (bert, 1, {}),
    "gpt2": (gpt2, 1, {}),
    "llama": (llama, 1, {}),
}


def masked(model, pick, rng, dest):
    """BertModel with token_type_ids and an attention_mask (batch 2: one
    row right-padded, one with a hole), as masked_*.npy and
    masked_expected.npy."""
    ids = rng.integers(0, VOCAB, size=(2, SEQ), dtype=np.int64)
    mask = np.ones((2, SEQ), dtype=np.int64)
    mask[1, 11:] = 0
    mask[0, 3] = 0
    types = np.zeros((2, SEQ), dtype=np.int64)
    types[0, 8:] = 1
    types[1, :5] = 1
    with torch.no_grad():
        out = pick(model(input_ids=torch.from_numpy(ids),
                         attention_mask=torch.from_numpy(mask),
                         token_type_ids=torch.from_numpy(types)))
    for key, value in (("input_ids", ids), ("attention_mask", mask),
                       ("token_type_ids", types)):
        np.save(os.path.join(dest, f"masked_{key}.npy"), value)
    np.save(os.path.join(dest, "masked_expected.npy"), out.numpy().astype(np.float32))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir")
    args = ap.parse_args()
    print(f"transformers {transformers.__version__}, torch {torch.__version__}")
    for name, (build, batch, save_opts) in MODELS.items():
        torch.manual_seed(1234)
        model, pick = build()
        # Random init uses std 0.02; widen the weights a little so that the
        # test compares non-trivial activations (norm weights stay near 1).
        with torch.no_grad():
            for p in model.parameters():
                if p.dim() >= 2:
                    p.mul_(8.0)
                else:
                    p.add_(0.1 * torch.randn_like(p))
        model.eval()
        dest = os.path.join(args.out_dir, name)
        shutil.rmtree(dest, ignore_errors=True)
        model.save_pretrained(dest, safe_serialization=True, **save_opts)
        rng = np.random.default_rng(7)
        ids = rng.integers(0, VOCAB, size=(batch, SEQ), dtype=np.int64)
        with torch.no_grad():
            out = pick(model(input_ids=torch.from_numpy(ids)))
        np.save(os.path.join(dest, "input_ids.npy"), ids)
        np.save(os.path.join(dest, "expected.npy"),
                out.numpy().astype(np.float32))
        if name == "bert":
            masked(model, pick, rng, dest)
        with open(os.path.join(dest, "config.json")) as f:
            arch = json.load(f)["architectures"]
        size = sum(os.path.getsize(os.path.join(dest, f)) for f in os.listdir(dest))
        print(f"{name}: {arch} -> {dest} ({size} bytes), output {tuple(out.shape)}")


if __name__ == "__main__":
    main()
