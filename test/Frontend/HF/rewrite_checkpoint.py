#!/usr/bin/env python3
"""Rewrites a checkpoint directory the ways other savers lay it out:
split into shards with a model.safetensors.index.json, as transformers'
save_pretrained does with max_shard_size (--shards N), and/or with the base
model's tensor names (--strip-prefix, e.g. GPT-2 hub checkpoints saved from
GPT2Model: "wte.weight" instead of "transformer.wte.weight"). No
safetensors package needed: the format is 8 bytes of header length, a JSON
header, then the data."""

import argparse
import json
import os
import shutil
import struct

import numpy as np


def read(path):
    with open(path, "rb") as f:
        blob = f.read()
    n = struct.unpack("<Q", blob[:8])[0]
    header = json.loads(blob[8:8 + n])
    header.pop("__metadata__", None)
    data = blob[8 + n:]
    return {k: (v["dtype"], v["shape"], data[v["data_offsets"][0]:v["data_offsets"][1]])
            for k, v in header.items()}


def write(path, tensors):
    header, chunks, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(chunks))


def convert(tensor, dtype):
    """An F32 tensor in F16 or BF16 (round to nearest even)."""
    _, shape, raw = tensor
    x = np.frombuffer(raw, dtype="<f4")
    if dtype == "F16":
        return dtype, shape, x.astype("<f2").tobytes()
    bits = x.view("<u4").astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return dtype, shape, rounded.astype("<u2").tobytes()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--shards", type=int, default=1)
    ap.add_argument("--strip-prefix", default="")
    ap.add_argument("--dtype", choices=("F16", "BF16"))
    args = ap.parse_args()
    os.makedirs(args.dst, exist_ok=True)
    shutil.copy(os.path.join(args.src, "config.json"), args.dst)
    tensors = {}
    for name, t in read(os.path.join(args.src, "model.safetensors")).items():
        if args.strip_prefix and name.startswith(args.strip_prefix):
            name = name[len(args.strip_prefix):]
        if args.dtype and t[0] == "F32":
            t = convert(t, args.dtype)
        tensors[name] = t
    if args.shards == 1:
        write(os.path.join(args.dst, "model.safetensors"), tensors)
        return
    names = sorted(tensors)
    weight_map, total = {}, 0
    for s in range(args.shards):
        part = names[s::args.shards]
        file = f"model-{s + 1:05d}-of-{args.shards:05d}.safetensors"
        write(os.path.join(args.dst, file), {n: tensors[n] for n in part})
        for n in part:
            weight_map[n] = file
            total += len(tensors[n][2])
    with open(os.path.join(args.dst, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=2)


if __name__ == "__main__":
    main()
