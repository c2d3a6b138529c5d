"""Minimal safetensors / npy I/O for the attnc reference tests.

Implements the safetensors layout from its specification:

    [8 bytes]  N, unsigned little-endian 64-bit header length
    [N bytes]  UTF-8 JSON header:
               {name: {"dtype": "F32", "shape": [...], "data_offsets": [b, e]},
                "__metadata__": {str: str}}          (metadata optional)
               padded with ASCII spaces so that 8 + N is a multiple of 8
    [rest]     raw little-endian, row-major tensor bytes; data_offsets are
               relative to the start of this section.

Only numpy and the standard library are used.
"""

import json
import struct

import numpy as np

__all__ = [
    "write_safetensors", "read_safetensors", "read_safetensors_with_metadata",
    "read_safetensors_header", "f32_to_bf16_bits", "bf16_bits_to_f32",
    "save_npy", "load_npy", "DTYPES",
]

# safetensors dtype tag -> little-endian numpy dtype holding the raw bytes.
# BF16 is carried as its raw uint16 bit pattern.
DTYPES = {
    "F64": np.dtype("<f8"),
    "F32": np.dtype("<f4"),
    "F16": np.dtype("<f2"),
    "BF16": np.dtype("<u2"),
    "I64": np.dtype("<i8"),
    "I32": np.dtype("<i4"),
    "I16": np.dtype("<i2"),
    "I8": np.dtype("i1"),
    "U64": np.dtype("<u8"),
    "U32": np.dtype("<u4"),
    "U16": np.dtype("<u2"),
    "U8": np.dtype("u1"),
    "BOOL": np.dtype("?"),
}

_NP_TO_TAG = {
    np.dtype("float64"): "F64",
    np.dtype("float32"): "F32",
    np.dtype("float16"): "F16",
    np.dtype("int64"): "I64",
    np.dtype("int32"): "I32",
    np.dtype("int16"): "I16",
    np.dtype("int8"): "I8",
    np.dtype("uint64"): "U64",
    np.dtype("uint32"): "U32",
    np.dtype("uint16"): "U16",
    np.dtype("uint8"): "U8",
    np.dtype("bool"): "BOOL",
}

_MAX_HEADER = 100 * 1024 * 1024


# --------------------------------------------------------------------------
# bfloat16 helpers
# --------------------------------------------------------------------------

def f32_to_bf16_bits(x, rounding="nearest"):
    """float array -> uint16 bfloat16 bit patterns.

    rounding='nearest' : round to nearest, ties to even (NaN kept quiet NaN)
    rounding='truncate': drop the low 16 mantissa bits.
    """
    bits = np.ascontiguousarray(np.asarray(x, dtype=np.float32)).view(np.uint32)
    if rounding == "truncate":
        return (bits >> np.uint32(16)).astype(np.uint16)
    if rounding != "nearest":
        raise ValueError("rounding must be 'nearest' or 'truncate'")
    lsb = (bits >> np.uint32(16)) & np.uint32(1)
    with np.errstate(over="ignore"):
        rounded = (bits + np.uint32(0x7FFF) + lsb) >> np.uint32(16)
    isnan = np.isnan(np.asarray(x, dtype=np.float32))
    out = np.where(isnan, (bits >> np.uint32(16)) | np.uint32(0x0040), rounded)
    return out.astype(np.uint16)


def bf16_bits_to_f32(bits):
    """uint16 bfloat16 bit patterns -> float32 (exact)."""
    b = np.asarray(bits, dtype=np.uint16).astype(np.uint32) << np.uint32(16)
    return b.view(np.float32)


# --------------------------------------------------------------------------
# safetensors
# --------------------------------------------------------------------------

def _encode(name, arr, tag):
    """Return (tag, shape, raw little-endian bytes)."""
    arr = np.asarray(arr)
    if tag is None:
        try:
            tag = _NP_TO_TAG[arr.dtype.newbyteorder("=")]
        except KeyError:
            raise TypeError("tensor %r: unsupported dtype %s" % (name, arr.dtype))
    tag = tag.upper()
    if tag not in DTYPES:
        raise ValueError("tensor %r: unsupported safetensors dtype %r" % (name, tag))
    if tag == "BF16":
        if arr.dtype == np.uint16:
            raw = arr  # already bf16 bit patterns
        else:
            raw = f32_to_bf16_bits(arr)
    else:
        raw = arr.astype(DTYPES[tag], copy=False)
    raw = np.ascontiguousarray(raw.astype(DTYPES[tag], copy=False))
    return tag, [int(s) for s in arr.shape], raw.tobytes(order="C")


def write_safetensors(path, tensors, metadata=None, dtypes=None):
    """Write dict name -> np.ndarray to `path` in safetensors format.

    dtypes: optional dict name -> tag ("F32", "F16", "BF16", "I32", "I64",
    ...) to store a tensor in a different dtype than its numpy one.  For
    "BF16" a float array is rounded to nearest-even; a uint16 array is taken
    as raw bf16 bits.  metadata: optional dict str -> str.
    """
    dtypes = dict(dtypes or {})
    header = {}
    chunks = []
    offset = 0
    for name in sorted(tensors):
        if name == "__metadata__":
            raise ValueError("'__metadata__' is reserved")
        tag, shape, data = _encode(name, tensors[name], dtypes.get(name))
        header[name] = {"dtype": tag, "shape": shape,
                        "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    if metadata:
        md = {}
        for k, v in metadata.items():
            if not isinstance(k, str) or not isinstance(v, str):
                raise TypeError("metadata must map str -> str")
            md[k] = v
        header = dict([("__metadata__", md)] + list(header.items()))
    hbytes = json.dumps(header, separators=(",", ":")).encode("utf-8")
    pad = (-(8 + len(hbytes))) % 8
    hbytes += b" " * pad
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hbytes)))
        f.write(hbytes)
        for c in chunks:
            f.write(c)


def read_safetensors_header(path):
    """Return (header dict, data section start offset in the file)."""
    with open(path, "rb") as f:
        raw = f.read(8)
        if len(raw) != 8:
            raise ValueError("%s: file too short for safetensors" % path)
        (n,) = struct.unpack("<Q", raw)
        if n > _MAX_HEADER:
            raise ValueError("%s: header length %d too large" % (path, n))
        hbytes = f.read(n)
        if len(hbytes) != n:
            raise ValueError("%s: truncated header" % path)
    header = json.loads(hbytes.decode("utf-8"))
    if not isinstance(header, dict):
        raise ValueError("%s: header is not a JSON object" % path)
    return header, 8 + n


def read_safetensors_with_metadata(path, bf16="f32"):
    """Return (dict name -> np.ndarray, metadata dict or {}).

    BF16 tensors come back as float32 (bf16='f32', exact widening) or as raw
    uint16 bit patterns (bf16='bits').
    """
    header, start = read_safetensors_header(path)
    with open(path, "rb") as f:
        f.seek(start)
        data = f.read()
    metadata = header.pop("__metadata__", None) or {}
    out = {}
    # validate offsets: contiguous, non-overlapping, in bounds
    spans = []
    for name, info in header.items():
        tag = info["dtype"].upper()
        if tag not in DTYPES:
            raise ValueError("%s: tensor %r has unsupported dtype %r"
                             % (path, name, tag))
        shape = tuple(int(s) for s in info["shape"])
        b, e = (int(v) for v in info["data_offsets"])
        dt = DTYPES[tag]
        count = int(np.prod(shape, dtype=np.int64)) if shape else 1
        if not (0 <= b <= e <= len(data)):
            raise ValueError("%s: tensor %r offsets [%d,%d) out of bounds"
                             % (path, name, b, e))
        if e - b != count * dt.itemsize:
            raise ValueError("%s: tensor %r has %d bytes, expected %d"
                             % (path, name, e - b, count * dt.itemsize))
        spans.append((b, e, name))
        arr = np.frombuffer(data, dtype=dt, count=count, offset=b).reshape(shape)
        arr = arr.astype(dt.newbyteorder("="), copy=True)
        if tag == "BF16" and bf16 == "f32":
            arr = bf16_bits_to_f32(arr)
        out[name] = arr
    spans.sort()
    pos = 0
    for b, e, name in spans:
        if b != pos:
            raise ValueError("%s: tensor %r data not contiguous (gap/overlap)"
                             % (path, name))
        pos = e
    if pos != len(data):
        raise ValueError("%s: %d trailing bytes after tensor data"
                         % (path, len(data) - pos))
    return out, metadata


def read_safetensors(path, bf16="f32"):
    """Return dict name -> np.ndarray (see read_safetensors_with_metadata)."""
    return read_safetensors_with_metadata(path, bf16=bf16)[0]


# --------------------------------------------------------------------------
# npy
# --------------------------------------------------------------------------

def save_npy(path, arr):
    np.save(path, np.asarray(arr), allow_pickle=False)


def load_npy(path):
    return np.load(path, allow_pickle=False)
