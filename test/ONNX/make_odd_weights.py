#!/usr/bin/python3
"""Writes a small ONNX model whose weights are partly of sizes that are not
multiples of 64 bytes, with an input and numpy's reference output:

    make_odd_weights.py DIR

DIR/odd_weights-op17.onnx, DIR/odd_weights.x.npy, DIR/odd_weights.ref.npy
(the layout onnx_check.py reads). y = ((x @ W1 + b1) @ W2 + b2) @ W3, with
W1 [8, 64] and b1 [64] (2048 and 256 bytes), W2 [64, 13] (3328 bytes), b2
[13] (52 bytes) and W3 [13, 7] (364 bytes)."""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(7)
    w = {"W1": rng.standard_normal((8, 64)), "b1": rng.standard_normal(64),
         "W2": rng.standard_normal((64, 13)), "b2": rng.standard_normal(13),
         "W3": rng.standard_normal((13, 7))}
    w = {k: v.astype(np.float32) for k, v in w.items()}
    x = rng.standard_normal((2, 8)).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "W1"], ["h1"]),
             helper.make_node("Add", ["h1", "b1"], ["a1"]),
             helper.make_node("MatMul", ["a1", "W2"], ["h2"]),
             helper.make_node("Add", ["h2", "b2"], ["a2"]),
             helper.make_node("MatMul", ["a2", "W3"], ["y"])]
    graph = helper.make_graph(
        nodes, "odd_weights",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 7])],
        [numpy_helper.from_array(v, k) for k, v in w.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, os.path.join(out, "odd_weights-op17.onnx"))
    np.save(os.path.join(out, "odd_weights.x.npy"), x)
    ref = ((x.astype(np.float64) @ w["W1"] + w["b1"]) @ w["W2"] + w["b2"]) @ w["W3"]
    np.save(os.path.join(out, "odd_weights.ref.npy"), ref.astype(np.float32))


if __name__ == "__main__":
    main()
