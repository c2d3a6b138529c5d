#!/usr/bin/env python3
"""Exports tiny random encoder-decoders (T5, BART) to ONNX as one forward
pass (encoder plus decoder over given decoder ids, no cache), and writes
transformers' logits as the references.

    scripts/setup.sh --generators          # creates .venv-gen (pinned versions)
    .venv-gen/bin/python scripts/gen_onnx_encdec.py [OUTDIR]

Models (tiny configs, seeded random init, nothing downloaded):
T5ForConditionalGeneration (relative position buckets) and
BartForConditionalGeneration, with use_cache=False. Each is exported by
torch.onnx.export(dynamo=True) at its default opset and by the TorchScript
exporter (dynamo=False) at opset 17, batch and both sequences dynamic; an
export the exporter refuses is reported and skipped. Inputs input_ids
[batch, source] and decoder_input_ids [batch, target]; outputs the logits
(and the encoder's hidden states, which the exporters add).

Writes into OUTDIR (default test/ONNX/EncDec):
  <model>-<exporter>.onnx            the export (weights inline; tiny)
  <model>.<input>.npy                seeded inputs (batch 2)
  <model>.logits.ref.npy             transformers' logits
"""

import os
import sys

import numpy as np
import torch
from transformers import (BartConfig, BartForConditionalGeneration, T5Config,
                          T5ForConditionalGeneration)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from gen_hf_families import widen_weights  # noqa: E402
from gen_onnx_exports import strip  # noqa: E402

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    HERE, "..", "test", "ONNX", "EncDec")


def models():
    # Each model is built right after seeding: its random init is the
    # reproducible part of the references.
    torch.manual_seed(1234)
    yield "t5", T5ForConditionalGeneration(T5Config(
        vocab_size=99, d_model=32, d_kv=16, d_ff=64, num_layers=2,
        num_heads=2, relative_attention_num_buckets=8,
        relative_attention_max_distance=16, decoder_start_token_id=0,
        use_cache=False))
    torch.manual_seed(1234)
    yield "bart", BartForConditionalGeneration(BartConfig(
        vocab_size=99, d_model=32, encoder_layers=2, decoder_layers=2,
        encoder_attention_heads=2, decoder_attention_heads=2,
        encoder_ffn_dim=64, decoder_ffn_dim=64, max_position_embeddings=32,
        use_cache=False))


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, model in models():
        torch.manual_seed(1234)
        widen_weights(model)
        model.eval()
        rng = np.random.default_rng(1234)
        ids = rng.integers(3, 99, size=(2, 7)).astype(np.int64)
        dec = rng.integers(3, 99, size=(2, 5)).astype(np.int64)
        with torch.no_grad():
            logits = model(input_ids=torch.from_numpy(ids),
                           decoder_input_ids=torch.from_numpy(dec)).logits
        np.save(os.path.join(OUT, f"{name}.input_ids.npy"), ids)
        np.save(os.path.join(OUT, f"{name}.decoder_input_ids.npy"), dec)
        np.save(os.path.join(OUT, f"{name}.logits.ref.npy"), logits.numpy())
        args = (torch.from_numpy(ids),)
        kwargs = {"decoder_input_ids": torch.from_numpy(dec)}
        names = dict(input_names=["input_ids", "decoder_input_ids"],
                     output_names=["logits"])
        path = os.path.join(OUT, f"{name}-dynamo.onnx")
        try:
            batch = torch.export.Dim("batch", min=1, max=64)
            torch.onnx.export(
                model, args, path, kwargs=kwargs, dynamo=True,
                dynamic_shapes={"input_ids": {0: batch, 1: torch.export.Dim(
                    "source", min=2, max=32)},
                    "decoder_input_ids": {0: batch, 1: torch.export.Dim(
                        "target", min=2, max=32)}}, **names)
            strip(path)
            if os.path.exists(path + ".data"):
                os.remove(path + ".data")
            print(name, "dynamo exported")
        except Exception as e:  # the exporter refused it
            cause = e.__cause__ or e
            print(name, "dynamo refused:", type(cause).__name__,
                  str(cause).splitlines()[0][:200])
            for p in (path, path + ".data"):
                if os.path.exists(p):
                    os.remove(p)
        path = os.path.join(OUT, f"{name}-ts17.onnx")
        torch.onnx.export(
            model, args, path, kwargs=kwargs, dynamo=False, opset_version=17,
            dynamic_axes={"input_ids": {0: "batch", 1: "source"},
                          "decoder_input_ids": {0: "batch", 1: "target"}},
            **names)
        strip(path)
        print(name, "ts17 exported")


if __name__ == "__main__":
    main()
