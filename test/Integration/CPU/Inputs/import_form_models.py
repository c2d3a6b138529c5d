#!/usr/bin/env python3
"""Hand-written transformer layers in the ONNX importer's output form, their
weights and inputs, and a numpy reference, for raise-imported.test.

    import_form_models.py mlir MODEL OUT.mlir
        writes MODEL as the ONNX importer would (one func.func @main, ops in
        the form the raising passes expect: linalg named ops on equal shapes
        with explicit linalg.broadcast, MatMul as collapse + matmul +
        expand, ReduceMean as linalg.reduce + linalg.div, initializers with
        more than 16 elements as attn.weight under ONNX-style names).
    import_form_models.py gen MODEL DIR
        writes seeded random DIR/MODEL.safetensors and DIR/MODEL.in<i>.npy.
    import_form_models.py check MODEL DIR LABEL=OUT.npy [...]
        compares each output with the numpy reference of the layer (written
        from the PyTorch modules' definitions with test/reference/attn_ref.py,
        not from the IR) and prints one PASS/FAIL line per output; exits 1 on
        any failure. Tolerance: max abs error <= 1e-4 * max(1, max|ref|).

Models (B = 2, S = 8, E = 32, 4 heads of 8, FFN 64):
    post_ln_relu   nn.TransformerEncoderLayer-like post-LN block, ReLU FFN,
                   decomposed LayerNorm (opset < 17 export), no mask.
    pre_ln_gelu    pre-LN block, erf GELU, padding mask from an int64
                   `attention_mask` input as (1 - m) * -10000 (BERT style),
                   scale 1/sqrt(d) split between Q and K^T.
    causal_tanh    pre-LN GPT-style block with a constant lower-triangular
                   0/-inf mask, tanh GELU, RMSNorm before the FFN.
    post_ln_relu2  two post_ln_relu layers (weights `layers.<i>.*`); `check`
                   takes `layers=i,j` to compare with the kept layers only
                   (LayerDrop's keep-list).
"""
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "reference"))
import attn_ref as ref  # noqa: E402
import tensorio  # noqa: E402

B, S, E, H, F = 2, 8, 32, 4, 64
D = E // H
MODELS = ("post_ln_relu", "pre_ln_gelu", "causal_tanh", "post_ln_relu2")


def ty(shape, et="f32"):
    return "tensor<" + "".join(f"{d}x" for d in shape) + et + ">"


class Emitter:
    """Writes import-form IR; values are (name, shape) pairs."""

    def __init__(self):
        self.lines = []
        self.n = 0

    def fresh(self):
        self.n += 1
        return f"%v{self.n}"

    def op(self, text, shape, et="f32"):
        name = self.fresh()
        self.lines.append(f"  {name} = {text}")
        return (name, tuple(shape), et)

    def empty(self, shape, et="f32"):
        return self.op(f"tensor.empty() : {ty(shape, et)}", shape, et)

    def zeros(self, shape):
        zero = self.op("arith.constant 0.0 : f32", ())
        e = self.empty(shape)
        return self.op(f"linalg.fill ins({zero[0]} : f32) outs({e[0]} : "
                       f"{ty(shape)}) -> {ty(shape)}", shape)

    def weight(self, name, shape):
        return self.op(f'attn.weight "{name}" : {ty(shape)}', shape)

    def scalar(self, value):
        return self.op(f"arith.constant dense<{float(value):.9e}> : "
                       f"tensor<f32>", ())

    def collapse(self, v, groups, shape):
        g = ", ".join("[" + ", ".join(map(str, gr)) + "]" for gr in groups)
        return self.op(f"tensor.collapse_shape {v[0]} [{g}] : {ty(v[1], v[2])}"
                       f" into {ty(shape, v[2])}", shape, v[2])

    def expand(self, v, groups, shape):
        g = ", ".join("[" + ", ".join(map(str, gr)) + "]" for gr in groups)
        out = ", ".join(map(str, shape))
        return self.op(f"tensor.expand_shape {v[0]} [{g}] output_shape [{out}]"
                       f" : {ty(v[1], v[2])} into {ty(shape, v[2])}", shape,
                       v[2])

    def broadcast_to(self, v, shape):
        """numpy broadcasting as imported: drop the broadcast unit dims with
        collapse_shape, then linalg.broadcast."""
        vs = v[1]
        if vs == tuple(shape):
            return v
        pad = len(shape) - len(vs)
        padded = (1,) * pad + vs
        bdims = [i for i in range(len(shape))
                 if padded[i] == 1 and shape[i] != 1] + list(range(pad))
        bdims = sorted(set(bdims))
        kept = [i for i in range(len(shape)) if i not in bdims]
        kept_src = [i - pad for i in kept]
        # Collapse v to the kept dims: each dropped unit dim joins a group.
        if len(kept_src) != len(vs):
            groups, cur = [], []
            for i in range(len(vs)):
                cur.append(i)
                if i in kept_src:
                    groups.append(cur)
                    cur = []
            if cur:
                if groups:
                    groups[-1].extend(cur)
            v = self.collapse(v, groups if kept_src else [],
                              tuple(vs[i] for i in kept_src))
        e = self.empty(shape)
        dims = ", ".join(map(str, bdims))
        return self.op(f"linalg.broadcast ins({v[0]} : {ty(v[1])}) outs("
                       f"{e[0]} : {ty(shape)}) dimensions = [{dims}]", shape)

    def binary(self, kind, a, b):
        shape = tuple(np.broadcast_shapes(a[1], b[1]))
        a = self.broadcast_to(a, shape)
        b = self.broadcast_to(b, shape)
        e = self.empty(shape)
        return self.op(f"linalg.{kind} ins({a[0]}, {b[0]} : {ty(shape)}, "
                       f"{ty(shape)}) outs({e[0]} : {ty(shape)}) -> "
                       f"{ty(shape)}", shape)

    def unary(self, kind, a):
        e = self.empty(a[1])
        return self.op(f"linalg.{kind} ins({a[0]} : {ty(a[1])}) outs({e[0]} :"
                       f" {ty(a[1])}) -> {ty(a[1])}", a[1])

    def transpose(self, a, perm):
        shape = tuple(a[1][p] for p in perm)
        e = self.empty(shape)
        p = ", ".join(map(str, perm))
        return self.op(f"linalg.transpose ins({a[0]} : {ty(a[1])}) outs({e[0]}"
                       f" : {ty(shape)}) permutation = [{p}]", shape)

    def matmul_weight(self, x, w):
        """MatMul [..., K] x [K, N] as imported."""
        lead = x[1][:-1]
        m = int(np.prod(lead))
        rank = len(x[1])
        xc = self.collapse(x, [list(range(rank - 1)), [rank - 1]],
                           (m, x[1][-1]))
        n = w[1][1]
        z = self.zeros((m, n))
        mm = self.op(f"linalg.matmul ins({xc[0]}, {w[0]} : {ty(xc[1])}, "
                     f"{ty(w[1])}) outs({z[0]} : {ty((m, n))}) -> "
                     f"{ty((m, n))}", (m, n))
        return self.expand(mm, [list(range(rank - 1)), [rank - 1]],
                           lead + (n,))

    def batch_matmul4(self, a, b):
        """MatMul [B, H, M, K] x [B, H, K, N] as imported."""
        groups = [[0, 1], [2], [3]]
        ac = self.collapse(a, groups, (a[1][0] * a[1][1],) + a[1][2:])
        bc = self.collapse(b, groups, (b[1][0] * b[1][1],) + b[1][2:])
        shape = (ac[1][0], ac[1][1], bc[1][2])
        z = self.zeros(shape)
        mm = self.op(f"linalg.batch_matmul ins({ac[0]}, {bc[0]} : "
                     f"{ty(ac[1])}, {ty(bc[1])}) outs({z[0]} : {ty(shape)}) "
                     f"-> {ty(shape)}", shape)
        return self.expand(mm, groups, a[1][:2] + shape[1:])

    def reduce_mean_last(self, x):
        """ReduceMean(axes=[-1], keepdims=1) as imported."""
        rows = x[1][:-1]
        z = self.zeros(rows)
        last = len(x[1]) - 1
        s = self.op(
            f"linalg.reduce ins({x[0]} : {ty(x[1])}) outs({z[0]} : "
            f"{ty(rows)}) dimensions = [{last}]\n"
            f"    (%in: f32, %acc: f32) {{\n"
            f"      %sum = arith.addf %in, %acc : f32\n"
            f"      linalg.yield %sum : f32\n"
            f"    }}", rows)
        count = self.scalar(float(x[1][-1]))
        mean = self.binary("div", s, count)
        groups = [[i] for i in range(len(rows) - 1)] + [[len(rows) - 1,
                                                         len(rows)]]
        return self.expand(mean, groups, rows + (1,))

    def linear(self, x, prefix, n):
        w = self.weight(f"onnx::MatMul_{prefix}", (x[1][-1], n))
        b = self.weight(f"{prefix}.bias", (n,))
        return self.binary("add", b, self.matmul_weight(x, w))

    def layer_norm(self, x, prefix, eps=1e-5):
        mean = self.reduce_mean_last(x)
        d = self.binary("sub", x, mean)
        sq = self.binary("powf", d, self.scalar(2.0))
        var = self.reduce_mean_last(sq)
        std = self.unary("sqrt", self.binary("add", var, self.scalar(eps)))
        n = self.binary("div", d, std)
        g = self.weight(f"{prefix}.weight", (E,))
        b = self.weight(f"{prefix}.bias", (E,))
        return self.binary("add", self.binary("mul", n, g), b)

    def rms_norm(self, x, prefix, eps=1e-6):
        sq = self.binary("powf", x, self.scalar(2.0))
        ms = self.reduce_mean_last(sq)
        r = self.unary("reciprocal",
                       self.unary("sqrt", self.binary("add", ms,
                                                      self.scalar(eps))))
        g = self.weight(f"{prefix}.weight", (E,))
        return self.binary("mul", g, self.binary("mul", x, r))

    def gelu_erf(self, x):
        u = self.binary("div", x, self.scalar(1.4142135381698608))
        p = self.binary("add", self.unary("erf", u), self.scalar(1.0))
        return self.binary("mul", self.binary("mul", x, p), self.scalar(0.5))

    def gelu_tanh(self, x):
        x3 = self.binary("powf", x, self.scalar(3.0))
        inner = self.binary("add", x, self.binary("mul", self.scalar(0.044715),
                                                  x3))
        t = self.unary("tanh", self.binary("mul", self.scalar(
            0.7978845834732056), inner))
        return self.binary("mul", self.binary("mul", self.scalar(0.5), x),
                           self.binary("add", self.scalar(1.0), t))

    def relu(self, x):
        return self.op(f"attn.relu {x[0]} : {ty(x[1])}", x[1])

    def heads(self, x):
        """[B, S, E] -> [B, H, S, D] (Reshape + Transpose)."""
        x4 = self.expand(x, [[0], [1], [2, 3]], (B, S, H, D))
        return self.transpose(x4, (0, 2, 1, 3))

    def attention(self, x, prefix, mask=None, split_scale=False):
        q = self.heads(self.linear(x, f"{prefix}.q", E))
        k4 = self.expand(self.linear(x, f"{prefix}.k", E), [[0], [1], [2, 3]],
                         (B, S, H, D))
        v = self.heads(self.linear(x, f"{prefix}.v", E))
        kt = self.transpose(k4, (0, 2, 3, 1))
        if split_scale:
            # torch SDPA export: sqrt(scale) on Q and on K^T.
            r = math.sqrt(1.0 / math.sqrt(D))
            q = self.binary("mul", q, self.scalar(r))
            kt = self.binary("mul", kt, self.scalar(r))
            s = self.batch_matmul4(q, kt)
        else:
            s = self.binary("div", self.batch_matmul4(q, kt),
                            self.scalar(math.sqrt(D)))
        if mask is not None:
            s = self.binary("add", s, mask)
        p = self.op(f"attn.softmax {s[0]} dim = 3 : {ty(s[1])}", s[1])
        o = self.batch_matmul4(p, v)
        o = self.transpose(o, (0, 2, 1, 3))
        o = self.collapse(o, [[0], [1], [2, 3]], (B, S, E))
        return self.linear(o, f"{prefix}.o", E)

    def ffn(self, x, prefix, act):
        h = self.linear(x, f"{prefix}.up", F)
        return self.linear(act(h), f"{prefix}.down", E)


def emit(model):
    em = Emitter()
    x = ("%x", (B, S, E), "f32")
    args = [f"%x: {ty((B, S, E))}"]
    if model in ("post_ln_relu", "post_ln_relu2"):
        y = x
        for p in layer_prefixes(model):
            h = em.layer_norm(em.binary("add", y, em.attention(y, p + "attn")),
                              p + "ln1")
            y = em.layer_norm(em.binary("add", h, em.ffn(h, p + "ffn",
                                                         em.relu)), p + "ln2")
    elif model == "pre_ln_gelu":
        args.append(f"%attention_mask: {ty((B, S), 'i64')}")
        m = ("%attention_mask", (B, S), "i64")
        e = em.empty((B, S))
        mf = em.op(
            f"linalg.generic {{indexing_maps = [affine_map<(d0, d1) -> (d0, "
            f"d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = "
            f"[\"parallel\", \"parallel\"]}} ins({m[0]} : {ty(m[1], 'i64')}) "
            f"outs({e[0]} : {ty((B, S))}) {{\n"
            f"    ^bb0(%in: i64, %out: f32):\n"
            f"      %c = arith.sitofp %in : i64 to f32\n"
            f"      linalg.yield %c : f32\n"
            f"    }} -> {ty((B, S))}", (B, S))
        m4 = em.expand(mf, [[0], [1, 2, 3]], (B, 1, 1, S))
        inv = em.binary("sub", em.scalar(1.0), m4)
        bias = em.binary("mul", inv, em.scalar(-10000.0))
        h = em.binary("add", x, em.attention(em.layer_norm(x, "ln1"), "attn",
                                             mask=bias, split_scale=True))
        y = em.binary("add", h, em.ffn(em.layer_norm(h, "ln2"), "ffn",
                                       em.gelu_erf))
    elif model == "causal_tanh":
        tri = np.where(np.tril(np.ones((S, S), bool)), 0.0, -np.inf)
        vals = ", ".join(
            "[" + ", ".join("0xFF800000" if v < 0 else "0.0" for v in row) +
            "]" for row in tri)
        mask = em.op(f"arith.constant dense<[[[{vals}]]]> : "
                     f"{ty((1, 1, S, S))}",
                     (1, 1, S, S))
        h = em.binary("add", x, em.attention(em.layer_norm(x, "ln1"), "attn",
                                             mask=mask))
        y = em.binary("add", h, em.ffn(em.rms_norm(h, "ln2"), "ffn",
                                       em.gelu_tanh))
    else:
        raise SystemExit(f"unknown model {model}")
    body = "\n".join(em.lines)
    return (f"// Generated by import_form_models.py mlir {model}: a layer in"
            f" the ONNX importer's output form.\n"
            f"func.func @main({', '.join(args)}) -> {ty((B, S, E))} {{\n"
            f"{body}\n  return {y[0]} : {ty((B, S, E))}\n}}\n")


def layer_prefixes(model):
    return ["layers.0.", "layers.1."] if model == "post_ln_relu2" else [""]


def weight_shapes(model):
    shapes = {}
    for lp in layer_prefixes(model):
        for p, n_in, n_out in (("attn.q", E, E), ("attn.k", E, E),
                               ("attn.v", E, E), ("attn.o", E, E),
                               ("ffn.up", E, F), ("ffn.down", F, E)):
            shapes[f"onnx::MatMul_{lp}{p}"] = (n_in, n_out)
            shapes[f"{lp}{p}.bias"] = (n_out,)
        for n in ("ln1", "ln2"):
            shapes[f"{lp}{n}.weight"] = (E,)
            if not (model == "causal_tanh" and n == "ln2"):
                shapes[f"{lp}{n}.bias"] = (E,)
    return shapes


def gen(model, d):
    rng = np.random.default_rng(sum(map(ord, model)))
    os.makedirs(d, exist_ok=True)
    weights = {}
    for name, shape in weight_shapes(model).items():
        scale = 1.0 / math.sqrt(shape[0]) if len(shape) == 2 else 0.1
        w = rng.standard_normal(shape) * scale
        if name.endswith(".weight"):
            w = 1.0 + w
        weights[name] = w.astype(np.float32)
    tensorio.write_safetensors(os.path.join(d, f"{model}.safetensors"),
                               weights)
    np.save(os.path.join(d, f"{model}.in0.npy"),
            rng.standard_normal((B, S, E)).astype(np.float32))
    if model == "pre_ln_gelu":
        mask = np.ones((B, S), np.int64)
        mask[1, 5:] = 0  # the second sequence is 5 tokens long
        np.save(os.path.join(d, f"{model}.in1.npy"), mask)


def reference(model, d, layers=None):
    W = tensorio.read_safetensors(os.path.join(d, f"{model}.safetensors"))
    x = np.load(os.path.join(d, f"{model}.in0.npy")).astype(np.float64)

    def lin(t, p):
        return ref.linear(t, W[f"onnx::MatMul_{p}"].T, W[f"{p}.bias"])

    def attention(t, bias=None, causal=False, lp=""):
        def split(u):
            return u.reshape(B, S, H, D).transpose(0, 2, 1, 3)
        q, k, v = (split(lin(t, f"{lp}attn.{n}")) for n in "qkv")
        o = ref.sdpa(q, k, v, bias=bias, score="scaled_dot",
                     causal=causal)
        return lin(o.transpose(0, 2, 1, 3).reshape(B, S, E), f"{lp}attn.o")

    def ln(t, p):
        return ref.layer_norm(t, W[f"{p}.weight"], W[f"{p}.bias"], 1e-5)

    if model in ("post_ln_relu", "post_ln_relu2"):
        prefixes = layer_prefixes(model)
        if layers is not None:
            prefixes = [prefixes[i] for i in layers]
        for lp in prefixes:
            h = ln(x + attention(x, lp=lp), lp + "ln1")
            x = ln(h + lin(ref.relu(lin(h, lp + "ffn.up")), lp + "ffn.down"),
                   lp + "ln2")
        return x
    if model == "pre_ln_gelu":
        m = np.load(os.path.join(d, f"{model}.in1.npy"))
        bias = ((1.0 - m) * -10000.0)[:, None, None, :]
        h = x + attention(ln(x, "ln1"), bias=bias)
        return h + lin(ref.gelu(lin(ln(h, "ln2"), "ffn.up")), "ffn.down")
    h = x + attention(ln(x, "ln1"), causal=True)
    n = ref.rms_norm(h, W["ln2.weight"], 1e-6)
    return h + lin(ref.gelu_tanh(lin(n, "ffn.up")), "ffn.down")


def check(model, d, outputs):
    layers = None
    if outputs and outputs[0].startswith("layers="):
        layers = [int(i) for i in outputs[0].split("=", 1)[1].split(",")]
        outputs = outputs[1:]
    expected = reference(model, d, layers)
    tol = 1e-4 * max(1.0, float(np.max(np.abs(expected))))
    ok = True
    for item in outputs:
        label, path = item.split("=", 1)
        got = np.load(path)
        if got.shape != expected.shape:
            print(f"FAIL {label}: shape {got.shape} != {expected.shape}")
            ok = False
            continue
        err = float(np.max(np.abs(got.astype(np.float64) - expected)))
        status = "PASS" if err <= tol else "FAIL"
        ok &= status == "PASS"
        print(f"{status} {label}: max abs err {err:.3g} (tolerance {tol:.3g})")
    return ok


def main(argv):
    if len(argv) == 4 and argv[1] == "mlir":
        with open(argv[3], "w") as f:
            f.write(emit(argv[2]))
        return 0
    if len(argv) == 4 and argv[1] == "gen":
        gen(argv[2], argv[3])
        return 0
    if len(argv) >= 5 and argv[1] == "check":
        return 0 if check(argv[2], argv[3], argv[4:]) else 1
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
