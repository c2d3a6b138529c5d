"""The host side of the whole-model emulator (gpu_model_emulator.py): the
memory model (buffers and strided views), the parsed module with its
manifest, and the binding of safetensors weights to the manifest's weight
records (views, concatenations, gathers, transposes, conversions).
"""

import json
import re
import struct

import numpy as np

from gpuemu.core import init_shared_state
from gpuemu.ir import parse_ops, sym_name, split_top
from gpuemu.numerics import f32_to_bf16_bits, to_f64

NP_OF = {"f32": np.float32, "f16": np.float16, "bf16": np.uint16,
         "i32": np.int32, "i64": np.int64, "i8": np.int8, "i1": np.bool_,
         "index": np.int64}


# ---------------------------------------------------------------------------
# Types.

def scalar_or_lanes(v):
    """A size as an int when uniform, else the per-lane int64 array."""
    v = np.asarray(v, np.int64)
    if v.ndim == 0:
        return int(v)
    return int(v[0]) if (v == v[0]).all() else v


def reassociation(op):
    """The reassociation groups of an expand/collapse_shape."""
    m = re.search(r"reassociation = \[(.*?)\]\]", op.text)
    return [[int(v) for v in g.split(",")]
            for g in re.findall(r"\[([\d, ]+)\]", m.group(1) + "]")]


def contiguous(shape, strides):
    """Whether a view of these strides is one dense row-major range (sizes
    of 1 may have any stride)."""
    want = 1
    for d, st in zip(reversed(shape), reversed(strides)):
        if d != 1 and st != want:
            return False
        want *= d
    return True


# ---------------------------------------------------------------------------
# Memory.

class Buffer:
    """One allocation: a flat array plus, for shared memory, race state."""

    def __init__(self, flat, elem, kind, name=""):
        self.flat = flat
        self.elem = elem
        self.kind = kind  # global, shared, private
        self.name = name
        self.shared = kind == "shared"
        if self.shared:
            init_shared_state(self, flat.size)


class View:
    """A memref: buffer, offset (int, or one per lane), shape, strides."""

    def __init__(self, buf, offset, shape, strides):
        self.buf = buf
        self.offset = offset
        self.shape = list(shape)
        self.strides = list(strides)

    # The view interface of gpuemu.core.
    shared = property(lambda self: self.buf.shared)
    elem = property(lambda self: self.buf.elem)
    flat = property(lambda self: self.buf.flat)
    itemsize = property(lambda self: self.buf.flat.itemsize)

    def array(self):
        """The view as a numpy array (host side, uniform offset)."""
        assert np.ndim(self.offset) == 0
        return np.lib.stride_tricks.as_strided(
            self.buf.flat[int(self.offset):], self.shape,
            [s * self.buf.flat.itemsize for s in self.strides])


def fill_value(elem):
    if elem == "bf16":
        return 0x7FC1  # a NaN
    if elem in ("f32", "f16"):
        return np.nan
    if elem == "i1":
        return False
    return np.iinfo(NP_OF[elem]).max  # an index no access survives


def new_buffer(shape, elem, kind, copies=1, name=""):
    size = int(np.prod(shape, dtype=np.int64)) if shape else 1
    flat = np.full(size * copies, fill_value(elem), NP_OF[elem])
    return Buffer(flat, elem, kind, name), size


# ---------------------------------------------------------------------------
# The module.

class Module:
    def __init__(self, text):
        lines = text.splitlines()
        start = next(i for i, l in enumerate(lines)
                     if l.strip().startswith('"builtin.module"'))
        ops, _ = parse_ops(lines, start)
        self.top = ops[0]
        self.funcs = {}
        self.kernels = {}
        for op in self.top.regions[0][1]:
            if op.name == "func.func":
                self.funcs[sym_name(op)] = op
            elif op.name == "gpu.module":
                mod = sym_name(op)
                for k in op.regions[0][1]:
                    if k.name == "gpu.func":
                        self.kernels[f"{mod}::{sym_name(k)}"] = k
        # The kernels' block headers (parse_ops keeps argument names only):
        # workgroup attributions are typed there.
        headers = [lines[i + 1].strip() for i, l in enumerate(lines)
                   if l.strip().startswith('"gpu.func"')]
        for k, h in zip([k for k in self.kernels.values()], headers):
            k.block_header = h
        self.globals = {sym_name(op): op for op in self.top.regions[0][1]
                        if op.name == "memref.global"}
        self.manifest = parse_manifest(self.top.text)
        m = re.search(r"attn\.entry = @(\w+)", self.top.text)
        self.entry = m.group(1)


def split_attr(s):
    """Splits an attribute list on commas outside brackets and strings."""
    return split_top(s, braces=True)


def parse_manifest(text):
    m = re.search(r"attn\.manifest = \[", text)
    assert m, "no attn.manifest on the module"
    i, depth = m.end(), 1
    j = i
    while depth:
        c = text[j]
        depth += c == "["
        depth -= c == "]"
        j += 1
    records = []
    for rec in split_attr(text[i:j - 1]):
        rec = rec.strip()
        assert rec[0] == "{" and rec[-1] == "}", rec
        fields = {}
        for kv in split_attr(rec[1:-1]):
            if " = " in kv:
                k, v = kv.split(" = ", 1)
            else:
                k, v = kv, "unit"
            fields[k.strip()] = v.strip()
        r = {"kind": json.loads(fields["kind"]),
             "name": json.loads(fields["name"])}
        tm = re.fullmatch(r"tensor<((?:(?:\d+|\?)x)*)(\w+)>",
                          fields["type"])
        r["shape"] = [None if d == "?" else int(d)
                      for d in tm.group(1).split("x") if d]
        # Per dynamic size: the (input, axis) it equals, or (-1, -1) where
        # the caller chooses it.
        r["dims_from"] = []
        if "dims_from" in fields:
            v = [int(x) for x in re.search(
                r"array<i64: ([-\d, ]*)>", fields["dims_from"]).group(1)
                .split(",")]
            r["dims_from"] = list(zip(v[0::2], v[1::2]))
        r["dtype"] = tm.group(2)
        if "concat_axis" in fields:
            r["concat_axis"] = int(fields["concat_axis"].split(":")[0])
            r["concat_names"] = [json.loads(s) for s in
                                 split_attr(fields["concat_names"][1:-1])]
        if "gather_axis" in fields:
            r["gather_axis"] = int(fields["gather_axis"].split(":")[0])
            r["gather_extent"] = int(fields["gather_extent"].split(":")[0])
            rg = re.search(r"array<i64: ([-\d, ]*)>", fields["gather_ranges"])
            v = [int(x) for x in rg.group(1).split(",")]
            r["gather_ranges"] = list(zip(v[0::2], v[1::2]))
        r["transpose"] = "transpose" in fields
        r["convert"] = "convert" in fields
        records.append(r)
    return records


# ---------------------------------------------------------------------------
# Weights: the runtime's binding rules (include/attnc/Runtime/
# ManifestSchema.h), from the .safetensors file.

ST_DTYPES = {"F32": ("f32", np.dtype("<f4")), "F16": ("f16", np.dtype("<f2")),
             "BF16": ("bf16", np.dtype("<u2")), "I32": ("i32", np.dtype("<i4")),
             "I64": ("i64", np.dtype("<i8"))}


def read_safetensors_raw(path):
    """name -> (elem, array as stored: bf16 as uint16 bits)."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    base = 8 + n
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        elem, dt = ST_DTYPES[info["dtype"]]
        b, e = info["data_offsets"]
        out[name] = (elem, np.frombuffer(data[base + b:base + e], dt)
                     .reshape(info["shape"]).copy())
    return out


def from_f64(x, elem):
    """Rounds to nearest even into `elem`'s storage (bf16: uint16 bits)."""
    if elem == "bf16":
        return f32_to_bf16_bits(np.asarray(x, np.float32))
    return np.asarray(x).astype(NP_OF[elem])


def bind_weight(tensors, r):
    """The buffer the runtime binds for weight record `r`."""
    dims = list(r["shape"])
    if r["transpose"]:
        dims = dims[::-1]

    def get(name):
        elem, arr = tensors[name]
        if not r["convert"]:
            assert elem == r["dtype"], \
                f"weight {name}: file holds {elem}, the record wants {r['dtype']}"
        return elem, arr

    if "concat_names" in r:
        parts = [get(n) for n in r["concat_names"]]
        elems = {e for e, _ in parts}
        assert len(elems) == 1, "concat of mixed dtypes"
        elem = elems.pop()
        a = np.concatenate([p for _, p in parts], axis=r["concat_axis"])
    else:
        elem, a = get(r["name"])
    if "gather_axis" in r:
        ax = r["gather_axis"]
        assert a.shape[ax] == r["gather_extent"]
        a = np.concatenate([np.take(a, range(s, s + n), axis=ax)
                            for s, n in r["gather_ranges"]], axis=ax)
    assert list(a.shape) == dims, (r["name"], a.shape, dims)
    if r["transpose"]:
        a = np.ascontiguousarray(a.T)
    if r["convert"] and elem != r["dtype"]:
        a = from_f64(to_f64(a, elem), r["dtype"])
    return np.ascontiguousarray(a)
