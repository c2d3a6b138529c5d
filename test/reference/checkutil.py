"""Helpers shared by the test scripts that run a compiled model and check
its output (test/ONNX/onnx_check.py, test/ONNX/check_pruned_heads.py,
test/Python/api_check.py, test/Frontend/HF/check_decode_step.py and
check_prefill.py, test/Integration/GPU/Inputs/model_emulation.py).

Only numpy and the standard library are used.
"""

import argparse
import glob
import os
import re
import sys

import numpy as np


def attnc_parser():
    """The options of a script that drives the attnc Python package:
    --src ATTNC_SRC --bin BUILD_BIN --workdir DIR (add more, then parse)."""
    parser = argparse.ArgumentParser()
    for option in ("--src", "--bin", "--workdir"):
        parser.add_argument(option, required=True)
    return parser


def onnx_model_parser():
    """The options of a script that compiles an exported test model:
    MODEL.onnx --attn-compile BIN --workdir DIR (add more, then parse)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    for option in ("--attn-compile", "--workdir"):
        parser.add_argument(option, required=True)
    return parser


def model_inputs(model):
    """(base, {input name: path}) of an exported test model
    Models/<name>[-op<N>].onnx: base is Models/<name>, and each committed
    input is <base>.<input name>.npy, in name order (<base>.ref.npy is the
    reference output, not an input)."""
    base = re.sub(r"(-op\d+)?\.onnx$", "", model)
    inputs = {}
    for path in sorted(glob.glob(glob.escape(base) + ".*.npy")):
        key = path[len(base) + 1:-len(".npy")]
        if key != "ref":
            inputs[key] = path
    return base, inputs


def input_shape_flags(inputs):
    """attn-compile flags fixing each input's dimensions to its .npy's shape."""
    flags = []
    for key, path in inputs.items():
        flags += ["--input-shape", key + "=" + "x".join(map(str, np.load(path).shape))]
    return flags


def import_attnc(src, bin_dir):
    """The attnc package of the source tree `src` (python/attnc), running the
    tools of `bin_dir` (the build under test, not whatever is on PATH)."""
    sys.path.insert(0, os.path.join(src, "python"))
    os.environ["ATTNC_BIN_DIR"] = bin_dir
    import attnc
    return attnc


def attnc_check():
    """For a script taking only attnc_parser's options: (args, the attnc
    package under test), with WORKDIR made."""
    args = attnc_parser().parse_args()
    attnc = import_attnc(args.src, args.bin)
    os.makedirs(args.workdir, exist_ok=True)
    return args, attnc


def checkpoint_builder():
    """For a script checking a checkpoint (attnc_parser's options and
    --checkpoint DIR): (args, the attnc package, build), where
    build(tag, **options) is the checkpoint compiled by attnc.compile with
    `options` into WORKDIR/lib<checkpoint>-<tag>.so and loaded with its
    weights."""
    parser = attnc_parser()
    parser.add_argument("--checkpoint", required=True)
    args = parser.parse_args()
    attnc = import_attnc(args.src, args.bin)
    weights = os.path.join(args.checkpoint, "model.safetensors")
    name = os.path.basename(os.path.normpath(args.checkpoint))

    def build(tag, **options):
        lib = os.path.join(args.workdir, f"lib{name}-{tag}.so")
        return attnc.load(attnc.compile(args.checkpoint, lib, **options),
                          weights=weights)
    return args, attnc, build


def rel_err(y, ref):
    """max|y - ref|, relative to max(1, max|ref|)."""
    return float(np.max(np.abs(y - ref)) / max(1.0, np.max(np.abs(ref))))


def verdict(ok, message):
    """Prints one PASS/FAIL line with `message`; returns the exit status."""
    print(f"{'PASS' if ok else 'FAIL'} {message}")
    return 0 if ok else 1


def load_gpt2(attnc, src, workdir):
    """The tiny GPT-2 checkpoint of the HF tests compiled for batch 2 and 40
    positions and loaded, with its generation fixture (scripts/
    gen_hf_generation.py): (model, prompt, lengths, transformers' 24 greedy
    tokens per row)."""
    hf = os.path.join(src, "test", "Frontend", "HF", "Inputs", "gpt2")
    lib = attnc.compile(hf, os.path.join(workdir, "libgpt2.so"),
                        input_shape={"input_ids": (2, 40)})
    model = attnc.load(lib, weights=os.path.join(hf, "model.safetensors"))
    return (model, np.load(os.path.join(hf, "generate_prompt.npy")),
            np.load(os.path.join(hf, "generate_lengths.npy")),
            np.load(os.path.join(hf, "generate_expected.npy")))
