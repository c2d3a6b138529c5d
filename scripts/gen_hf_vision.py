#!/usr/bin/env python3
"""Builds the tiny Hugging Face vision checkpoints (ViTModel,
ViTForImageClassification, CLIPVisionModel, CLIPTextModel) that test
`attn-import --hf` / `attn-compile DIR`.

Made with transformers 5.23.0 and torch 2.15. Each model is constructed
from a config object with seeded random initialization (nothing is
downloaded), its weights widened (gen_hf_families.widen_weights), saved with
`save_pretrained` (config.json + model.safetensors) and run by transformers
itself; its outputs are the independent reference the compiled model is
checked against:
  vision: pixel_values.npy f32 [1, 3, 16, 16] -> expected.npy
          pixel_values_2.npy f32 [2, 3, 16, 16] -> expected_2.npy
  text:   input_ids.npy [1, 7] -> expected.npy, input_ids_2.npy [2, 5]
          -> expected_2.npy
plus vit's expected_nobias.npy (qkv_bias false) and clip_text's
input_ids_legacy.npy [2, 6] -> expected_legacy.npy (the
pooling of configs whose eos_token_id is 2). The reference is the output the importer builds: ViTModel's
last_hidden_state, ViTForImageClassification's logits, the CLIP towers'
pooler_output (the post-LayerNormed CLS token; the final-LayerNormed state
at each row's first end-of-text token).

  venv/bin/python scripts/gen_hf_vision.py test/Frontend/HF/Inputs
The output is committed, so the tests need neither package.
"""

import argparse
import os
import shutil
import sys

import numpy as np
import torch
import transformers as T

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_hf_families import widen_weights  # noqa: E402

IMAGE = 16
VIT = dict(image_size=IMAGE, patch_size=4, num_channels=3, hidden_size=32,
           num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
           hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
CLIP_VISION = dict(image_size=IMAGE, patch_size=4, num_channels=3,
                   hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                   intermediate_size=64, attention_dropout=0.0)
VOCAB = 99
EOS = 98
CLIP_TEXT = dict(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2,
                 num_attention_heads=4, intermediate_size=64,
                 max_position_embeddings=16, attention_dropout=0.0,
                 pad_token_id=1, bos_token_id=0, eos_token_id=EOS)


def families():
    return {
        "vit": (T.ViTConfig, T.ViTModel, VIT, "last_hidden_state"),
        "vit_cls": (T.ViTConfig, T.ViTForImageClassification,
                    dict(VIT, num_labels=5), "logits"),
        "clip_vision": (T.CLIPVisionConfig, T.CLIPVisionModel, CLIP_VISION,
                        "pooler_output"),
        "clip_text": (T.CLIPTextConfig, T.CLIPTextModel, CLIP_TEXT,
                      "pooler_output"),
    }


def inputs(name, rng):
    """The two input batches of `name` (suffix, name, array)."""
    if name != "clip_text":
        return [(s, "pixel_values",
                 rng.standard_normal((b, 3, IMAGE, IMAGE)).astype(np.float32))
                for s, b in (("", 1), ("_2", 2))]
    out = []
    for s, (b, n) in (("", (1, 7)), ("_2", (2, 5))):
        ids = rng.integers(2, EOS, size=(b, n), dtype=np.int64)
        # An end-of-text token mid-row, and a later one (padding as EOS):
        # the pooled row is the first.
        ids[0, n - 2] = EOS
        ids[0, n - 1] = EOS
        if b > 1:
            ids[1, 1] = EOS
        out.append((s, "input_ids", ids))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dest")
    args = ap.parse_args()
    for name, (cfg_class, model_class, over, output) in families().items():
        torch.manual_seed(1234)
        model = model_class(cfg_class(**over))
        widen_weights(model, 4.0)
        model.eval()
        dest = os.path.join(args.dest, name)
        shutil.rmtree(dest, ignore_errors=True)
        model.save_pretrained(dest)
        rng = np.random.default_rng(1234)
        for suffix, input_name, x in inputs(name, rng):
            np.save(os.path.join(dest, f"{input_name}{suffix}.npy"), x)
            with torch.no_grad():
                y = getattr(model(**{input_name: torch.from_numpy(x)}),
                            output)
            np.save(os.path.join(dest, f"expected{suffix}.npy"),
                    y.numpy().astype(np.float32))
            print(name, suffix or "_1", tuple(y.shape),
                  float(y.abs().max()))
        if name == "clip_text":
            legacy(model, dest, rng)
        if name == "vit":
            without_qkv_bias(model, dest)


def without_qkv_bias(model, dest):
    """expected_nobias.npy: transformers' ViTModel with qkv_bias false and
    the other weights of `model` on pixel_values.npy (the test sets the key
    in a copy of the config; the unused bias tensors stay in the file)."""
    plain = T.ViTModel(T.ViTConfig(**VIT, qkv_bias=False))
    missing, _ = plain.load_state_dict(model.state_dict(), strict=False)
    assert not missing, missing
    plain.eval()
    x = torch.from_numpy(np.load(os.path.join(dest, "pixel_values.npy")))
    with torch.no_grad():
        y = plain(pixel_values=x).last_hidden_state
    np.save(os.path.join(dest, "expected_nobias.npy"),
            y.numpy().astype(np.float32))


def legacy(model, dest, rng):
    """CLIP configs whose eos_token_id is the legacy 2 pool at each row's
    first largest id: input_ids_legacy.npy [2, 6] (no end-of-text token,
    row 0's largest id twice) -> expected_legacy.npy, transformers' output
    with the model's eos_token_id set to 2."""
    ids = rng.integers(2, EOS - 1, size=(2, 6), dtype=np.int64)
    ids[0, 1] = ids[0, 4] = EOS - 1
    model.eos_token_id = 2
    with torch.no_grad():
        y = model(input_ids=torch.from_numpy(ids)).pooler_output
    np.save(os.path.join(dest, "input_ids_legacy.npy"), ids)
    np.save(os.path.join(dest, "expected_legacy.npy"),
            y.numpy().astype(np.float32))


if __name__ == "__main__":
    main()
