"""Malformed and unsupported ONNX models for attn-import and attn-compile:
truncated protobufs, external data that is missing, short or outside the
model's directory, symbolic dimensions fixed wrongly or used
inconsistently, reshapes the symbolic folding cannot resolve,
unsupported ops, attributes and opsets, graphs that use undefined values.
Each is one located error (`model.onnx: error: ...` or, for a node,
`model.onnx:<node name>: error: ... (<op type>, opset <n>)`), a non-zero
exit and nothing written; the valid variants write model.mlir and
model.safetensors.

The models are built here with a small protobuf encoder (pure Python, as
the driver needs), or cut from the exported test models in test/ONNX/Models.
"""

import os
import struct

from corpus_lib import REPO, float32s, npy

MODELS = os.path.join(REPO, "test", "ONNX", "Models")

FLOAT, INT64, BOOL, DOUBLE, STRING = 1, 7, 9, 11, 8


# --- a minimal protobuf encoder (onnx.proto field numbers) -------------------

def varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field_varint(num, value):
    return varint(num << 3) + varint(value)


def field_bytes(num, payload):
    if isinstance(payload, str):
        payload = payload.encode()
    return varint((num << 3) | 2) + varint(len(payload)) + payload


def field_float(num, value):
    return varint((num << 3) | 5) + struct.pack("<f", value)


def dim(d):
    return field_varint(1, d) if isinstance(d, int) else field_bytes(2, d)


def value_info(name, elem_type, shape):
    shape_proto = b"".join(field_bytes(1, dim(d)) for d in shape)
    tensor_type = field_varint(1, elem_type) + field_bytes(2, shape_proto)
    return field_bytes(1, name) + field_bytes(2, field_bytes(1, tensor_type))


def tensor(name, dims, values=None, elem_type=FLOAT, raw=None, external=None):
    out = b"".join(field_varint(1, d) for d in dims)
    out += field_varint(2, elem_type)
    out += field_bytes(8, name)
    if raw is not None:
        out += field_bytes(9, raw)
    elif external is not None:
        for key, value in external.items():
            out += field_bytes(13, field_bytes(1, key) + field_bytes(2, value))
        out += field_varint(14, 1)  # data_location = EXTERNAL
    elif values is not None:
        if elem_type == FLOAT:
            out += field_bytes(4, struct.pack("<%df" % len(values), *values))
        else:
            out += field_bytes(7, b"".join(varint(v) for v in values))
    return out


def attr_int(name, value):
    return field_bytes(1, name) + field_varint(3, value) + field_varint(20, 2)


def attr_ints(name, values):
    return (field_bytes(1, name) + b"".join(field_varint(8, v) for v in values)
            + field_varint(20, 7))


def attr_string(name, value):
    return field_bytes(1, name) + field_bytes(4, value) + field_varint(20, 3)


def attr_float(name, value):
    return field_bytes(1, name) + field_float(2, value) + field_varint(20, 1)


def node(op, inputs, outputs, name="", attrs=(), domain=None):
    out = b"".join(field_bytes(1, i) for i in inputs)
    out += b"".join(field_bytes(2, o) for o in outputs)
    if name:
        out += field_bytes(3, name)
    out += field_bytes(4, op)
    out += b"".join(field_bytes(5, a) for a in attrs)
    if domain is not None:
        out += field_bytes(7, domain)
    return out


def model(nodes, inputs, outputs, initializers=(), opset=17, ir_version=8):
    graph = b"".join(field_bytes(1, n) for n in nodes)
    graph += field_bytes(2, "g")
    graph += b"".join(field_bytes(5, t) for t in initializers)
    graph += b"".join(field_bytes(11, v) for v in inputs)
    graph += b"".join(field_bytes(12, v) for v in outputs)
    out = field_varint(1, ir_version)
    out += field_bytes(8, field_bytes(1, "") + field_varint(2, opset))
    out += field_bytes(7, graph)
    return out


def floats(n, scale=0.01):
    return [scale * (i % 7 - 3) for i in range(n)]


def raw_floats(values):
    return struct.pack("<%df" % len(values), *values)


def read_model(name):
    with open(os.path.join(MODELS, name), "rb") as f:
        return f.read()


# --- the cases ---------------------------------------------------------------

IMPORT = ["{attn-import}", "model.onnx", "-o", "model.mlir"]
NOTHING = ["model.mlir", "model.safetensors"]


def error_case(name, files, extra, stderr, cmd=None):
    return {
        "name": name,
        "files": files,
        "cmd": (cmd or IMPORT) + extra,
        "exit": "nonzero",
        "stderr": stderr,
        "absent": NOTHING if cmd is None else [],
    }


def add_model(weight_tensor, x_shape=(2, 16), opset=17):
    """x + w with a 32-element weight initializer `w`."""
    return model([node("Add", ["x", "w"], ["y"], name="/add")],
                 [value_info("x", FLOAT, list(x_shape))],
                 [value_info("y", FLOAT, list(x_shape))],
                 [weight_tensor], opset=opset)


def cases():
    out = []
    w32 = tensor("w", [2, 16], floats(32))

    # Valid baselines: they must import (so the errors below are about the
    # one thing each changes).
    out.append({"name": "valid-add", "files": {"model.onnx": add_model(w32)},
                "cmd": IMPORT, "exit": 0,
                "outputs": ["model.mlir", "model.safetensors"]})
    ext = tensor("w", [2, 16], external={"location": "weights.bin"})
    out.append({"name": "valid-external-data",
                "files": {"model.onnx": add_model(ext),
                          "weights.bin": raw_floats(floats(32))},
                "cmd": IMPORT, "exit": 0,
                "outputs": ["model.mlir", "model.safetensors"]})
    ext_off = tensor("w", [2, 16], external={"location": "weights.bin",
                                             "offset": "64", "length": "128"})
    out.append({"name": "valid-external-data-offset",
                "files": {"model.onnx": add_model(ext_off),
                          "weights.bin": b"\0" * 64 + raw_floats(floats(32))},
                "cmd": IMPORT, "exit": 0,
                "outputs": ["model.mlir", "model.safetensors"]})
    real = read_model("encoder_postln_relu-op17.onnx")
    out.append({"name": "valid-exported-encoder",
                "files": {"model.onnx": real},
                "cmd": IMPORT + ["--input-shape", "x=1x8x32"], "exit": 0,
                "outputs": ["model.mlir", "model.safetensors"]})

    # Not a model.
    for n in (0, 1, 7, 100, len(real) // 2, len(real) - 1):
        out.append(error_case(
            "truncated-encoder-%d" % n, {"model.onnx": real[:n]},
            ["--input-shape", "x=1x8x32"],
            [r"^model\.onnx: error: (not a valid ONNX model|ONNX checker)"]))
    out.append(error_case("text-file", {"model.onnx": "func.func @main()"},
                          [], [r"^model\.onnx: error: not a valid ONNX model"]))
    out.append(error_case("missing-model", {}, [],
                          [r"model\.onnx: error: cannot open"]))
    out.append({"name": "directory-as-model", "dirs": ["model.onnx"],
                "cmd": IMPORT, "exit": "nonzero",
                "stderr": [r"model\.onnx: error: (not a regular file|cannot open)"],
                "absent": NOTHING})
    out.append({"name": "fifo-as-model", "fifos": ["model.onnx"],
                "cmd": IMPORT, "exit": "nonzero", "timeout": 20,
                "stderr": [r"model\.onnx: error: not a regular file"],
                "absent": NOTHING})

    # External data.
    out.append(error_case(
        "external-data-missing", {"model.onnx": add_model(ext)}, [],
        [r"^model\.onnx: error: initializer 'w': cannot open external data "
         r"'\./weights\.bin'"]))
    out.append(error_case(
        "external-data-short",
        {"model.onnx": add_model(ext), "weights.bin": raw_floats(floats(31))},
        [], [r"^model\.onnx: error: initializer 'w' holds 31 values but its "
             r"dims need 32"]))
    out.append(error_case(
        "external-data-offset-past-end",
        {"model.onnx": add_model(ext_off), "weights.bin": b"\0" * 100},
        [], [r"external data '\./weights\.bin' holds 100 bytes, but the "
             r"tensor's data is at offset 64, length 128"]))
    for loc in ("../weights.bin", "/etc/passwd", "sub/../../x.bin"):
        t = tensor("w", [2, 16], external={"location": loc})
        out.append(error_case(
            "external-data-outside-" + loc.replace("/", "_").replace(".", "d"),
            {"model.onnx": add_model(t)}, [],
            [r"external data location '.*' is not a path inside the model's "
             r"directory"]))
    t = tensor("w", [2, 16], external={"offset": "0"})
    out.append(error_case("external-data-no-location",
                          {"model.onnx": add_model(t)}, [],
                          [r"has external data without a location"]))
    t = tensor("w", [2, 16], external={"location": "weights.bin",
                                       "offset": "x"})
    out.append(error_case("external-data-bad-offset",
                          {"model.onnx": add_model(t),
                           "weights.bin": raw_floats(floats(32))}, [],
                          [r"external data offset 'x' is not a number"]))
    out.append({"name": "external-data-directory",
                "files": {"model.onnx": add_model(ext)},
                "dirs": ["weights.bin"], "cmd": IMPORT, "exit": "nonzero",
                "stderr": [r"external data '\./weights\.bin' is not a regular "
                           r"file"], "absent": NOTHING})
    out.append({"name": "external-data-fifo",
                "files": {"model.onnx": add_model(ext)},
                "fifos": ["weights.bin"], "cmd": IMPORT, "exit": "nonzero",
                "timeout": 20,
                "stderr": [r"external data '\./weights\.bin' is not a regular "
                           r"file"], "absent": NOTHING})

    # Initializer data that does not match its dims.
    out.append(error_case(
        "initializer-too-few-floats",
        {"model.onnx": add_model(tensor("w", [2, 16], floats(20)))}, [],
        [r"initializer 'w' holds 20 values but its dims need 32"]))
    out.append(error_case(
        "initializer-raw-too-long",
        {"model.onnx": add_model(tensor("w", [2, 16],
                                        raw=raw_floats(floats(33))))}, [],
        [r"initializer 'w' holds 33 values but its dims need 32"]))
    out.append(error_case(
        "initializer-string",
        {"model.onnx": add_model(tensor("w", [2, 16], elem_type=STRING))}, [],
        [r"error: (ONNX checker|.*(string|data type))"]))
    out.append(error_case(
        "weight-name-with-space",
        {"model.onnx": model([node("Add", ["x", "w b"], ["y"], name="/add")],
                             [value_info("x", FLOAT, [2, 16])],
                             [value_info("y", FLOAT, [2, 16])],
                             [tensor("w b", [2, 16], floats(32))])}, [],
        [r"initializer 'w b' has whitespace"]))

    # Symbolic dimensions and --input-shape.
    sym = model([node("Relu", ["x"], ["y"], name="/relu")],
                [value_info("x", FLOAT, ["batch", "sequence", 16])],
                [value_info("y", FLOAT, ["batch", "sequence", 16])])
    # Unfixed symbolic dims stay dynamic.
    out.append({"name": "symbolic-dims-dynamic", "files": {"model.onnx": sym},
                "cmd": IMPORT, "exit": 0,
                "outputs": ["model.mlir", "model.safetensors"]})
    out.append({"name": "symbolic-dims-partly-fixed",
                "files": {"model.onnx": sym},
                "cmd": IMPORT + ["--input-shape", "x=2x?x16"], "exit": 0,
                "outputs": ["model.mlir", "model.safetensors"]})
    # Two dim_params that the graph combines ([batch, sequence] +
    # [batch, other], as exporters name a mask's length apart from the
    # sequence): taken as one size, checked at run time. Equal sizes run;
    # different ones are refused when the inputs are bound (the runtime
    # reads the check), writing no output.
    two = model([node("Add", ["x", "y"], ["z"], name="/add")],
                [value_info("x", FLOAT, ["batch", "sequence", 16]),
                 value_info("y", FLOAT, ["batch", "other", 16])],
                [value_info("z", FLOAT, ["batch", "sequence", 16])])
    out.append({"name": "symbolic-dims-unified", "files": {"model.onnx": two},
                "cmd": IMPORT, "exit": 0,
                "outputs": ["model.mlir", "model.safetensors"]})
    run_two = ("{attn-compile} -q model.onnx -o m && "
               "exec ./m --input x=x.npy --input y=%s --output z.npy")
    for name, y, ok in (("symbolic-dims-unified-run", "y3.npy", True),
                        ("symbolic-dims-unified-mismatch", "y4.npy", False)):
        case = {"name": name,
                "files": {"model.onnx": two,
                          "x.npy": npy("<f4", (1, 3, 16),
                                       float32s([0.5] * 48)),
                          "y3.npy": npy("<f4", (1, 3, 16),
                                        float32s([1.0] * 48)),
                          "y4.npy": npy("<f4", (1, 4, 16),
                                        float32s([1.0] * 64))},
                "cmd": ["/bin/sh", "-c", run_two % y]}
        if ok:
            case.update({"exit": 0,
                         "outputs": ["m", "m.safetensors", "z.npy"]})
        else:
            case.update({"exit": "nonzero",
                         "stderr": [r"input 1 'y' dimension 1 is 4 but "
                                    r"input 0 'x' dimension 1 is 3; the model "
                                    r"needs them equal"],
                         "outputs": ["m", "m.safetensors"],
                         "absent": ["z.npy"]})
        out.append(case)
    shared = model([node("Add", ["x", "y"], ["z"], name="/add")],
                   [value_info("x", FLOAT, ["batch", "sequence", 16]),
                    value_info("y", FLOAT, ["batch", "sequence", 16])],
                   [value_info("z", FLOAT, ["batch", "sequence", 16])])
    out.append(error_case(
        "symbolic-dims-fixed-twice-differently", {"model.onnx": shared},
        ["--input-shape", "x=2x8x16", "--input-shape", "y=2x9x16"],
        [r"^model\.onnx: error: --input-shape gives the symbolic dimension "
         r"'sequence' as 9 for 'y' but as 8 for 'x'$"]))
    # Reshapes the symbolic folding cannot resolve: a -1 that is not a
    # whole multiple, a target whose element count differs.
    def reshape_model(target, name="/reshape"):
        return model([node("Reshape", ["x", "shape"], ["y"], name=name)],
                     [value_info("x", FLOAT, ["batch", "sequence", 16])],
                     [value_info("y", FLOAT, ["d"] * len(target))],
                     [tensor("shape", [len(target)], target,
                             elem_type=INT64)])
    out.append(error_case(
        "symbolic-reshape-unresolved", {"model.onnx": reshape_model([-1, 7])},
        [], [r"^model\.onnx:/reshape: error: cannot resolve the -1 of the "
             r"shape \[-1, 7\] for an input of shape \[batch, sequence, 16\]"
             r"; fix the symbolic dimensions with --input-shape name=AxB\.\.\. "
             r"\(Reshape, opset 17\)$"]))
    out.append(error_case(
        "symbolic-reshape-count", {"model.onnx": reshape_model([2, 8, 16])},
        [], [r"^model\.onnx:/reshape: error: cannot show that \[batch, "
             r"sequence, 16\] \(16\*batch\*sequence elements\) reshapes to "
             r"\[2, 8, 16\] \(256 elements\); fix the symbolic dimensions"]))
    # Shape arithmetic that does not fold: Shape -> Gather -> Div by 3.
    shape_div = model(
        [node("Shape", ["x"], ["s"], name="/shape"),
         node("Gather", ["s", "one"], ["n"], name="/gather",
              attrs=[attr_int("axis", 0)]),
         node("Div", ["n", "three"], ["m"], name="/div"),
         node("Unsqueeze", ["m", "zero"], ["mm"], name="/unsqueeze"),
         node("Concat", ["mm", "minus1"], ["target"], name="/concat",
              attrs=[attr_int("axis", 0)]),
         node("Reshape", ["x", "target"], ["y"], name="/reshape")],
        [value_info("x", FLOAT, ["batch", "sequence", 16])],
        [value_info("y", FLOAT, ["a", "b"])],
        [tensor("one", [], [1], elem_type=INT64),
         tensor("three", [], [3], elem_type=INT64),
         tensor("zero", [1], [0], elem_type=INT64),
         tensor("minus1", [1], [-1], elem_type=INT64)])
    out.append(error_case(
        "symbolic-div-inexact", {"model.onnx": shape_div}, [],
        [r"^model\.onnx:/div: error: cannot divide sequence by 3 exactly; "
         r"fix the symbolic dimensions with --input-shape name=AxB\.\.\. "
         r"\(Div, opset 17\)$"]))
    # Shape comparisons that depend on the sizes, and sizes cast to float
    # (PyTorch's `x.size(1) ** 0.5`), do not fold.
    def shape_then(op_nodes, out_shape):
        return model(
            [node("Shape", ["x"], ["s"], name="/shape"),
             node("Gather", ["s", "one"], ["n"], name="/gather",
                  attrs=[attr_int("axis", 0)])] + op_nodes,
            [value_info("x", FLOAT, ["batch", "sequence", 16])],
            [value_info("y", FLOAT, out_shape)],
            [tensor("one", [], [1], elem_type=INT64),
             tensor("two", [], [2], elem_type=INT64)])
    out.append(error_case(
        "symbolic-equal-undecided",
        {"model.onnx": shape_then(
            [node("Equal", ["n", "two"], ["e"], name="/equal"),
             node("Where", ["e", "x", "x"], ["y"], name="/where")],
            ["batch", "sequence", 16])}, [],
        [r"^model\.onnx:/equal: error: cannot decide Equal\(sequence, 2\) "
         r"for every size of the symbolic dimensions; fix the symbolic "
         r"dimensions with --input-shape name=AxB\.\.\. \(Equal, opset 17\)$"]))
    out.append(error_case(
        "symbolic-cast-to-float",
        {"model.onnx": shape_then(
            [node("Cast", ["n"], ["f"], name="/cast",
                  attrs=[attr_int("to", FLOAT)]),
             node("Mul", ["x", "f"], ["y"], name="/mul")],
            ["batch", "sequence", 16])}, [],
        [r"^model\.onnx:/cast: error: casts symbolic dimensions to float "
         r"\(only to int64 and int32 they fold\); fix the symbolic "
         r"dimensions with --input-shape"]))
    out.append({"name": "symbolic-div-fixed", "files": {"model.onnx": shape_div},
                "cmd": IMPORT + ["--input-shape", "x=2x9x16"], "exit": 0,
                "outputs": ["model.mlir", "model.safetensors"]})
    out.append({"name": "symbolic-dims-fixed", "files": {"model.onnx": sym},
                "cmd": IMPORT + ["--input-shape", "x=2x8x16"], "exit": 0,
                "outputs": ["model.mlir", "model.safetensors"]})
    for label, spec, msg in [
            ("rank", "x=2x8", r"has rank 2, but the input has rank 3"),
            ("fixed-dim", "x=2x8x17",
             r"gives dimension 2 as 17, but the model fixes it to 16"),
            ("fixed-dim-dynamic", "x=2x8x?",
             r"gives dimension 2 as \?, but the model fixes it to 16 "
             r"\(export it with that axis dynamic\)"),
            ("unknown-name", "y=2x8x16",
             r"names 'y', which is not a graph input"),
            ("zero", "x=0x8x16", r"'0' is not a positive dimension or \?"),
            ("negative", "x=-1x8x16", r"'-1' is not a positive dimension"),
            ("letters", "x=ax8x16", r"'a' is not a positive dimension"),
            ("no-equals", "x", r"expected name=AxBx"),
            ("empty-dims", "x=", r"expected name=AxBx"),
            ("huge", "x=99999999999x8x16", r"is not a positive dimension")]:
        out.append(error_case("input-shape-" + label, {"model.onnx": sym},
                              ["--input-shape", spec], [msg]))
    out.append(error_case("input-shape-twice", {"model.onnx": sym},
                          ["--input-shape", "x=2x8x16",
                           "--input-shape", "x=2x8x16"],
                          [r"'x' is given twice"]))
    real_bert = read_model("bert_like-op17.onnx")
    out.append({"name": "exported-bert-dynamic",
                "files": {"model.onnx": real_bert}, "cmd": IMPORT, "exit": 0,
                "outputs": ["model.mlir", "model.safetensors"]})
    out.append(error_case(
        "exported-bert-mismatched-lengths", {"model.onnx": real_bert},
        ["--input-shape", "input_ids=1x8",
         "--input-shape", "attention_mask=1x9"],
        [r"^model\.onnx: error: --input-shape gives the symbolic dimension "
         r"'sequence' as 9 for 'attention_mask' but as 8 for 'input_ids'$"]))
    out.append(error_case(
        "exported-gpt2-too-long", {"model.onnx": read_model(
            "gpt2_like-op17.onnx")},
        ["--input-shape", "input_ids=1x17"],
        [r"^model\.onnx:/.*: error: .*\(\w+, opset 17\)"]))

    # Unsupported ops, attributes, opsets, data types.
    def one_node(op, attrs=(), opset=17, name="/the/node", domain=None,
                 shape=(2, 16), inputs=("x",)):
        return model([node(op, list(inputs), ["y"], name=name, attrs=attrs,
                           domain=domain)],
                     [value_info(i, FLOAT, list(shape)) for i in inputs],
                     [value_info("y", FLOAT, list(shape))], opset=opset)
    for op in ("Selu", "Elu", "Softplus", "HardSigmoid", "LogSoftmax",
               "Round", "Hardmax",
               "Softsign", "Shrink", "Celu", "ThresholdedRelu",
               "Asin", "Acos", "Atan", "Sinh", "Cosh", "Tan"):
        out.append(error_case(
            "unsupported-op-" + op.lower(), {"model.onnx": one_node(op)}, [],
            [r"^model\.onnx:/the/node: error: unsupported op '%s' "
             r"\(%s, opset 17\)$" % (op, op)]))
    out.append(error_case(
        "unsupported-op-unnamed-node",
        {"model.onnx": one_node("Selu", name="")}, [],
        [r"^model\.onnx:Selu#0: error: unsupported op 'Selu'"]))
    out.append(error_case(
        "custom-domain", {"model.onnx": one_node(
            "FusedGelu", domain="com.microsoft")}, [],
        [r"model\.onnx: error: (ONNX checker|.*domain)"]))
    out.append(error_case(
        "softmax-opset11-inner-axis",
        {"model.onnx": model(
            [node("Softmax", ["x"], ["y"], name="/sm",
                  attrs=[attr_int("axis", 1)])],
            [value_info("x", FLOAT, [2, 4, 8])],
            [value_info("y", FLOAT, [2, 4, 8])], opset=11)}, [],
        [r"opset 11 is not supported \(the importer reads opsets 13 to 23\)"]))
    for opset in (7, 12, 24, 99):
        out.append(error_case(
            "opset-%d" % opset, {"model.onnx": one_node("Relu", opset=opset)},
            [], [r"^model\.onnx: error: (opset %d is not supported|ONNX "
                 r"checker)" % opset]))
    # Opsets 19 to 23: what a version adds that the importer does not read
    # is refused, located, never ignored.
    out.append(error_case(
        "cast-unknown-attribute", {"model.onnx": one_node(
            "Cast", attrs=[attr_int("to", FLOAT), attr_string("round_mode", "up")],
            opset=23)}, [],
        [r"^model\.onnx:/the/node: error: attribute 'round_mode' is not "
         r"supported \(Cast at this opset reads 'to', 'saturate'\) "
         r"\(Cast, opset 23\)$"]))
    out.append(error_case(
        "cast-float8", {"model.onnx": one_node(
            "Cast", attrs=[attr_int("to", 17), attr_int("saturate", 1)],
            opset=19)}, [],
        [r"^model\.onnx:/the/node: error: tensors of float8e4m3fn are not "
         r"supported \(Cast, opset 19\)$"]))
    out.append(error_case(
        "cast-int4", {"model.onnx": one_node(
            "Cast", attrs=[attr_int("to", 22)], opset=21)}, [],
        [r"error: tensors of int4 are not supported \(Cast, opset 21\)$"]))
    out.append(error_case(
        "input-float4", {"model.onnx": model(
            [node("Relu", ["x"], ["y"], name="/r")],
            [value_info("x", 23, [2, 4])], [value_info("y", 23, [2, 4])],
            opset=23)}, [],
        [r"^model\.onnx: error: graph input 'x' has element type float4e2m1"]))
    out.append(error_case(
        "initializer-float8", {"model.onnx": model(
            [node("Add", ["x", "w"], ["y"], name="/a")],
            [value_info("x", FLOAT, [2])], [value_info("y", FLOAT, [2])],
            [tensor("w", [2], elem_type=19, raw=b"\x00\x00")], opset=20)}, [],
        [r"^model\.onnx: error: initializer 'w' has unsupported data type "
         r"float8e5m2"]))
    out.append(error_case(
        "gelu-before-opset-20", {"model.onnx": one_node("Gelu", opset=18)}, [],
        [r"^model\.onnx:/the/node: error: 'Gelu' is not an op of opset 18 "
         r"\(the importer reads it from opset 20\) \(Gelu, opset 18\)$"]))
    out.append(error_case(
        "gelu-bad-approximate", {"model.onnx": one_node(
            "Gelu", attrs=[attr_string("approximate", "erf")], opset=20)}, [],
        [r"error: approximate 'erf' is not supported \(none or tanh\) "
         r"\(Gelu, opset 20\)$"]))
    out.append(error_case(
        "pad-wrap-before-opset-19", {"model.onnx": model(
            [node("Pad", ["x", "p"], ["y"], name="/pad",
                  attrs=[attr_string("mode", "wrap")])],
            [value_info("x", FLOAT, [2, 4])], [value_info("y", FLOAT, [2, 6])],
            [tensor("p", [4], [0, 1, 0, 1], INT64)], opset=18)}, [],
        [r"^model\.onnx:/pad: error: mode 'wrap' is not supported \(constant, "
         r"edge, reflect\) \(Pad, opset 18\)$"]))
    out.append(error_case(
        "pad-edge-empty-axis", {"model.onnx": model(
            # Rows 2..2 of x: an empty axis.
            [node("Slice", ["x", "s", "s", "z"], ["e"], name="/slice"),
             node("Pad", ["e", "p"], ["y"], name="/pad",
                  attrs=[attr_string("mode", "edge")])],
            [value_info("x", FLOAT, [2, 4])], [value_info("y", FLOAT, [2, 4])],
            [tensor("p", [4], [1, 0, 1, 0], INT64),
             tensor("s", [1], [2], INT64), tensor("z", [1], [0], INT64)],
            opset=18)}, [],
        [r"^model\.onnx:/pad: error: mode 'edge' pads axis 0, which is empty "
         r"\(Pad, opset 18\)$"]))
    out.append(error_case(
        "einsum-diagonal", {"model.onnx": model(
            [node("Einsum", ["x"], ["y"], name="/es",
                  attrs=[attr_string("equation", "ii->i")])],
            [value_info("x", FLOAT, [4, 4])], [value_info("y", FLOAT, [4])],
            opset=20)}, [],
        [r"^model\.onnx:/es: error: equation 'ii->i' is not supported: an "
         r"ellipsis or a repeated index .*\(Einsum, opset 20\)$"]))
    # Conv: only the patch embedding (stride = kernel, no padding).
    for case, attrs, message in (
        ("conv-overlapping", [attr_ints("strides", [1, 1])],
         r"strides other than the kernel; only the patch embedding of vision "
         r"transformers \(2-D, strides equal to the kernel, no padding, "
         r"dilation 1, group 1\) is supported \(Conv, opset 20\)$"),
        ("conv-padded", [attr_ints("strides", [2, 2]),
                         attr_ints("pads", [1, 1, 1, 1])],
         r"kernel_shape, dilations or pads; only the patch embedding"),
        ("conv-grouped", [attr_ints("strides", [2, 2]), attr_int("group", 2)],
         r"group != 1; only the patch embedding")):
        out.append(error_case(case, {"model.onnx": model(
            [node("Conv", ["x", "w"], ["y"], name="/conv", attrs=attrs)],
            [value_info("x", FLOAT, [1, 2, 4, 4]),
             value_info("w", FLOAT, [3, 2, 2, 2])],
            [value_info("y", FLOAT, [1, 3, 2, 2])], opset=20)}, [],
            [r"^model\.onnx:/conv: error: " + message]))
    out.append(error_case(
        "einsum-three-operands", {"model.onnx": model(
            [node("Einsum", ["x", "x", "x"], ["y"], name="/es",
                  attrs=[attr_string("equation", "ij,jk,kl->il")])],
            [value_info("x", FLOAT, [4, 4])], [value_info("y", FLOAT, [4, 4])],
            opset=20)}, [],
        [r"equation 'ij,jk,kl->il' is not supported: more than two operands"]))
    # Run-time indices out of range: a located error when the model runs,
    # no output written.
    scatter = model(
        [node("ScatterND", ["x", "i", "u"], ["y"], name="/sc")],
        [value_info("x", FLOAT, [4, 3]), value_info("i", INT64, [2, 1]),
         value_info("u", FLOAT, [2, 3])],
        [value_info("y", FLOAT, [4, 3])], opset=18)
    out.append({
        "name": "scatternd-runtime-index-out-of-range",
        "files": {"model.onnx": scatter,
                  "x.npy": npy("<f4", (4, 3), float32s([0.0] * 12)),
                  "i.npy": npy("<i8", (2, 1), struct.pack("<2q", 1, 7)),
                  "u.npy": npy("<f4", (2, 3), float32s([1.0] * 6))},
        "cmd": ["/bin/sh", "-c",
                "{attn-compile} -q model.onnx -o m && exec ./m --input x=x.npy "
                "--input i=i.npy --input u=u.npy --output y.npy"],
        "exit": "nonzero",
        "stderr": [r"/sc: an index lies outside its axis"],
        "outputs": ["m", "m.safetensors"],
        "absent": ["y.npy"]})
    out.append(error_case(
        "layernorm-stash-double", {"model.onnx": model(
            [node("LayerNormalization", ["x", "s"], ["y"], name="/ln",
                  attrs=[attr_int("stash_type", 11)])],
            [value_info("x", FLOAT, [2, 8])], [value_info("y", FLOAT, [2, 8])],
            [tensor("s", [8], floats(8))], opset=20)}, [],
        [r"^model\.onnx:/ln: error: stash_type 11 \(double\) is not supported "
         r"\(only 1, float\) \(LayerNormalization, opset 20\)$"]))
    out.append(error_case(
        "split-num-outputs-before-18", {"model.onnx": model(
            [node("Split", ["x"], ["a", "b"], name="/sp",
                  attrs=[attr_int("num_outputs", 2)])],
            [value_info("x", FLOAT, [2, 8])],
            [value_info("a", FLOAT, [1, 8]), value_info("b", FLOAT, [1, 8])],
            opset=17)}, [],
        [r"(ONNX checker|attribute 'num_outputs' is not supported)"]))
    out.append(error_case(
        "attention-past-key-alone", {"model.onnx": model(
            [node("Attention", ["q", "k", "v", "", "pk"], ["y"],
                  name="/att")],
            [value_info(n, FLOAT, [1, 2, 4, 8]) for n in ("q", "k", "v")] +
            [value_info("pk", FLOAT, [1, 2, 3, 8])],
            [value_info("y", FLOAT, [1, 2, 4, 8])], opset=23)}, [],
        [r"^model\.onnx:/att: error: past_key and past_value must be given "
         r"together \(Attention, opset 23\)$"]))
    out.append(error_case(
        "attention-past-wrong-heads", {"model.onnx": model(
            [node("Attention", ["q", "k", "v", "", "pk", "pv"], ["y"],
                  name="/att")],
            [value_info(n, FLOAT, [1, 2, 4, 8]) for n in ("q", "k", "v")] +
            [value_info(n, FLOAT, [1, 3, 3, 8]) for n in ("pk", "pv")],
            [value_info("y", FLOAT, [1, 2, 4, 8])], opset=23)}, [],
        [r"^model\.onnx:/att: error: past_key \[1, 3, 3, 8\] does not fit "
         r"the new keys \[1, 2, 4, 8\] \(Attention, opset 23\)$"]))
    out.append(error_case(
        "attention-softcap", {"model.onnx": model(
            [node("Attention", ["q", "k", "v"], ["y"], name="/att",
                  attrs=[attr_float("softcap", 30.0)])],
            [value_info(n, FLOAT, [1, 2, 4, 8]) for n in ("q", "k", "v")],
            [value_info("y", FLOAT, [1, 2, 4, 8])], opset=23)}, [],
        [r"^model\.onnx:/att: error: softcap is not supported"]))
    out.append(error_case(
        "layernorm-inner-axis",
        {"model.onnx": model(
            [node("LayerNormalization", ["x", "s"], ["y"], name="/ln",
                  attrs=[attr_int("axis", 1)])],
            [value_info("x", FLOAT, [2, 4, 8])],
            [value_info("y", FLOAT, [2, 4, 8])],
            [tensor("s", [4, 8], floats(32))])}, [],
        [r"^model\.onnx:/ln: error: normalization over dimensions 1\.\.2 is "
         r"not supported \(only the last axis\) \(LayerNormalization, "
         r"opset 17\)"]))
    out.append(error_case(
        "layernorm-mean-output",
        {"model.onnx": model(
            [node("LayerNormalization", ["x", "s"], ["y", "mean"], name="/ln")],
            [value_info("x", FLOAT, [2, 8])],
            [value_info("y", FLOAT, [2, 8])],
            [tensor("s", [8], floats(8))])}, [],
        [r"the Mean and InvStdDev outputs are not supported"]))
    out.append(error_case(
        "slice-negative-step",
        {"model.onnx": model(
            [node("Slice", ["x", "st", "en", "ax", "sp"], ["y"], name="/sl")],
            [value_info("x", FLOAT, [2, 8])], [value_info("y", FLOAT, [2, 4])],
            [tensor("st", [1], [7], INT64), tensor("en", [1], [0], INT64),
             tensor("ax", [1], [1], INT64), tensor("sp", [1], [-2], INT64)])},
        [], [r"^model\.onnx:/sl: error: steps must be positive"]))
    out.append(error_case(
        "reshape-runtime-shape",
        {"model.onnx": model(
            [node("Reshape", ["x", "s"], ["y"], name="/rs")],
            [value_info("x", FLOAT, [2, 8]), value_info("s", INT64, [2])],
            [value_info("y", FLOAT, [4, 4])])}, [],
        [r"^model\.onnx:/rs: error: the shape must be a constant"]))
    # y = op(x, c) on x [2, 8] with c an initializer: (name, op, node name,
    # c as tensor()'s arguments, y's shape, the error).
    for name, op, node_name, c, y_shape, message in (
            ("reshape-wrong-count", "Reshape", "/rs", ("s", [2], [3, 5], INT64),
             [3, 5], r"^model\.onnx:/rs: error: cannot reshape \[2, 8\] \(16 "
             r"elements\) to \[3, 5\]"),
            ("reshape-two-minus-ones", "Reshape", "/rs",
             ("s", [2], [-1, -1], INT64), [4, 4], r"shape has more than one -1"),
            ("matmul-inner-mismatch", "MatMul", "/mm", ("w", [9, 4], floats(36)),
             [2, 4], r"^model\.onnx:/mm: error: inner dimensions differ: "
             r"\[2, 8\] x \[9, 4\] \(MatMul, opset 17\)"),
            ("add-not-broadcastable", "Add", "/add", ("w", [3, 8], floats(24)),
             [2, 8], r"^model\.onnx:/add: error: operand shapes \[2, 8\] and "
             r"\[3, 8\] do not broadcast")):
        out.append(error_case(
            name, {"model.onnx": model(
                [node(op, ["x", c[0]], ["y"], name=node_name)],
                [value_info("x", FLOAT, [2, 8])],
                [value_info("y", FLOAT, y_shape)], [tensor(*c)])},
            [], [message]))
    # Run-time indices into a computed tensor import (clamped reads, with a
    # run-time bounds check): a valid model, not an error.
    out.append({"name": "gather-runtime-indices",
                "files": {"model.onnx": model(
                    [node("Relu", ["x"], ["r"], name="/relu"),
                     node("Gather", ["r", "i"], ["y"], name="/gather")],
                    [value_info("x", FLOAT, [4, 8]),
                     value_info("i", INT64, [2])],
                    [value_info("y", FLOAT, [2, 8])])},
                "cmd": IMPORT, "exit": "zero",
                "outputs": ["model.mlir", "model.safetensors"]})
    out.append(error_case(
        "gather-index-out-of-range",
        {"model.onnx": model(
            [node("Relu", ["x"], ["r"], name="/relu"),
             node("Gather", ["r", "i"], ["y"], name="/gather")],
            [value_info("x", FLOAT, [4, 8])], [value_info("y", FLOAT, [8])],
            [tensor("i", [], [4], INT64)])}, [],
        [r"index 4 is out of range for extent 4"]))
    out.append(error_case(
        "transpose-bad-perm",
        {"model.onnx": model(
            [node("Transpose", ["x"], ["y"], name="/t",
                  attrs=[attr_ints("perm", [0, 0])])],
            [value_info("x", FLOAT, [4, 8])],
            [value_info("y", FLOAT, [8, 4])])}, [],
        [r"(perm is not a permutation|ONNX checker)"]))
    out.append(error_case(
        "bool-graph-input",
        {"model.onnx": model(
            [node("Cast", ["x"], ["y"], name="/c",
                  attrs=[attr_int("to", FLOAT)])],
            [value_info("x", BOOL, [4])], [value_info("y", FLOAT, [4])])}, [],
        [r"graph input 'x' has element type bool"]))
    # One Relu y = /r(input) with graph input x and a graph output, [4] each:
    # (name, the Relu's input, the graph output, element type, the error).
    for name, relu_input, graph_output, elem_type, message in (
            ("double-graph-input", "x", "y", DOUBLE,
             r"graph input 'x' has element type double"),
            ("undefined-node-input", "nowhere", "y", FLOAT,
             r"model\.onnx(:/r)?: error: .*nowhere"),
            ("output-never-computed", "x", "z", FLOAT,
             r"model\.onnx: error: .*'z'")):
        out.append(error_case(
            name,
            {"model.onnx": model(
                [node("Relu", [relu_input], ["y"], name="/r")],
                [value_info("x", elem_type, [4])],
                [value_info(graph_output, elem_type, [4])])},
            [], [message]))

    # Opset 18 forms (axes and split counts as inputs / attributes), which
    # libonnx 1.12's checker does not know: the importer's own checks.
    def single(nodes, inputs, outputs, inits=(), opset=17):
        return {"model.onnx": model(nodes, inputs, outputs, list(inits),
                                    opset=opset)}
    x248 = [value_info("x", FLOAT, [2, 4, 8])]
    out.append({"name": "opset18-reducemean-axes-input",
                "files": single([node("ReduceMean", ["x", "ax"], ["y"],
                                      name="/rm")], x248,
                                [value_info("y", FLOAT, [2, 4, 1])],
                                [tensor("ax", [1], [-1], INT64)], opset=18),
                "cmd": IMPORT, "exit": 0,
                "outputs": ["model.mlir", "model.safetensors"]})
    out.append({"name": "opset18-split-num-outputs",
                "files": single([node("Split", ["x"], ["a", "b"], name="/sp",
                                      attrs=[attr_int("axis", 2),
                                             attr_int("num_outputs", 2)])],
                                x248, [value_info("a", FLOAT, [2, 4, 4]),
                                       value_info("b", FLOAT, [2, 4, 4])],
                                opset=18),
                "cmd": IMPORT, "exit": 0,
                "outputs": ["model.mlir", "model.safetensors"]})
    out.append(error_case(
        "opset18-reducemean-runtime-axes",
        single([node("ReduceMean", ["x", "ax"], ["y"], name="/rm")],
               x248 + [value_info("ax", INT64, [1])],
               [value_info("y", FLOAT, [2, 4, 1])], opset=18), [],
        [r"^model\.onnx:/rm: error: axes must be a constant .*\(ReduceMean, "
         r"opset 18\)$"]))
    out.append(error_case(
        "split-sizes-wrong-sum",
        single([node("Split", ["x", "sz"], ["a", "b"], name="/sp",
                     attrs=[attr_int("axis", 2)])], x248,
               [value_info("a", FLOAT, [2, 4, 3]),
                value_info("b", FLOAT, [2, 4, 3])],
               [tensor("sz", [2], [3, 3], INT64)]), [],
        [r"^model\.onnx:/sp: error: split sizes add up to 6, not the axis "
         r"extent 8"]))
    out.append(error_case(
        "squeeze-non-unit",
        single([node("Squeeze", ["x", "ax"], ["y"], name="/sq")], x248,
               [value_info("y", FLOAT, [2, 8])],
               [tensor("ax", [1], [1], INT64)]), [],
        [r"^model\.onnx:/sq: error: cannot squeeze dimension 1 of extent 4"]))
    out.append(error_case(
        "unsqueeze-axes-repeat",
        single([node("Unsqueeze", ["x", "ax"], ["y"], name="/uq")], x248,
               [value_info("y", FLOAT, [2, 1, 1, 4, 8])],
               [tensor("ax", [2], [1, 1], INT64)]), [],
        [r"^model\.onnx:/uq: error: axes repeat"]))
    out.append(error_case(
        "unsqueeze-runtime-axes",
        single([node("Unsqueeze", ["x", "ax"], ["y"], name="/uq")],
               x248 + [value_info("ax", INT64, [1])],
               [value_info("y", FLOAT, [2, 1, 4, 8])]), [],
        [r"^model\.onnx:/uq: error: axes must be a constant"]))
    out.append(error_case(
        "concat-rank-mismatch",
        single([node("Concat", ["x", "z"], ["y"], name="/cat",
                     attrs=[attr_int("axis", 0)])],
               x248 + [value_info("z", FLOAT, [4, 8])],
               [value_info("y", FLOAT, [3, 4, 8])]), [],
        [r"^model\.onnx:/cat: error: inputs differ in rank or element type"]))
    out.append(error_case(
        "concat-axis-out-of-range",
        single([node("Concat", ["x", "x"], ["y"], name="/cat",
                     attrs=[attr_int("axis", 3)])], x248,
               [value_info("y", FLOAT, [2, 4, 16])]), [],
        [r"(axis 3 is out of range|ONNX checker)"]))
    out.append(error_case(
        "softmax-axis-out-of-range",
        single([node("Softmax", ["x"], ["y"], name="/sm",
                     attrs=[attr_int("axis", 3)])], x248,
               [value_info("y", FLOAT, [2, 4, 8])]), [],
        [r"^model\.onnx:/sm: error: axis 3 is out of range"]))
    out.append(error_case(
        "gemm-bias-not-broadcastable",
        single([node("Gemm", ["a", "w", "c"], ["y"], name="/gemm",
                     attrs=[attr_int("transB", 1)])],
               [value_info("a", FLOAT, [2, 8])],
               [value_info("y", FLOAT, [2, 4])],
               [tensor("w", [4, 8], floats(32)),
                tensor("c", [3], floats(3))]), [],
        [r"^model\.onnx:/gemm: error: C does not broadcast to the result "
         r"\[2, 4\]"]))
    out.append(error_case(
        "expand-incompatible",
        single([node("Expand", ["x", "sh"], ["y"], name="/ex")], x248,
               [value_info("y", FLOAT, [2, 4, 8])],
               [tensor("sh", [3], [2, 5, 8], INT64)]), [],
        [r"^model\.onnx:/ex: error: shape \[2, 5, 8\] does not broadcast "
         r"with \[2, 4, 8\]"]))
    out.append(error_case(
        "cast-to-string",
        single([node("Cast", ["x"], ["y"], name="/c",
                     attrs=[attr_int("to", STRING)])], x248,
               [value_info("y", STRING, [2, 4, 8])]), [],
        [r"model\.onnx(:/c)?: error: .*string"]))
    out.append(error_case(
        "range-runtime",
        single([node("Range", ["s", "l", "d"], ["y"], name="/r")],
               [value_info("s", INT64, []), value_info("l", INT64, []),
                value_info("d", INT64, [])],
               [value_info("y", INT64, [4])]), [],
        [r"^model\.onnx:/r: error: start, limit and delta must be "
         r"computable from the input shapes"]))
    out.append(error_case(
        "matmul-batch-not-broadcastable",
        single([node("MatMul", ["a", "b"], ["y"], name="/mm")],
               [value_info("a", FLOAT, [2, 4, 8]),
                value_info("b", FLOAT, [3, 8, 4])],
               [value_info("y", FLOAT, [2, 4, 4])]), [],
        [r"^model\.onnx:/mm: error: batch dimensions of \[2, 4, 8\] and "
         r"\[3, 8, 4\] do not broadcast"]))
    out.append(error_case(
        "where-condition-float",
        single([node("Where", ["x", "x", "x"], ["y"], name="/w")], x248,
               [value_info("y", FLOAT, [2, 4, 8])]), [],
        [r"(ONNX checker|condition must be bool)"]))

    # attn-compile takes the same models and reports the same way.
    compile_cmd = ["{attn-compile}", "model.onnx", "-o", "m"]
    out.append({"name": "compile-unsupported-op",
                "files": {"model.onnx": one_node("Selu")},
                "cmd": compile_cmd, "exit": "nonzero",
                "stderr": [r"^model\.onnx:/the/node: error: unsupported op "
                           r"'Selu' \(Selu, opset 17\)$"],
                "absent": ["m", "m.safetensors"]})
    out.append({"name": "compile-truncated",
                "files": {"model.onnx": real[:1000]},
                "cmd": compile_cmd + ["--input-shape", "x=1x8x32"],
                "exit": "nonzero",
                "stderr": [r"^model\.onnx: error: "],
                "absent": ["m", "m.safetensors"]})
    # Dynamic imports compile for both targets.
    out.append({"name": "compile-symbolic-dynamic-cpu",
                "files": {"model.onnx": sym}, "cmd": compile_cmd,
                "exit": 0, "outputs": ["m", "m.safetensors"]})
    out.append({"name": "compile-symbolic-dynamic-cuda",
                "files": {"model.onnx": sym},
                "cmd": compile_cmd + ["--target=cuda"], "exit": 0,
                "outputs": ["m", "m.safetensors"]})
    out.append({"name": "compile-missing-external-data",
                "files": {"model.onnx": add_model(ext)},
                "cmd": compile_cmd + ["--emit=attn"], "exit": "nonzero",
                "stderr": [r"cannot open external data"],
                "absent": ["m", "m.safetensors"]})
    out.append({"name": "compile-input-shape-on-mlir",
                "files": {"in.mlir": "func.func @main() { return }\n"},
                "cmd": ["{attn-compile}", "in.mlir", "-o", "m",
                        "--input-shape", "x=1"], "exit": "nonzero",
                "stderr": [r"--input-shape (and --no-raise are|is) for model\.onnx"],
                "absent": ["m"]})
    out.append({"name": "compile-emit-attn-on-mlir",
                "files": {"in.mlir": "func.func @main() { return }\n"},
                "cmd": ["{attn-compile}", "in.mlir", "-o", "m",
                        "--emit=attn"], "exit": "nonzero",
                "stderr": [r"--emit=attn is for imported models"],
                "absent": ["m"]})
    out.append({"name": "compile-emit-attn-with-layer-drop",
                "files": {"model.onnx": add_model(w32)},
                "cmd": compile_cmd + ["--emit=attn", "--layer-drop",
                                      "strategy=every-other rate=0.5"],
                "exit": "nonzero",
                "stderr": [r"--layer-drop and --prune apply when compiling"],
                "absent": ["m", "m.safetensors"]})
    out.append({"name": "compile-valid-emit-attn",
                "files": {"model.onnx": add_model(w32)},
                "cmd": compile_cmd + ["--emit=attn"], "exit": 0,
                "outputs": ["m", "m.safetensors"]})
    return out
