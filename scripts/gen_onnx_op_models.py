#!/usr/bin/env python3
"""Writes the small single-op ONNX models the importer's op tests run
(test/ONNX/ops.test, test/ONNX/check_ops.py), with onnxruntime's outputs as
the references (ONNX's reference evaluator's where a case says so).

    /path/to/venv/bin/python scripts/gen_onnx_op_models.py [OUTDIR]

Needs onnx (>= 1.18, for opset 23) and onnxruntime (the generator venv); the
compiler's tests need neither. For every case it writes into OUTDIR
(default test/ONNX/Ops):

  <case>.onnx                 the op(s) on run-time graph inputs
  <case>-folded.onnx          the same nodes with every graph input replaced
                              by a Constant of the committed input, so that
                              the importer folds them on the host
  <case>.<input>.npy          the inputs (seeded)
  <case>.<output>.ref.npy     onnxruntime's outputs

Boolean results are cast to int64 inside the model (the runtime's outputs
are numeric). Seeds are fixed: a re-run reproduces the committed files.
"""

import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "test", "ONNX", "Ops")
RNG = np.random.default_rng(1234)

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def f32(*shape, scale=2.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def i64(*shape, lo=-5, hi=6):
    return RNG.integers(lo, hi, size=shape).astype(np.int64)


def const(name, array):
    return helper.make_node("Constant", [], [name], name="/const/" + name,
                            value=numpy_helper.from_array(np.asarray(array), name))


def cast_i64(src, dst):
    return helper.make_node("Cast", [src], [dst], to=I64, name="/cast/" + dst)


class Case:
    def __init__(self, name, opset, inputs, nodes, outputs, consts=(),
                 microsoft=False, onnx_reference=False):
        """inputs: {name: array}; nodes: NodeProtos (names set here);
        outputs: [name]; consts: NodeProtos of Constant inputs."""
        self.name, self.opset = name, opset
        self.inputs, self.nodes, self.outputs = inputs, nodes, outputs
        self.consts = list(consts)
        # ONNX Runtime's contrib ops: com.microsoft imported, and no ONNX
        # checker or shape inference (they do not know these ops).
        self.microsoft = microsoft
        # ONNX's own reference evaluator instead, where onnxruntime does not
        # implement what the spec allows (caches broadcast over the batch).
        self.onnx_reference = onnx_reference


def build(case, folded, shapes=None):
    nodes, graph_inputs = list(case.consts), []
    for k, v in case.inputs.items():
        if folded:
            nodes.append(const(k, v))
        else:
            graph_inputs.append(helper.make_tensor_value_info(
                k, helper.np_dtype_to_tensor_dtype(v.dtype), list(v.shape)))
    for i, n in enumerate(case.nodes):
        if not n.name:
            n.name = "/%s/%d" % (n.op_type, i)
    nodes += case.nodes
    outs = [onnx.ValueInfoProto(name=o) for o in case.outputs]
    graph = helper.make_graph(nodes, case.name, graph_inputs, outs)
    imports = [helper.make_opsetid("", case.opset)]
    if case.microsoft:
        imports.append(helper.make_opsetid("com.microsoft", 1))
    model = helper.make_model(graph, opset_imports=imports)
    model.ir_version = 10
    if case.microsoft:
        for o in model.graph.output:
            if shapes:
                o.type.CopyFrom(helper.make_tensor_type_proto(
                    TensorProto.FLOAT, list(shapes[o.name])))
        return model
    # The outputs' types and shapes, from ONNX's shape inference.
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    types = {v.name: v.type for v in list(inferred.graph.value_info) +
             list(inferred.graph.output)}
    for o in model.graph.output:
        o.type.CopyFrom(types[o.name])
        if shapes and not o.type.tensor_type.HasField("shape"):
            o.type.tensor_type.shape.SetInParent()
            for d in shapes[o.name]:
                o.type.tensor_type.shape.dim.add().dim_value = d
    return model


def cases():
    out = []
    x = f32(2, 3, 4)
    out.append(Case("gelu", 20, {"x": x}, [
        helper.make_node("Gelu", ["x"], ["y_none"]),
        helper.make_node("Gelu", ["x"], ["y_tanh"], approximate="tanh"),
    ], ["y_none", "y_tanh"]))

    a, c = i64(3, 5), i64(3, 5)
    out.append(Case("logical", 18, {"a": a, "c": c}, [
        helper.make_node("Greater", ["a", "zero"], ["pa"]),
        helper.make_node("Less", ["c", "zero"], ["nc"]),
        helper.make_node("And", ["pa", "nc"], ["and"]),
        helper.make_node("Or", ["pa", "nc"], ["or"]),
        helper.make_node("Xor", ["pa", "nc"], ["xor"]),
        helper.make_node("Not", ["pa"], ["not"]),
        # A mask combined in the ways exporters write: where(a > 0 and not
        # c < 0, a, c).
        helper.make_node("Not", ["nc"], ["cc"]),
        helper.make_node("And", ["pa", "cc"], ["m"]),
        helper.make_node("Where", ["m", "a", "c"], ["where"]),
        cast_i64("and", "and_i"), cast_i64("or", "or_i"),
        cast_i64("xor", "xor_i"), cast_i64("not", "not_i"),
    ], ["and_i", "or_i", "xor_i", "not_i", "where"],
        consts=[const("zero", np.array(0, np.int64))]))

    ai = i64(4, 5, lo=-9, hi=10)
    ci = i64(4, 5, lo=1, hi=5) * np.where(RNG.random((4, 5)) < 0.5, -1, 1)
    af, cf = f32(4, 5, scale=5.0), f32(4, 5) + 3.0
    out.append(Case("mod", 13, {"ai": ai, "ci": ci.astype(np.int64), "af": af, "cf": cf}, [
        helper.make_node("Mod", ["ai", "ci"], ["mod_int"]),
        helper.make_node("Mod", ["ai", "ci"], ["fmod_int"], fmod=1),
        helper.make_node("Mod", ["af", "cf"], ["fmod_float"], fmod=1),
    ], ["mod_int", "fmod_int", "fmod_float"]))

    xs = f32(3, 4)
    xs[0, 0], xs[1, 1], xs[2, 2], xs[2, 3] = np.nan, np.inf, -np.inf, 0.0
    out.append(Case("isnan_isinf", 20, {"x": xs}, [
        helper.make_node("IsNaN", ["x"], ["nan"]),
        helper.make_node("IsInf", ["x"], ["inf"]),
        helper.make_node("IsInf", ["x"], ["posinf"], detect_negative=0),
        helper.make_node("IsInf", ["x"], ["neginf"], detect_positive=0),
        cast_i64("nan", "nan_i"), cast_i64("inf", "inf_i"),
        cast_i64("posinf", "posinf_i"), cast_i64("neginf", "neginf_i"),
    ], ["nan_i", "inf_i", "posinf_i", "neginf_i"]))

    xu = f32(3, 4)
    xu[0, 0] = 0.0
    xi = i64(3, 4)
    out.append(Case("math_unary", 13, {"x": xu, "xi": xi}, [
        helper.make_node("Sign", ["x"], ["sign"]),
        helper.make_node("Sign", ["xi"], ["sign_int"]),
        helper.make_node("Abs", ["x"], ["abs"]),
        helper.make_node("Abs", ["xi"], ["abs_int"]),
        helper.make_node("Floor", ["x"], ["floor"]),
        helper.make_node("Ceil", ["x"], ["ceil"]),
    ], ["sign", "sign_int", "abs", "abs_int", "floor", "ceil"]))

    # A run-time lower bound (a scalar squeezed from an input).
    out.append(Case("clip", 13, {"x": f32(3, 4), "xi": i64(3, 4), "lo1": np.array([-0.5], np.float32)}, [
        helper.make_node("Squeeze", ["lo1", "ax0"], ["lo"]),
        helper.make_node("Clip", ["x", "lo", "hi"], ["both"]),
        helper.make_node("Clip", ["x", "", "hi"], ["max_only"]),
        helper.make_node("Clip", ["x", "lo"], ["min_only"]),
        helper.make_node("Clip", ["xi", "lo_i", "hi_i"], ["int"]),
    ], ["both", "max_only", "min_only", "int"],
        consts=[const("ax0", np.array([0], np.int64)),
                const("hi", np.array(1.0, np.float32)),
                const("lo_i", np.array(-2, np.int64)),
                const("hi_i", np.array(3, np.int64))]))

    out.append(Case("cumsum", 14, {"x": f32(2, 5), "xi": i64(2, 3, 4)}, [
        helper.make_node("CumSum", ["x", "ax1"], ["plain"]),
        helper.make_node("CumSum", ["x", "ax1"], ["exclusive"], exclusive=1),
        helper.make_node("CumSum", ["x", "ax1"], ["reverse"], reverse=1),
        helper.make_node("CumSum", ["x", "ax1"], ["both"], exclusive=1, reverse=1),
        helper.make_node("CumSum", ["xi", "axm2"], ["int"]),
    ], ["plain", "exclusive", "reverse", "both", "int"],
        consts=[const("ax1", np.array(1, np.int64)),
                const("axm2", np.array(-2, np.int64))]))

    out.append(Case("tile", 13, {"x": f32(2, 3), "xi": i64(1, 2, 2)}, [
        helper.make_node("Tile", ["x", "r"], ["y"]),
        helper.make_node("Tile", ["xi", "ri"], ["yi"]),
    ], ["y", "yi"], consts=[const("r", np.array([2, 3], np.int64)),
                            const("ri", np.array([3, 1, 2], np.int64))]))

    out.append(Case("pad", 18, {"x": f32(2, 3), "xi": i64(2, 3)}, [
        helper.make_node("Pad", ["x", "pads", "v"], ["all_axes"]),
        helper.make_node("Pad", ["x", "pads1", "", "ax"], ["one_axis"], mode="constant"),
        helper.make_node("Pad", ["xi", "pads"], ["int"]),
    ], ["all_axes", "one_axis", "int"],
        consts=[const("pads", np.array([1, 0, 2, 1], np.int64)),
                const("pads1", np.array([2, 1], np.int64)),
                const("ax", np.array([-1], np.int64)),
                const("v", np.array(1.5, np.float32))]))
    out.append(Case("pad_op13", 13, {"x": f32(2, 3)}, [
        helper.make_node("Pad", ["x", "pads"], ["y"]),
    ], ["y"], consts=[const("pads", np.array([0, 2, 1, 0], np.int64))]))

    out.append(Case("gather_elements", 13, {
        "data": f32(3, 4), "idx": np.array([[0, -1], [3, 1], [2, 2]], np.int64),
        "idx0": np.array([[2, 0, 1, -3], [0, 0, 2, 1]], np.int64)}, [
        helper.make_node("GatherElements", ["data", "idx"], ["axis1"], axis=1),
        helper.make_node("GatherElements", ["data", "idx0"], ["axis0"]),
    ], ["axis1", "axis0"]))

    out.append(Case("gather_nd", 13, {
        "data": f32(2, 3, 4),
        "idx": np.array([[1, 2], [0, -1], [1, 0]], np.int64),
        "bidx": np.array([[2], [0]], np.int64)}, [
        helper.make_node("GatherND", ["data", "idx"], ["plain"]),
        helper.make_node("GatherND", ["data", "bidx"], ["batched"], batch_dims=1),
    ], ["plain", "batched"]))

    out.append(Case("scatter_nd", 16, {"data": f32(4, 3), "upd": f32(2, 3), "x": f32(2, 4)}, [
        helper.make_node("ScatterND", ["data", "idx", "upd"], ["rows"]),
        # An in-place write into a boolean mask: mask[:, 1] = True.
        helper.make_node("Greater", ["x", "zf"], ["mask"]),
        helper.make_node("ScatterND", ["mask", "midx", "mupd"], ["written"]),
        cast_i64("written", "mask_i"),
    ], ["rows", "mask_i"],
        consts=[const("idx", np.array([[3], [-4]], np.int64)),
                const("zf", np.array(0.0, np.float32)),
                const("midx", np.array([[0, 1], [1, 1]], np.int64)),
                const("mupd", np.array([True, True]))]))

    out.append(Case("scatter_elements", 18, {"data": f32(3, 3), "upd": f32(2, 3)}, [
        helper.make_node("ScatterElements", ["data", "idx", "upd"], ["none"]),
        helper.make_node("ScatterElements", ["data", "idx1", "upd"], ["add"], axis=1,
                         reduction="add"),
    ], ["none", "add"],
        consts=[const("idx", np.array([[1, 0, 2], [0, 2, 1]], np.int64)),
                const("idx1", np.array([[1, 1, 0], [2, -1, 0]], np.int64))]))

    out.append(Case("split", 18, {"x": f32(2, 7)}, [
        helper.make_node("Split", ["x"], ["a", "b", "c"], axis=1, num_outputs=3),
        helper.make_node("Split", ["x", "sizes"], ["d", "e"], axis=-1),
    ], ["a", "b", "c", "d", "e"], consts=[const("sizes", np.array([2, 5], np.int64))]))

    xr = f32(2, 3, 4)
    out.append(Case("reduce", 18, {"x": xr, "xi": i64(2, 3, 4)}, [
        helper.make_node("ReduceMax", ["x", "ax1"], ["max1"], keepdims=0),
        helper.make_node("ReduceMax", ["xi"], ["max_all_int"]),
        helper.make_node("ReduceSum", ["x", "ax02"], ["sum02"]),
        helper.make_node("ReduceSum", ["x"], ["sum_all"], keepdims=0),
        helper.make_node("ReduceSum", ["x"], ["sum_noop"], noop_with_empty_axes=1),
        helper.make_node("ReduceSum", ["xi", "ax1"], ["sum_int"], keepdims=0),
    ], ["max1", "max_all_int", "sum02", "sum_all", "sum_noop", "sum_int"],
        consts=[const("ax1", np.array([1], np.int64)),
                const("ax02", np.array([0, -1], np.int64))]))
    out.append(Case("reduce_op13", 13, {"x": xr}, [
        helper.make_node("ReduceMax", ["x"], ["max"], axes=[-1]),
        helper.make_node("ReduceSum", ["x", "ax"], ["sum"], keepdims=0),
    ], ["max", "sum"], consts=[const("ax", np.array([1], np.int64))]))

    q, k = f32(2, 2, 3, 4, scale=1.0), f32(2, 2, 5, 4, scale=1.0)
    p, v = f32(2, 2, 3, 5, scale=1.0), f32(2, 2, 5, 4, scale=1.0)
    out.append(Case("einsum", 13, {
        "q": q, "k": k, "p": p, "v": v, "a": f32(3, 2, 4), "w": f32(3, 4, 5),
        "h": f32(2, 3, 4), "lin": f32(5, 4)}, [
        helper.make_node("Einsum", ["q", "k"], ["scores"], equation="bhqd,bhkd->bhqk"),
        helper.make_node("Einsum", ["p", "v"], ["context"], equation="bhqk,bhkd->bhqd"),
        helper.make_node("Einsum", ["a", "w"], ["bmm"], equation="bij,bjk->bik"),
        helper.make_node("Einsum", ["a"], ["transposed"], equation="bij->jbi"),
        helper.make_node("Einsum", ["h", "lin"], ["linear"], equation="bsd,od->bso"),
        helper.make_node("Einsum", ["q", "k"], ["heads_out"], equation="bhqd, bhkd -> bqhk"),
    ], ["scores", "context", "bmm", "transposed", "linear", "heads_out"]))

    out.append(Case("layernorm_stash", 20, {"x": f32(2, 3, 8)}, [
        helper.make_node("LayerNormalization", ["x", "g", "bb"], ["y"], axis=-1,
                         epsilon=1e-5, stash_type=1),
    ], ["y"], consts=[const("g", f32(8, scale=1.0)), const("bb", f32(8, scale=1.0))]))

    out.append(Case("rmsnorm", 23, {"x": f32(2, 3, 8)}, [
        helper.make_node("RMSNormalization", ["x", "g"], ["y"], epsilon=1e-6),
    ], ["y"], consts=[const("g", f32(8, scale=1.0))]))

    # Attention-23 (torch.onnx's scaled_dot_product_attention at opset 23):
    # grouped heads, float and bool masks, a scale, is_causal, the 3-D form.
    out.append(Case("attention", 23, {
        "q": f32(2, 4, 5, 8, scale=1.0), "k": f32(2, 2, 7, 8, scale=1.0),
        "v": f32(2, 2, 7, 6, scale=1.0), "m": f32(5, 7),
        "q3": f32(2, 5, 32, scale=1.0), "k3": f32(2, 5, 16, scale=1.0),
        "v3": f32(2, 5, 16, scale=1.0), "kc": f32(2, 2, 5, 8, scale=1.0),
        "vc": f32(2, 2, 5, 6, scale=1.0)}, [
        helper.make_node("Attention", ["q", "k", "v", "m"], ["float_mask"]),
        helper.make_node("Greater", ["m", "zero"], ["keep"]),
        helper.make_node("Attention", ["q", "k", "v", "keep"], ["bool_mask"], scale=0.25),
        helper.make_node("Attention", ["q", "kc", "vc"], ["causal"], is_causal=1),
        helper.make_node("Attention", ["q3", "k3", "v3"], ["three_d"], q_num_heads=4,
                         kv_num_heads=2),
    ], ["float_mask", "bool_mask", "causal", "three_d"],
        consts=[const("zero", np.array(-0.5, np.float32))]))

    # RotaryEmbedding-23: halves and interleaved pairs, a partial rotary
    # dimension, the 3-D form, caches indexed by position ids or per token.
    pos = np.arange(16)[:, None] * (10000.0 ** (-np.arange(4) / 4))[None, :]
    pos2 = np.arange(16)[:, None] * (10000.0 ** (-np.arange(2) / 2))[None, :]
    ids = RNG.integers(0, 16, size=(2, 5)).astype(np.int64)
    out.append(Case("rotary", 23, {"x": f32(2, 3, 5, 8, scale=1.0), "ids": ids,
                                   "x3": f32(2, 5, 24, scale=1.0)}, [
        helper.make_node("RotaryEmbedding", ["x", "cos", "sin", "ids"], ["halves"]),
        helper.make_node("RotaryEmbedding", ["x", "cos2", "sin2", "ids"], ["pairs"],
                         interleaved=1, rotary_embedding_dim=4),
        helper.make_node("RotaryEmbedding", ["x3", "cos", "sin", "ids"], ["three_d"],
                         num_heads=3),
        helper.make_node("Gather", ["cos", "ids"], ["cos_bs"]),
        helper.make_node("Gather", ["sin", "ids"], ["sin_bs"]),
        helper.make_node("RotaryEmbedding", ["x", "cos_bs", "sin_bs"], ["no_ids"]),
    ], ["halves", "pairs", "three_d", "no_ids"],
        consts=[const("cos", np.cos(pos).astype(np.float32)),
                const("sin", np.sin(pos).astype(np.float32)),
                const("cos2", np.cos(pos2).astype(np.float32)),
                const("sin2", np.sin(pos2).astype(np.float32))]))

    # ONNX Runtime's fused norms (its transformer optimizer's output).
    out.append(Case("ms_norms", 17, {"x": f32(2, 3, 8), "skip": f32(2, 3, 8)}, [
        helper.make_node("SkipLayerNormalization", ["x", "skip", "g", "bt", "bias"],
                         ["skip_ln", "", "", "sum"], domain="com.microsoft", epsilon=1e-5),
        helper.make_node("SkipSimplifiedLayerNormalization", ["x", "skip", "g"],
                         ["skip_rms"], domain="com.microsoft", epsilon=1e-6),
        helper.make_node("SimplifiedLayerNormalization", ["x", "g"], ["rms"],
                         axis=-1, epsilon=1e-6),
    ], ["skip_ln", "sum", "skip_rms", "rms"],
        consts=[const("g", f32(8, scale=1.0)), const("bt", f32(8, scale=1.0)),
                const("bias", f32(8, scale=1.0))], microsoft=True))

    # Versions 19 to 23 of ops the importer already read.
    out.append(Case("versions_op23", 23, {"x": f32(2, 3, 4), "xi": i64(4, 6)}, [
        helper.make_node("Cast", ["xi"], ["xf"], to=F, saturate=1),
        helper.make_node("Reshape", ["xf", "shape"], ["r"]),
        helper.make_node("Shape", ["x"], ["s"], start=1, end=3),
        helper.make_node("Size", ["x"], ["n"]),
        helper.make_node("Unsqueeze", ["x", "ax0"], ["u"]),
        helper.make_node("Squeeze", ["u", "ax0"], ["sq"]),
        helper.make_node("Transpose", ["sq"], ["t"], perm=[0, 2, 1]),
        helper.make_node("Flatten", ["t"], ["fl"], axis=1),
        helper.make_node("Identity", ["fl"], ["id"]),
        helper.make_node("ConstantOfShape", ["s"], ["cs"],
                         value=numpy_helper.from_array(np.array([2], np.int64))),
        helper.make_node("Equal", ["xi", "two"], ["eq"]),
        cast_i64("eq", "eq_i"),
        helper.make_node("Concat", ["s", "n1"], ["sn"], axis=0),
        helper.make_node("Reshape", ["id", "shape2"], ["id2"]),
        helper.make_node("Add", ["r", "id2"], ["sum"]),
    ], ["sum", "sn", "cs", "eq_i"],
        consts=[const("shape", np.array([6, 4], np.int64)),
                const("shape2", np.array([-1, 4], np.int64)),
                const("ax0", np.array([0], np.int64)),
                const("two", np.array(2, np.int64)),
                const("n1", np.array([24], np.int64))]))

    # Gather with run-time indices from a computed tensor (the TorchScript
    # exporter's mask[batch_idx, kv_idx]: a flattened bool mask gathered at
    # batch * S + kv): along axis 0 and 1, negative indices, a scalar index.
    out.append(Case("gather_runtime", 13, {
        "x": f32(3, 4), "idx": np.array([[0, -1, 2], [3, -4, 1]], np.int64),
        "idx0": np.array([2, -3, 1, -1], np.int64), "s1": np.array([-2], np.int64),
        "m": (RNG.random((2, 5)) < 0.5).astype(np.int64),
        "b5": np.arange(2, dtype=np.int64).reshape(2, 1, 1, 1)}, [
        helper.make_node("Abs", ["x"], ["ax"]),
        helper.make_node("Gather", ["ax", "idx"], ["axis1"], axis=1),
        helper.make_node("Gather", ["ax", "idx0"], ["axis0"]),
        helper.make_node("Squeeze", ["s1", "ax0"], ["s"]),
        helper.make_node("Gather", ["ax", "s"], ["scalar"], axis=-1),
        helper.make_node("Cast", ["m"], ["mb"], to=B),
        helper.make_node("Flatten", ["mb"], ["flat"], axis=2),
        helper.make_node("Mul", ["b5", "five"], ["rowstart"]),
        helper.make_node("Add", ["rowstart", "kv"], ["pos"]),
        helper.make_node("Gather", ["flat", "pos"], ["picked"]),
        cast_i64("picked", "mask"),
    ], ["axis1", "axis0", "scalar", "mask"],
        consts=[const("ax0", np.array([0], np.int64)),
                const("five", np.array(5, np.int64)),
                const("kv", np.arange(5, dtype=np.int64).reshape(1, 1, 1, 5))]))

    # RotaryEmbedding-23 with caches that broadcast over the batch, as
    # torch.onnx writes them: [1, S, R / 2], computed in the graph from the
    # positions; and over the sequence, as the spec's numpy reference does. (onnxruntime 1.32 rejects this form: the references come
    # from ONNX's reference evaluator.)
    xr = f32(2, 3, 5, 8, scale=1.0)
    freqs = (10000.0 ** (-np.arange(4) / 4)).astype(np.float32)
    freqs2 = (10000.0 ** (-np.arange(2) / 2)).astype(np.float32)
    out.append(Case("rotary_bcast", 23, {"x": xr, "pos": np.arange(5, dtype=np.float32).reshape(1, 5, 1),
                                         "x3": f32(2, 5, 24, scale=1.0)}, [
        helper.make_node("Mul", ["pos", "freqs"], ["ang"]),
        helper.make_node("Cos", ["ang"], ["cos"]),
        helper.make_node("Sin", ["ang"], ["sin"]),
        helper.make_node("RotaryEmbedding", ["x", "cos", "sin"], ["halves"]),
        helper.make_node("Mul", ["pos", "freqs2"], ["ang2"]),
        helper.make_node("Cos", ["ang2"], ["cos2"]),
        helper.make_node("Sin", ["ang2"], ["sin2"]),
        helper.make_node("RotaryEmbedding", ["x", "cos2", "sin2"], ["pairs"],
                         interleaved=1, rotary_embedding_dim=4),
        helper.make_node("RotaryEmbedding", ["x3", "cos", "sin"], ["three_d"],
                         num_heads=3),
        # One position for every token: [1, 1, R / 2].
        helper.make_node("Slice", ["cos", "s2", "s3", "ax1"], ["cos_one"]),
        helper.make_node("Slice", ["sin", "s2", "s3", "ax1"], ["sin_one"]),
        helper.make_node("RotaryEmbedding", ["x", "cos_one", "sin_one"], ["one_pos"]),
    ], ["halves", "pairs", "three_d", "one_pos"],
        consts=[const("freqs", freqs), const("freqs2", freqs2),
                const("s2", np.array([2], np.int64)), const("s3", np.array([3], np.int64)),
                const("ax1", np.array([1], np.int64))],
        onnx_reference=True))

    # Outputs that are one value: two equal computations (CSE merges them),
    # an Identity of another output, and an input passed through.
    x = f32(2, 3, 4)
    out.append(Case("shared_outputs", 17, {"x": x}, [
        helper.make_node("Relu", ["x"], ["relu_a"]),
        helper.make_node("Relu", ["x"], ["relu_b"]),
        helper.make_node("Identity", ["relu_a"], ["relu_c"]),
        helper.make_node("Identity", ["x"], ["x_out"]),
    ], ["relu_a", "relu_b", "relu_c", "x_out"]))

    # Pad's other modes (wrap from opset 19), on one axis and on both, with
    # pads up to one less than the axis (onnxruntime's reflect limit).
    out.append(Case("pad_modes", 19, {"x": f32(3, 4), "xi": i64(2, 3)}, [
        helper.make_node("Pad", ["x", "pads"], ["edge"], mode="edge"),
        helper.make_node("Pad", ["x", "pads"], ["reflect"], mode="reflect"),
        helper.make_node("Pad", ["x", "pads"], ["wrap"], mode="wrap"),
        helper.make_node("Pad", ["x", "pads1", "", "ax"], ["reflect_axis"],
                         mode="reflect"),
        helper.make_node("Pad", ["xi", "pads2"], ["edge_int"], mode="edge"),
    ], ["edge", "reflect", "wrap", "reflect_axis", "edge_int"],
        consts=[const("pads", np.array([1, 2, 2, 3], np.int64)),
                const("pads1", np.array([3, 1], np.int64)),
                const("ax", np.array([-1], np.int64)),
                const("pads2", np.array([0, 1, 1, 2], np.int64))]))

    # Attention-23 with past keys and values: the presents are the
    # concatenations; a float mask over the past and the new keys (4-D and
    # the 3-D form).
    out.append(Case("attention_past", 23, {
        "q": f32(2, 4, 3, 8, scale=1.0), "k": f32(2, 2, 3, 8, scale=1.0),
        "v": f32(2, 2, 3, 6, scale=1.0), "pk": f32(2, 2, 5, 8, scale=1.0),
        "pv": f32(2, 2, 5, 6, scale=1.0), "m": f32(3, 8),
        "q3": f32(2, 3, 32, scale=1.0), "k3": f32(2, 3, 16, scale=1.0),
        "v3": f32(2, 3, 16, scale=1.0), "pk3": f32(2, 2, 5, 8, scale=1.0),
        "pv3": f32(2, 2, 5, 8, scale=1.0)}, [
        helper.make_node("Attention", ["q", "k", "v", "m", "pk", "pv"],
                         ["y", "present_k", "present_v"]),
        helper.make_node("Attention", ["q3", "k3", "v3", "", "pk3", "pv3"],
                         ["y3", "present_k3", "present_v3"], q_num_heads=4,
                         kv_num_heads=2),
    ], ["y", "present_k", "present_v", "y3", "present_k3", "present_v3"]))

    # ScatterND / ScatterElements with indices that are graph inputs (run
    # time; the -folded twin folds them): rows, single elements with a
    # negative index, a bool mask written in place, elements along an axis
    # with reduction none and add (a repeated index), rows multiplied in.
    out.append(Case("scatter_runtime", 18, {
        "data": f32(4, 5), "rows": np.array([[3], [0]], np.int64),
        "row_upd": f32(2, 5), "cells": np.array([[1, 2], [-1, 0]], np.int64),
        "cell_upd": f32(2), "mx": f32(2, 6),
        "mask_idx": np.array([[0, 4], [1, 1], [1, 5]], np.int64),
        "along": np.array([[0, 4], [2, -1]], np.int64),
        "along_upd": f32(2, 2),
        "repeat": np.array([[1, 1, 3]], np.int64), "repeat_upd": f32(1, 3)}, [
        helper.make_node("ScatterND", ["data", "rows", "row_upd"], ["rows_out"]),
        helper.make_node("ScatterND", ["data", "cells", "cell_upd"], ["cells_out"]),
        helper.make_node("Greater", ["mx", "zf"], ["mask"]),
        helper.make_node("ScatterND", ["mask", "mask_idx", "falses"], ["mask_b"]),
        cast_i64("mask_b", "mask_out"),
        helper.make_node("ScatterElements", ["data", "along", "along_upd"],
                         ["along_out"], axis=1),
        helper.make_node("ScatterElements", ["data", "repeat", "repeat_upd"],
                         ["add_out"], axis=1, reduction="add"),
        helper.make_node("ScatterND", ["data", "rows", "row_upd"], ["nd_mul"],
                         reduction="mul"),
    ], ["rows_out", "cells_out", "mask_out", "along_out", "add_out", "nd_mul"],
        consts=[const("falses", np.zeros(3, bool)),
                const("zf", np.array(0.0, np.float32))]))

    # ArgMax/ArgMin: first and last index of ties (integers with repeats),
    # keepdims, negative axes; CLIP's text tower pools at ArgMax of its ids.
    out.append(Case("argmax", 13, {"x": f32(2, 5, 4), "xi": i64(3, 6, lo=0, hi=3)}, [
        helper.make_node("ArgMax", ["x"], ["max_keep"], axis=1),
        helper.make_node("ArgMin", ["x"], ["min_axis0"], axis=0, keepdims=0),
        helper.make_node("ArgMax", ["xi"], ["first"], axis=-1, keepdims=0),
        helper.make_node("ArgMax", ["xi"], ["last"], axis=-1, keepdims=0,
                         select_last_index=1),
        helper.make_node("ArgMin", ["xi"], ["min_last"], axis=0,
                         select_last_index=1),
    ], ["max_keep", "min_axis0", "first", "last", "min_last"]))

    # The patch embedding of vision transformers: a Conv whose stride is its
    # kernel, with and without bias and kernel_shape.
    out.append(Case("conv_patch", 13, {"x": f32(2, 3, 8, 12)}, [
        helper.make_node("Conv", ["x", "w", "b"], ["y"], strides=[4, 4],
                         kernel_shape=[4, 4], pads=[0, 0, 0, 0]),
        helper.make_node("Conv", ["x", "w2"], ["y2"], strides=[2, 3]),
    ], ["y", "y2"], consts=[const("w", f32(5, 3, 4, 4, scale=0.5)),
                            const("b", f32(5)),
                            const("w2", f32(4, 3, 2, 3, scale=0.5))]))

    # Log and integer Neg (T5's relative position buckets negate int64
    # distances and take their log).
    out.append(Case("log", 13, {"x": np.abs(f32(3, 4)) + 0.1,
                                "xi": i64(3, 4)}, [
        helper.make_node("Log", ["x"], ["y"]),
        helper.make_node("Neg", ["xi"], ["neg_int"]),
    ], ["y", "neg_int"]))

    return out


def main():
    os.makedirs(OUT, exist_ok=True)
    for case in cases():
        model = build(case, folded=False)
        if case.onnx_reference:
            refs = ReferenceEvaluator(model).run(case.outputs, case.inputs)
        else:
            sess = ort.InferenceSession(model.SerializeToString(),
                                        providers=["CPUExecutionProvider"])
            refs = sess.run(case.outputs, case.inputs)
        shapes = {o: r.shape for o, r in zip(case.outputs, refs)}
        model = build(case, folded=False, shapes=shapes)
        if not case.microsoft:
            onnx.checker.check_model(model)
        onnx.save(model, os.path.join(OUT, case.name + ".onnx"))
        folded = build(case, folded=True, shapes=shapes)
        if not case.microsoft:
            onnx.checker.check_model(folded)
        onnx.save(folded, os.path.join(OUT, case.name + "-folded.onnx"))
        for k, v in case.inputs.items():
            np.save(os.path.join(OUT, "%s.%s.npy" % (case.name, k)), v)
        for o, r in zip(case.outputs, refs):
            np.save(os.path.join(OUT, "%s.%s.ref.npy" % (case.name, o)), r)
        print(case.name, [(o, r.shape, r.dtype.name) for o, r in zip(case.outputs, refs)])


if __name__ == "__main__":
    main()
