"""Writes good and deliberately broken weights / input files for
Inputs/linear-relu.mlir (weights proj.weight f32 [3, 4] and proj.bias f32 [3],
input f32 (2, 4)) into DIR, using test/reference/tensorio.py:

  good.safetensors          both weights, correct
  truncated.safetensors     good.safetensors cut in the middle of its data
  short-header.safetensors  good.safetensors cut inside its JSON header
  offsets.safetensors       the header claims proj.bias ends at byte 4096 of
                            the data section, which is far beyond the file
  bad-json.safetensors      a header that is not valid JSON
  wrong-shape.safetensors   proj.weight is [4, 3] instead of [3, 4]
  missing.safetensors       proj.bias is absent
  wrong-dtype.safetensors   proj.weight stored as F16 instead of F32
  x.npy                     the input, float32 (2, 4)
  x-wrong-shape.npy         float32 (4, 2)
  x-wrong-dtype.npy         float64 (2, 4)
  not-npy.npy               a text file
  expected.npy              relu(x @ W^T + b) for good.safetensors and x.npy

    make_bad_files.py DIR
"""

import json
import os
import struct
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "reference"))
import tensorio  # noqa: E402


def write_raw(path, header, data):
    """A safetensors file with this header (dict or raw bytes) and data."""
    hbytes = header if isinstance(header, bytes) else json.dumps(header).encode()
    hbytes += b" " * ((-(8 + len(hbytes))) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hbytes)) + hbytes + data)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    p = lambda name: os.path.join(out, name)  # noqa: E731
    rng = np.random.default_rng(0)
    w = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal((3,)).astype(np.float32)
    x = rng.standard_normal((2, 4)).astype(np.float32)

    tensorio.write_safetensors(p("good.safetensors"), {"proj.weight": w, "proj.bias": b})
    good = open(p("good.safetensors"), "rb").read()
    header, start = tensorio.read_safetensors_header(p("good.safetensors"))
    data = good[start:]
    assert len(data) == 60, len(data)

    with open(p("truncated.safetensors"), "wb") as f:
        f.write(good[:start + 30])
    with open(p("short-header.safetensors"), "wb") as f:
        f.write(good[:start // 2])

    lying = json.loads(json.dumps(header))
    b0 = lying["proj.bias"]["data_offsets"][0]
    lying["proj.bias"]["data_offsets"] = [b0, 4096]
    write_raw(p("offsets.safetensors"), lying, data)

    write_raw(p("bad-json.safetensors"),
              b'{"proj.weight": {"dtype": "F32", "shape": [3, 4], "data_offsets": [0, 48]',
              data)

    tensorio.write_safetensors(p("wrong-shape.safetensors"),
                               {"proj.weight": w.T.copy(), "proj.bias": b})
    tensorio.write_safetensors(p("missing.safetensors"), {"proj.weight": w})
    tensorio.write_safetensors(p("wrong-dtype.safetensors"),
                               {"proj.weight": w, "proj.bias": b},
                               dtypes={"proj.weight": "F16"})

    tensorio.save_npy(p("x.npy"), x)
    tensorio.save_npy(p("x-wrong-shape.npy"), x.reshape(4, 2))
    tensorio.save_npy(p("x-wrong-dtype.npy"), x.astype(np.float64))
    with open(p("not-npy.npy"), "w") as f:
        f.write("0.1 0.2 0.3 0.4\n0.5 0.6 0.7 0.8\n")
    tensorio.save_npy(p("expected.npy"), np.maximum(x @ w.T + b, 0).astype(np.float32))
    print("data section", len(data), "bytes; file", len(good), "bytes")


if __name__ == "__main__":
    main()
