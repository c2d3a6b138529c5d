#!/usr/bin/env python3
"""Exports tiny random vision transformers and CLIP towers to ONNX the ways
users do today, and writes transformers' own outputs as references.

    scripts/setup.sh --generators          # creates .venv-gen (pinned versions)
    .venv-gen/bin/python scripts/gen_onnx_vision.py [OUTDIR]

Models (tiny configs, seeded random init, nothing downloaded; sdpa
attention): ViTModel (no pooler), CLIPVisionModel and CLIPTextModel. Each is
exported with torch.onnx.export(dynamo=True) at its default opset and with
the TorchScript exporter (dynamo=False) at opset 17, batch dynamic (and the
text tower's sequence). The vision models read pixel_values [batch, 3, 16,
16] (4x4 patches: the patch embedding is a Conv whose stride is its
kernel); the text tower reads input_ids whose last token is the
end-of-text id, where it pools.

Writes into OUTDIR (default test/ONNX/Vision):
  <model>-<exporter>.onnx            the export (weights inline; tiny)
  <model>.b<N>.<input>.npy           the input at batch N (1 and 2)
  <model>.b<N>.<output>.ref.npy      transformers' outputs
                                     (last_hidden_state; CLIP: pooler_output)
"""

import os
import sys

import numpy as np
import torch
from transformers import (CLIPTextConfig, CLIPTextModel, CLIPVisionConfig,
                          CLIPVisionModel, ViTConfig, ViTModel)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from gen_onnx_exports import strip  # noqa: E402
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    HERE, "..", "test", "ONNX", "Vision")
SMALL = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
             intermediate_size=64, attn_implementation="sdpa")
EOS = 2


def models():
    # Each model is built right after seeding: its random init is the
    # reproducible part of the references.
    vision = dict(SMALL, image_size=16, patch_size=4, num_channels=3)
    torch.manual_seed(1234)
    yield ("vit", ViTModel(ViTConfig(**vision), add_pooling_layer=False),
           "pixel_values", ["last_hidden_state"])
    torch.manual_seed(1234)
    yield ("clip_vision", CLIPVisionModel(CLIPVisionConfig(
        **vision, projection_dim=16)), "pixel_values",
           ["last_hidden_state", "pooler_output"])
    torch.manual_seed(1234)
    yield ("clip_text", CLIPTextModel(CLIPTextConfig(
        **SMALL, vocab_size=99, max_position_embeddings=16, projection_dim=16,
        eos_token_id=EOS)), "input_ids",
           ["last_hidden_state", "pooler_output"])


def inputs(name, batch, rng):
    if name == "input_ids":
        ids = rng.integers(3, 99, size=(batch, 7)).astype(np.int64)
        ids[:, -1] = EOS
        return ids
    return rng.standard_normal((batch, 3, 16, 16)).astype(np.float32)


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, model, input_name, outputs in models():
        model.eval()
        rng = np.random.default_rng(1234)
        examples = {}
        for batch in (1, 2):
            x = inputs(input_name, batch, rng)
            examples[batch] = x
            with torch.no_grad():
                y = model(**{input_name: torch.from_numpy(x)})
            np.save(os.path.join(OUT, f"{name}.b{batch}.{input_name}.npy"), x)
            for o in outputs:
                np.save(os.path.join(OUT, f"{name}.b{batch}.{o}.ref.npy"),
                        getattr(y, o).numpy())
        example = (torch.from_numpy(examples[2]),)
        text = input_name == "input_ids"
        path = os.path.join(OUT, f"{name}-dynamo.onnx")
        batch = torch.export.Dim("batch", min=1, max=64)
        dims = {0: batch, 1: torch.export.Dim("sequence", min=2, max=16)} \
            if text else {0: batch}
        torch.onnx.export(model, example, path, dynamo=True,
                          input_names=[input_name], output_names=outputs,
                          dynamic_shapes={input_name: dims})
        # Weights inline (tiny), no machine paths in the node metadata.
        strip(path)
        if os.path.exists(path + ".data"):
            os.remove(path + ".data")
        path = os.path.join(OUT, f"{name}-ts17.onnx")
        axes = {0: "batch", 1: "sequence"} if text else {0: "batch"}
        torch.onnx.export(model, example, path, dynamo=False, opset_version=17,
                          input_names=[input_name], output_names=outputs,
                          dynamic_axes={input_name: axes,
                                        **{o: {0: "batch"} for o in outputs}})
        strip(path)
        print(name, "exported")


if __name__ == "__main__":
    main()
