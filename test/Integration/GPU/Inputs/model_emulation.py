#!/usr/bin/env python3
"""Emulates whole compiled CUDA models and compares them with the numpy
reference.

For each case: the model (an example, or a tiny variant written by
scripts/gen_examples.py's templates) is compiled with
`attn-opt --attn-to-cuda="stop-after=gpu-mapped precision=P"
--mlir-print-op-generic`; seeded random weights (scripts/make_weights.py)
are written to a .safetensors file, which gpu_model_emulator.py binds by the
module's manifest as the runtime does; the model's entry runs on the host
with every kernel emulated in launch order (gpu_model_emulator.py); its
output is compared with the float64 numpy reference (test/reference/
attn_ref.py via make_weights.run_reference) on the same weights and inputs:

    max|y - ref| <= tol * max(1, max|ref|)

(the check of test/Integration/modelcheck.py; the tolerances are those of
Integration/GPU/models.test and Integration/CPU/precision.test). Projection
weights are scaled up (SHARPEN, SCALE) so that attention scores and every
branch are of order one (see run_case).

--mutate skip-launch:K / drop-block:K / swap-b-rows ... (see
gpu_model_emulator.py) must make cases fail.

THIS IS NOT A SUBSTITUTE FOR RUNNING ON A GPU (see gpu_kernel_emulator.py):
the NVVM lowering, PTX and ptxas are not covered.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..", "..", "..")
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, os.path.join(ROOT, "test", "reference"))
import checkutil  # noqa: E402
import gen_examples  # noqa: E402
import make_weights as mw  # noqa: E402
import tensorio  # noqa: E402
from gpuemu.driver import run_cases  # noqa: E402
from gpuemu.tma import DeadlockError, TmaError  # noqa: E402
from gpu_model_emulator import EmulationError, Emulator  # noqa: E402
from gpuemu.host import Module  # noqa: E402

SHARPEN = 8.0  # query and key projections
SCALE = 4.0  # the other projections
TINY_BERT = dict(seq=32, d=64, heads=2, dff=128, layers=2)
TOL = {"f32": 1e-5, "f16": 4e-3, "bf16": 3e-2}

# name, kind, model source, make_weights config, precision, tolerance
CASES = []
for _p in ("f32", "f16", "bf16"):
    CASES += [
        (f"small_encoder {_p}", "small_encoder", "example", {}, _p, TOL[_p]),
        (f"decoder_block {_p}", "decoder_block", "example", {}, _p, TOL[_p]),
        (f"bert {_p} (2 layers, seq 32, d 64, 2 heads, d_ff 128)", "bert",
         "tiny", TINY_BERT, _p, TOL[_p]),
    ]
# Dynamic shapes (--dynamic): the examples with their sequence `?` (1x16x /
# 1x64x -> 1x?x; "batch": small_encoder's batch too, ?x?x), compiled once
# and run at sizes that are not multiples of the kernels' tiles.
DYNAMIC_CASES = []
for _p in ("f32", "f16", "bf16"):
    for _kind, _pattern, _dyn, _shapes in (
            ("small_encoder", "1x16x", "1x?x", ((1, 5), (1, 16), (1, 37))),
            ("small_encoder", "1x16x", "?x?x", ((3, 7),)),
            ("decoder_block", "1x64x", "1x?x", ((1, 5), (1, 16), (1, 37)))):
        for _shape in _shapes:
            DYNAMIC_CASES.append((
                f"{_kind} {_dyn[:-1]} {_p} at {_shape[0]}x{_shape[1]}",
                _kind, "dynamic", dict(pattern=_pattern, dyn=_dyn,
                                       batch=_shape[0], seq=_shape[1]),
                _p, TOL[_p]))

# The one-run prefill step of a run-time token count (attn-compile
# CKPT --input-shape input_ids=1x? --kv-cache 16 --emit=attn) of the tiny
# test checkpoints (test/Frontend/HF/Inputs): runs of T = 11 (the prefill),
# 1, then 4 tokens continuing in the caches (model state), compared with
# transformers' committed logits of the 16-token sequence (expected.npy;
# f32 at check_decode_step.py's 1e-4).
STEP_SPLITS = (11, 1, 4)
# "onnx:<model>_past-op17": GPT-2 and LLaMA exported with past key/values
# (scripts/gen_onnx_past_kv.py, test/ONNX/Models), bound to the caches by
# --kv-cache (attn-bind-kv-cache); the same checkpoint's logits.
for _p, _tol in (("f32", 1e-4), ("f16", TOL["f16"])):
    for _ckpt in ("gpt2", "llama", "onnx:gpt2_past-op17",
                  "onnx:llama_past-op17"):
        DYNAMIC_CASES.append((f"{_ckpt} kv-cache step 1x? {_p} at T = "
                              + ", ".join(map(str, STEP_SPLITS)),
                              "step", _ckpt, {}, _p, _tol))
# Rotary frequencies that follow the run-time length (rope_type dynamic and
# longrope, past 12 positions): the pieces cross the threshold, so they are
# compared with transformers' logits of the same pieces over its cache
# (step_expected.npy), not with the whole sequence's.
for _ckpt in ("llama_rope_dynamic", "phi3_longrope"):
    DYNAMIC_CASES.append((f"{_ckpt} kv-cache step 1x? f32 at T = "
                          + ", ".join(map(str, STEP_SPLITS)),
                          "step", _ckpt, {}, "f32", 1e-4))

# Every checkpoint family of test/Frontend/HF/Inputs at f16 (--families;
# GPT-2 and LLaMA are the --dynamic cases above): each decoder's KV-cache
# step as above, each encoder compiled at input_ids=1x16 ("prefill"), both
# against transformers' committed output.
HF_DECODERS = ("bloom", "falcon", "falcon_mq", "gemma", "gemma2", "gpt_neox",
               "mistral", "opt", "phi", "phi3", "qwen2", "qwen3")
HF_ENCODERS = ("albert", "bert", "distilbert", "electra", "mpnet", "roberta",
               "clip_text", "clip_vision", "vit", "vit_cls", "t5", "t5_gated",
               "mt5", "bart", "mbart")
# T5's unscaled scores and (gated) GELU FFN over widened weights lose more
# in f16: the CPU's f16 build of t5_gated is 1.05e-2 (relative to max|ref|)
# from transformers' f32 logits, so f16's usual 4e-3 cannot hold on any
# target.
T5_FAMILY = ("t5", "t5_gated", "mt5")
T5_F16_TOL = 1.5e-2
FAMILY_CASES = (
    [(f"{c} kv-cache step 1x? f16 at T = " + ", ".join(map(str, STEP_SPLITS)),
      "step", c, {}, "f16", TOL["f16"]) for c in HF_DECODERS] +
    [(f"{c} batch 1 f16", "prefill", c, {}, "f16",
      T5_F16_TOL if c in T5_FAMILY else TOL["f16"]) for c in HF_ENCODERS])

# Exported ONNX models with PyTorch's committed output (f32: onnx_check.py's
# tolerance).
ONNX_CASES = [(f"onnx {m} {p}", "onnx", m, {}, p,
               1e-4 if p == "f32" else TOL[p])
              for p in ("f32", "f16", "bf16") for m in (
                  "encoder_postln_relu-op17", "encoder_preln_gelu-op14",
                  "bert_like-op17", "causal_decoder-op17", "gpt2_like-op14",
                  "misc_ops-op17")]


# Today's exports (test/ONNX/Exports, scripts/gen_onnx_exports.py: torch
# 2.15's dynamo exporter, transformers 5.23; --exports): each compiled at
# the committed 2x5 shape (one row padded) against transformers' output,
# and each decoder's KV-cache step derived from the stateless export
# (--input-shape input_ids=1x? --kv-cache 8) run on the 1x8 sequence in
# the pieces EXPORT_SPLITS against transformers' logits of the whole
# sequence. f32 at check_exports.py's 1e-4, f16 and bf16 at TOL.
EXPORT_SPLITS = (5, 1, 2)
EXPORT_CASES = []
for _p, _tol in (("f32", 1e-4), ("f16", TOL["f16"]), ("bf16", TOL["bf16"])):
    for _family in ("albert", "bert", "distilbert", "electra", "roberta",
                    "bloom", "gemma", "gpt2", "gpt_neox", "llama", "mistral",
                    "opt", "phi", "qwen2"):
        # BLOOM has eager attention only; its opset-23 export here.
        _m = ("bloom-eager-dynamo23" if _family == "bloom" else
              _family + "-sdpa-dynamo")
        EXPORT_CASES.append((f"export {_m} 2x5 {_p}", "export", _m, {}, _p,
                             _tol))
        if _family not in ("albert", "bert", "distilbert", "electra",
                           "roberta"):
            EXPORT_CASES.append((
                f"export {_m} kv-cache step 1x? {_p} at T = "
                + ", ".join(map(str, EXPORT_SPLITS)), "export-step", _m, {},
                _p, _tol))


def model_text(kind, source, cfg):
    if source == "dynamic":
        with open(os.path.join(ROOT, "examples", kind + ".mlir")) as f:
            return f.read().replace(cfg["pattern"], cfg["dyn"])
    if source == "example":
        with open(os.path.join(ROOT, "examples", kind + ".mlir")) as f:
            return f.read()
    if kind == "bert":
        return gen_examples.bert_base(**cfg)
    assert kind == "decoder_block"
    return gen_examples.decoder_block(**cfg)


MODULES = {}  # (model text, precision) -> Module

# Extra attn-to-cuda options for every case (--pipeline-options, e.g.
# "chip=sm_80" or "no-wgmma"... spelled as attn-opt's pipeline options).
PIPELINE_OPTIONS = ""


def map_stage(attn_opt, path, precision):
    """The module at the end of attn-to-cuda's map stage, generic form."""
    extra = " " + PIPELINE_OPTIONS if PIPELINE_OPTIONS else ""
    return Module(subprocess.run(
        [attn_opt, path, "--attn-to-cuda=stop-after=gpu-mapped precision="
         + precision + extra, "--mlir-print-op-generic"],
        check=True, capture_output=True, text=True).stdout)


def emulate_import(tools, source, options, out, precision, mutate,
                   host_visible):
    """`source` imported and raised by `attn-compile --emit=attn OPTIONS`
    into `out` (its weights beside it as .safetensors), compiled by the map
    stage: the emulator and the weights' path."""
    subprocess.run([tools["attn-compile"], "-q", source, "--emit=attn"]
                   + options + ["-o", out], check=True)
    module = map_stage(tools["attn-opt"], out, precision)
    emu = Emulator(module, mutate, host_memory_visible=host_visible)
    return emu, os.path.splitext(out)[0] + ".safetensors"


def run_pieces(emu, weights, ids, splits):
    """A KV-cache step run on `ids` [1, T] in the pieces `splits`, each run
    continuing at the previous runs' length in the caches (model state):
    the logits of the whole sequence."""
    pieces, start = [], 0
    for t in splits:
        (y,) = emu.run_model(weights, {
            "input_ids": ids[:, start:start + t],
            "positions": np.array([start], np.int64)})
        assert y.shape[:2] == (1, t), y.shape
        pieces.append(y)
        start += t
    return np.concatenate(pieces, axis=1)


def run_onnx_case(tools, case, mutate, workdir, host_visible):
    """An exported ONNX model (test/ONNX/Models, scripts/gen_onnx_models.py):
    imported and raised by `attn-compile --emit=attn` (the model as attn
    text plus its weights as .safetensors), compiled by the same map stage,
    run on the committed inputs and compared with PyTorch's committed
    output."""
    name, kind, model, _, precision, tol = case
    source = os.path.join(ROOT, "test", "ONNX", "Models", model + ".onnx")
    stem, paths = checkutil.model_inputs(source)
    ref = np.load(stem + ".ref.npy").astype(np.float64)
    inputs = {key: np.load(path) for key, path in paths.items()}
    emu, weights = emulate_import(
        tools, source, checkutil.input_shape_flags(paths),
        os.path.join(workdir, os.path.basename(model) + ".mlir"), precision,
        mutate, host_visible)
    (y,) = emu.run_model(weights, inputs)
    return compare(y, ref, tol, emu)


def run_export_case(tools, case, mutate, workdir, host_visible):
    """One of today's exports (EXPORT_CASES): at the committed 2x5 shape, or
    its derived KV-cache step on the 1x8 sequence, against transformers."""
    name, kind, model, _, precision, tol = case
    exports = os.path.join(ROOT, "test", "ONNX", "Exports")
    family = model.split("-")[0]
    source = os.path.join(exports, model + ".onnx")
    out = os.path.join(workdir, model + ("-step" if kind == "export-step"
                                         else "") + ".mlir")
    if kind == "export":
        inputs = {k: np.load(os.path.join(exports, f"{family}.2x5.{k}.npy"))
                  for k in ("input_ids", "attention_mask")}
        ref = np.load(os.path.join(exports, f"{family}.2x5.ref.npy"))
        emu, weights = emulate_import(
            tools, source, ["--input-shape", "input_ids=2x5",
                            "--input-shape", "attention_mask=2x5"],
            out, precision, mutate, host_visible)
        (y,) = emu.run_model(weights, inputs)
        return compare(y, ref.astype(np.float64), tol, emu)
    ids = np.load(os.path.join(exports, f"{family}.1x8.input_ids.npy"))
    mask = np.load(os.path.join(exports, f"{family}.1x8.attention_mask.npy"))
    ref = np.load(os.path.join(exports, f"{family}.1x8.ref.npy"))
    assert mask.all() and sum(EXPORT_SPLITS) == ids.shape[1]
    emu, weights = emulate_import(
        tools, source, ["--input-shape", "input_ids=1x?", "--kv-cache",
                        str(ids.shape[1])], out, precision, mutate,
        host_visible)
    y = run_pieces(emu, weights, ids, EXPORT_SPLITS)
    return compare(y, ref.astype(np.float64), tol, emu)


def compare(y, expected, tol, emu):
    assert y.shape == expected.shape, (y.shape, expected.shape)
    err = float(np.max(np.abs(y - expected))) if np.isfinite(y).all() \
        else float("inf")
    mag = max(1.0, float(np.max(np.abs(expected))))
    ok = err <= tol * mag
    what = "max abs err " + (f"{err:.2e}" if np.isfinite(err) else
                             "inf (non-finite output)")
    return ok, (f"{what}, tolerance {tol * mag:.1e}; "
                f"{emu.launches} launches of {len(set(emu.kernel_names))} "
                f"kernels, {emu.mma_count} warp mma.sync, "
                f"{emu.ldmatrix_count} warp ldmatrix, "
                f"{emu.async_copy_count} cp.async, "
                f"{emu.wgmma_count} warpgroup wgmma, "
                f"{emu.tma_count} TMA loads")


def run_step_case(tools, case, mutate, workdir, host_visible):
    """A KV-cache step of a run-time token count, run on a sequence in the
    pieces STEP_SPLITS (each run continuing at the previous runs' length in
    the caches) against transformers' logits of the whole sequence."""
    name, kind, ckpt, _, precision, tol = case
    source = None
    if ckpt.startswith("onnx:"):
        source = os.path.join(ROOT, "test", "ONNX", "Models",
                              ckpt[len("onnx:"):] + ".onnx")
        ckpt = ckpt[len("onnx:"):].split("_past")[0]
    base = os.path.join(ROOT, "test", "Frontend", "HF", "Inputs", ckpt)
    ids = np.load(os.path.join(base, "input_ids.npy"))
    pieces = os.path.join(base, "step_expected.npy")
    expected = np.load(pieces if os.path.exists(pieces) else
                       os.path.join(base, "expected.npy")).astype(np.float64)
    assert sum(STEP_SPLITS) == ids.shape[1]
    out = os.path.join(workdir, ckpt + ("_onnx" if source else "") +
                       "_step.mlir")
    emu, weights = emulate_import(
        tools, source or base, ["--input-shape", "input_ids=1x?",
                                "--kv-cache", str(ids.shape[1])],
        out, precision, mutate, host_visible)
    # A checkpoint's IR reads the checkpoint's own weights.
    if not source:
        weights = os.path.join(base, "model.safetensors")
    y = run_pieces(emu, weights, ids, STEP_SPLITS)
    return compare(y, expected, tol, emu)


def run_prefill_case(tools, case, mutate, workdir, host_visible):
    """An encoder (or encoder-decoder, or vision) checkpoint compiled at its
    committed inputs' shapes, against transformers' output."""
    name, kind, ckpt, _, precision, tol = case
    base = os.path.join(ROOT, "test", "Frontend", "HF", "Inputs", ckpt)
    inputs = {n: np.load(os.path.join(base, n + ".npy"))
              for n in ("input_ids", "decoder_input_ids", "pixel_values")
              if os.path.exists(os.path.join(base, n + ".npy"))}
    expected = np.load(os.path.join(base, "expected.npy")).astype(np.float64)
    shapes = []
    for n, a in inputs.items():
        shapes += ["--input-shape", n + "=" + "x".join(map(str, a.shape))]
    emu, _ = emulate_import(
        tools, base, shapes, os.path.join(workdir, ckpt + "_prefill.mlir"),
        precision, mutate, host_visible)
    (y,) = emu.run_model(os.path.join(base, "model.safetensors"), inputs)
    return compare(y, expected, tol, emu)


def run_case(tools, case, mutate, workdir, host_visible=False):
    name, kind, source, overrides, precision, tol = case
    if kind == "step":
        return run_step_case(tools, case, mutate, workdir, host_visible)
    if kind == "prefill":
        return run_prefill_case(tools, case, mutate, workdir, host_visible)
    if kind == "onnx":
        return run_onnx_case(tools, case, mutate, workdir, host_visible)
    if kind in ("export", "export-step"):
        return run_export_case(tools, case, mutate, workdir, host_visible)
    text = model_text(kind, source, overrides)
    # A dynamic model compiles once for all its run-time sizes.
    key = (text, precision)
    module = MODULES.get(key)
    if module is None:
        path = os.path.join(workdir, kind + ".mlir")
        with open(path, "w") as f:
            f.write(text)
        module = MODULES[key] = map_stage(tools["attn-opt"], path, precision)

    batch = overrides.get("batch", 1)
    overrides = {k: v for k, v in overrides.items()
                 if k in ("layers", "d", "heads", "dff", "seq")}
    cfg = dict(mw.DEFAULTS[kind])
    cfg.update(overrides)
    W, resolved = mw.make_weights(
        kind, 0, **{k: v for k, v in cfg.items() if k != "seq"})
    # make_weights' 0.02-scaled projections leave attention scores near 0
    # (attention almost uniform whatever the keys) and every branch small
    # next to the residual stream, which f16/bf16 tolerances would hide:
    # larger projections make the comparison sensitive to each kernel.
    for n in W:
        if W[n].ndim == 2 and not n.startswith("embed"):
            scale = SHARPEN if n.endswith((".q.weight", ".k.weight",
                                           ".query.weight", ".key.weight")) \
                else SCALE
            W[n] = (W[n] * scale).astype(np.float32)
    cfg.update(resolved)
    cfg.update(overrides)
    weights = os.path.join(workdir, kind + ".safetensors")
    tensorio.write_safetensors(weights, W)
    if batch == 1:
        inputs = mw.make_inputs(kind, cfg, 0)
        expected = np.asarray(mw.run_reference(kind, W, inputs, cfg),
                              np.float64)
    else:  # rows of their own inputs; the reference runs one at a time
        rows = [mw.make_inputs(kind, cfg, b) for b in range(batch)]
        inputs = {k: np.concatenate([r[k] for r in rows]) for k in rows[0]}
        expected = np.concatenate([np.asarray(
            mw.run_reference(kind, W, r, cfg), np.float64) for r in rows])

    emu = Emulator(module, mutate, host_memory_visible=host_visible)
    (y,) = emu.run_model(weights, list(inputs.values()))
    return compare(y, expected, tol, emu)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--attn-opt", required=True)
    ap.add_argument("--attn-compile", required=True)
    ap.add_argument("--mutate", default=None)
    ap.add_argument("--only", default=None,
                    help="run the cases whose name contains this")
    # The case sets other than the examples (CASES): each flag runs its own
    # instead; the first flag given, in this order, wins.
    case_sets = (
        ("onnx", ONNX_CASES,
         "the exported ONNX models instead of the examples"),
        ("exports", EXPORT_CASES,
         "today's exports (test/ONNX/Exports) and their derived KV-cache "
         "steps"),
        ("families", FAMILY_CASES,
         "every checkpoint family of test/Frontend/HF/Inputs at f16"),
        ("dynamic", DYNAMIC_CASES,
         "the examples with dynamic batch/sequence sizes, each compiled "
         "once and run at several sizes"),
    )
    for name, _, text in case_sets:
        ap.add_argument("--" + name, action="store_true", help=text)
    ap.add_argument("--host-memory-visible", action="store_true",
                    help="let kernels read host memory (host memref.globals)"
                    " as if the device could (HMM / ATS)")
    ap.add_argument("--pipeline-options", default="",
                    help="more attn-to-cuda options, e.g. 'chip=sm_80'")
    args = ap.parse_args()
    global PIPELINE_OPTIONS
    PIPELINE_OPTIONS = args.pipeline_options
    tools = {"attn-opt": args.attn_opt, "attn-compile": args.attn_compile}
    chosen = next((cases for name, cases, _ in case_sets
                   if getattr(args, name)), CASES)
    cases = [c for c in chosen if not args.only or args.only in c[0]]
    with tempfile.TemporaryDirectory() as workdir:
        def run_one(case):
            t0 = time.time()
            ok, msg = run_case(tools, case, args.mutate, workdir,
                               args.host_memory_visible)
            return ok, f"{msg} ({time.time() - t0:.1f} s)"
        return run_cases(cases, run_one,
                         (EmulationError, TmaError, DeadlockError),
                         args.mutate)


if __name__ == "__main__":
    sys.exit(main())
