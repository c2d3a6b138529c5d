"""Helpers shared by the corpus case modules (cases_*.py): byte builders for
.npy and safetensors files and the repository's small example model.

Pure Python (no numpy): the driver may run under any interpreter."""

import json
import os
import struct

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(REPO, "examples")


def read_example(name):
    with open(os.path.join(EXAMPLES, name), "rb") as f:
        return f.read()


def npy(descr, shape, payload, fortran=False, version=(1, 0), header=None,
        magic=b"\x93NUMPY"):
    """A .npy file; `header` replaces the whole header dict text."""
    if header is None:
        shape_text = "(" + "".join("%d, " % d for d in shape).rstrip(" ") + ")"
        if len(shape) > 1:
            shape_text = "(" + ", ".join(str(d) for d in shape) + ")"
        header = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (
            descr, "True" if fortran else "False", shape_text)
    text = header.encode("latin1")
    length_size = 2 if version[0] == 1 else 4
    prefix = len(magic) + 2 + length_size
    total = prefix + len(text) + 1
    pad = (64 - total % 64) % 64
    text = text + b" " * pad + b"\n"
    length = struct.pack("<H" if length_size == 2 else "<I", len(text))
    return magic + bytes(version) + length + text + payload


def int32s(values):
    return struct.pack("<%di" % len(values), *values)


def float32s(values):
    return struct.pack("<%df" % len(values), *values)


def ids_npy(ids, shape=(1, 16)):
    return npy("<i4", shape, int32s(ids))


def safetensors(tensors, metadata=None, header_text=None, pad_header=True):
    """tensors: list of (name, dtype, shape, data bytes) laid out in order, or
    (name, dtype, shape, data bytes, [begin, end]) with explicit offsets (then
    the data section is the concatenation of the data bytes as given)."""
    header = {}
    if metadata is not None:
        header["__metadata__"] = metadata
    data = b""
    for t in tensors:
        name, dtype, shape, payload = t[:4]
        if len(t) > 4:
            offsets = list(t[4])
        else:
            offsets = [len(data), len(data) + len(payload)]
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": offsets}
        data += payload
    text = (header_text if header_text is not None else json.dumps(header)).encode()
    if pad_header:
        text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + data


def split_safetensors(blob):
    """(header dict, data bytes) of a safetensors file."""
    n = struct.unpack("<Q", blob[:8])[0]
    return json.loads(blob[8:8 + n]), blob[8 + n:]


def join_safetensors(header, data):
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + data


# A one-op model with one weight: y = relu(x W^T + b), x [2, 4], W [3, 4].
LINEAR_MLIR = """\
func.func @main(%x: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %w = attn.weight "proj.weight" : tensor<3x4xf32>
  %b = attn.weight "proj.bias" : tensor<3xf32>
  %y = attn.linear %x, %w, %b : (tensor<2x4xf32>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %r = attn.relu %y : tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
"""
