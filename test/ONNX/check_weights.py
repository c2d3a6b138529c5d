#!/usr/bin/python3
"""Checks a safetensors file written by attn-import against the ONNX model's
initializers: every tensor is an initializer of the same name, shape and
values (bit-exact float32). Checks the layout that lets the runtime read
weights in place: the tensors tile the data without gaps, the data starts at
a multiple of 64 bytes, and every tensor whose size is a multiple of 64
bytes comes before the others, so that it starts 64-byte aligned. Prints
`OK N weights match their initializers, A of them 64-byte aligned, U not`.

    check_weights.py MODEL.onnx WEIGHTS.safetensors

Reads the protobuf with Debian's python3-onnx (numpy_helper)."""

import json
import struct
import sys

import numpy as np
import onnx
from onnx import numpy_helper


def main():
    model = onnx.load(sys.argv[1])
    inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    with open(sys.argv[2], "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    data = blob[8 + n:]
    if (8 + n) % 64:
        sys.exit(f"FAIL the data starts at byte {8 + n}, not a multiple of 64")
    spans = sorted((info["data_offsets"], name) for name, info in header.items()
                   if name != "__metadata__")
    at, unaligned = 0, None
    aligned = 0
    for (begin, end), name in spans:
        if begin != at:
            sys.exit(f"FAIL {name}: starts at {begin}, not at {at}")
        if (end - begin) % 64 == 0:
            if unaligned is not None:
                sys.exit(f"FAIL {name}: comes after {unaligned}, whose size "
                         "is not a multiple of 64 bytes")
            aligned += 1
        elif unaligned is None:
            unaligned = name
        at = end
    if at != len(data):
        sys.exit(f"FAIL the tensors end at {at}, the file's data at {len(data)}")
    count = 0
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if name not in inits:
            sys.exit(f"FAIL {name}: no initializer of that name")
        begin, end = info["data_offsets"]
        got = np.frombuffer(data[begin:end], dtype="<f4").reshape(info["shape"])
        want = inits[name]
        if info["dtype"] != "F32" or got.shape != want.shape or \
                not np.array_equal(got, want.astype(np.float32)):
            sys.exit(f"FAIL {name}: differs from the initializer")
        count += 1
    print(f"OK {count} weights match their initializers, {aligned} of them "
          f"64-byte aligned, {count - aligned} not")


if __name__ == "__main__":
    main()
