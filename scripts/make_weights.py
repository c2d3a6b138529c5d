#!/usr/bin/python3
"""Write seeded random weights (and optionally inputs / reference outputs)
for the attnc reference models.

usage: make_weights.py MODEL OUT.safetensors [--seed N] [--layers L]
                       [--d D] [--heads H] [--dff F] [--vocab V] [--seq S]
                       [--inputs DIR] [--reference OUT.npy] [--keep 0,2,4]

MODEL: small_encoder | bert | decoder_block

Weights are f32 with these initialisations: matrices 0.02*N(0,1),
LayerNorm weights 1 + 0.02*N(0,1), biases (incl. LayerNorm bias)
0.02*N(0,1), embedding tables 0.5*N(0,1).  Each tensor draws from its own
generator seeded by (seed, crc32(name)), so a tensor does not change when
other tensors are added (e.g. more layers).

--inputs DIR writes example inputs as .npy:
  small_encoder: DIR/ids.npy  int32 [1,S] in [0,vocab)   (S = --seq, default 16)
  bert:          DIR/x.npy    float32 [1,S,d]            (S = --seq, default 128)
  decoder_block: DIR/x.npy    float32 [1,S,d]            (S = --seq, default 64)
--reference OUT.npy runs the float64 numpy reference on those inputs (with the
f32-rounded weights exactly as written) and saves the output as float32;
--keep 0,2,4 passes layers_to_keep (small_encoder / bert).

Only needs numpy; run with /usr/bin/python3.
"""

import argparse
import os
import sys
import zlib

import numpy as np

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(_HERE, os.pardir, "test", "reference"))

import attn_ref  # noqa: E402
import tensorio  # noqa: E402

DEFAULTS = {
    "small_encoder": dict(layers=2, d=64, heads=4, dff=256, vocab=100, seq=16),
    "bert": dict(layers=12, d=768, heads=12, dff=3072, vocab=None, seq=128),
    "decoder_block": dict(layers=1, d=256, heads=8, dff=1024, vocab=None, seq=64),
}
MODELS = tuple(DEFAULTS)


def _rng(seed, name):
    return np.random.default_rng([int(seed), zlib.crc32(name.encode("utf-8"))])


def _init(seed, name, shape, kind):
    g = _rng(seed, name)
    z = g.standard_normal(shape)
    if kind == "matrix":
        a = 0.02 * z
    elif kind == "ln_weight":
        a = 1.0 + 0.02 * z
    elif kind == "bias":
        a = 0.02 * z
    elif kind == "embed":
        a = 0.5 * z
    else:
        raise ValueError(kind)
    return a.astype(np.float32)


def weight_specs(model, layers=None, d=None, heads=None, dff=None, vocab=None):
    """List of (name, shape, kind) for `model` (defaults from DEFAULTS)."""
    cfg = dict(DEFAULTS[model])
    for k, v in (("layers", layers), ("d", d), ("heads", heads),
                 ("dff", dff), ("vocab", vocab)):
        if v is not None:
            cfg[k] = v
    L, D, F = cfg["layers"], cfg["d"], cfg["dff"]
    if D % cfg["heads"] != 0:
        raise ValueError("d=%d not divisible by heads=%d" % (D, cfg["heads"]))
    specs = []

    def lin(prefix, out, inp):
        specs.append((prefix + ".weight", (out, inp), "matrix"))
        specs.append((prefix + ".bias", (out,), "bias"))

    def ln(prefix):
        specs.append((prefix + ".weight", (D,), "ln_weight"))
        specs.append((prefix + ".bias", (D,), "bias"))

    if model == "small_encoder":
        specs.append(("embed.weight", (cfg["vocab"], D), "embed"))
        for l in range(L):
            p = "layers.%d." % l
            for n in ("q", "k", "v", "o"):
                lin(p + "attn." + n, D, D)
            ln(p + "ln1")
            lin(p + "ffn.up", F, D)
            lin(p + "ffn.down", D, F)
            ln(p + "ln2")
    elif model == "bert":
        for l in range(L):
            p = "encoder.layer.%d." % l
            lin(p + "attention.self.query", D, D)
            lin(p + "attention.self.key", D, D)
            lin(p + "attention.self.value", D, D)
            lin(p + "attention.output.dense", D, D)
            ln(p + "attention.output.LayerNorm")
            lin(p + "intermediate.dense", F, D)
            lin(p + "output.dense", D, F)
            ln(p + "output.LayerNorm")
    elif model == "decoder_block":
        p = "h.0."
        ln(p + "ln_1")
        for n in ("q", "k", "v", "o"):
            lin(p + "attn." + n, D, D)
        ln(p + "ln_2")
        lin(p + "mlp.up", F, D)
        lin(p + "mlp.down", D, F)
    else:
        raise ValueError("unknown model %r (want one of %s)" % (model, MODELS))
    return specs, cfg


def make_weights(model, seed=0, **cfg):
    """dict name -> float32 array, and the resolved config."""
    specs, cfg = weight_specs(model, **cfg)
    return {n: _init(seed, n, s, k) for n, s, k in specs}, cfg


def make_inputs(model, cfg, seed=0):
    """dict file-stem -> array of example inputs."""
    g = _rng(seed, "__inputs__/" + model)
    S = cfg["seq"]
    if model == "small_encoder":
        return {"ids": g.integers(0, cfg["vocab"], size=(1, S)).astype(np.int32)}
    return {"x": g.standard_normal((1, S, cfg["d"])).astype(np.float32)}


def run_reference(model, W, inputs, cfg, layers_to_keep=None):
    if model == "small_encoder":
        y = attn_ref.small_encoder(inputs["ids"], W, layers_to_keep=layers_to_keep,
                                   num_layers=cfg["layers"], heads=cfg["heads"])
    elif model == "bert":
        y = attn_ref.bert_encoder(inputs["x"], W, num_layers=cfg["layers"],
                                  layers_to_keep=layers_to_keep, d=cfg["d"],
                                  heads=cfg["heads"], dff=cfg["dff"])
    else:
        if layers_to_keep is not None:
            raise ValueError("--keep does not apply to decoder_block")
        y = attn_ref.decoder_block(inputs["x"], W, heads=cfg["heads"])
    return y


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", choices=MODELS)
    ap.add_argument("out", help="output .safetensors path")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--layers", type=int)
    ap.add_argument("--d", type=int)
    ap.add_argument("--heads", type=int)
    ap.add_argument("--dff", type=int)
    ap.add_argument("--vocab", type=int, help="small_encoder vocabulary size")
    ap.add_argument("--seq", type=int, help="input sequence length")
    ap.add_argument("--inputs", metavar="DIR", help="write example inputs (.npy)")
    ap.add_argument("--reference", metavar="OUT.npy",
                    help="write the reference model output (float32)")
    ap.add_argument("--keep", help="comma-separated layers_to_keep, e.g. 0,2,4")
    a = ap.parse_args(argv)

    if a.model == "decoder_block" and a.layers not in (None, 1):
        ap.error("decoder_block has exactly one layer")
    W, cfg = make_weights(a.model, seed=a.seed, layers=a.layers, d=a.d,
                          heads=a.heads, dff=a.dff, vocab=a.vocab)
    if a.seq is not None:
        cfg["seq"] = a.seq
    meta = {"model": a.model, "seed": str(a.seed)}
    meta.update({k: str(v) for k, v in cfg.items() if v is not None})
    d = os.path.dirname(os.path.abspath(a.out))
    os.makedirs(d, exist_ok=True)
    tensorio.write_safetensors(a.out, W, metadata=meta)

    keep = None
    if a.keep is not None:
        keep = [int(t) for t in a.keep.split(",") if t.strip() != ""]

    if a.inputs or a.reference:
        inputs = make_inputs(a.model, cfg, seed=a.seed)
        if a.inputs:
            os.makedirs(a.inputs, exist_ok=True)
            for stem, arr in inputs.items():
                tensorio.save_npy(os.path.join(a.inputs, stem + ".npy"), arr)
        if a.reference:
            y = run_reference(a.model, W, inputs, cfg, layers_to_keep=keep)
            rd = os.path.dirname(os.path.abspath(a.reference))
            os.makedirs(rd, exist_ok=True)
            tensorio.save_npy(a.reference, y.astype(np.float32))
    elif keep is not None:
        ap.error("--keep only matters together with --reference")
    return 0


if __name__ == "__main__":
    sys.exit(main())
