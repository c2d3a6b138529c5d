"""Op cases for opcheck.py, grouped into one compiled model per group.

Each case names its tensors ($name in the op text), the op, the result
shape and the reference computation from test/reference/attn_ref.py."""

import numpy as np

import attn_ref as ref
from opcheck import Case, T, ttype


def fn_type(case_tensors, result):
    return "(" + ", ".join(ttype(s, d) for (_, s, _, d, _) in case_tensors) + ") -> " + result


def unary(name, op, f, shape=(2, 3, 16), dtype="f32"):
    ts = [T("x", shape, dtype=dtype)]
    return Case(name, ts, f"{op} $x : {ttype(shape, dtype)}", shape,
                lambda e: f(e["x"]), dtype=dtype)


def pointwise():
    s = (2, 3, 16)
    t = ttype(s, "f32")
    return [
        unary("relu", "attn.relu", ref.relu),
        unary("gelu_erf", "attn.gelu", ref.gelu),
        Case("gelu_tanh", [T("x", s)], f"attn.gelu $x approximate = tanh : {t}", s,
             lambda e: ref.gelu_tanh(e["x"])),
        unary("silu", "attn.silu", ref.silu),
        Case("add", [T("a", s), T("b", s)], f"attn.add $a, $b : {t}", s,
             lambda e: e["a"] + e["b"]),
        unary("softmax_last", "attn.softmax", lambda x: ref.softmax(x, -1)),
        Case("softmax_dim1", [T("x", s)], f"attn.softmax $x dim = 1 : {t}", s,
             lambda e: ref.softmax(e["x"], 1)),
        Case("softmax_dim0_neg", [T("x", s)], f"attn.softmax $x dim = -3 : {t}", s,
             lambda e: ref.softmax(e["x"], 0)),
        unary("relu_f16", "attn.relu", ref.relu, dtype="f16"),
        unary("silu_bf16", "attn.silu", ref.silu, dtype="bf16"),
        unary("gelu_f16", "attn.gelu", ref.gelu, dtype="f16"),
    ]


def norms():
    cases = []
    for dtype in ("f32", "f16", "bf16"):
        s = (2, 5, 32)
        ts = [T("x", s, dtype=dtype, scale=3.0), T("g", (32,), "weight", dtype, "ones"),
              T("b", (32,), "weight", dtype)]
        cases.append(Case(f"layer_norm_{dtype}", ts,
                          f"attn.layer_norm $x, $g, $b epsilon = 1.0e-5 : {ttype(s, dtype)}, "
                          f"{ttype((32,), dtype)}, {ttype((32,), dtype)}", s,
                          lambda e: ref.layer_norm(e["x"], e["g"], e["b"], 1e-5), dtype=dtype))
    s = (3, 24)
    ts = [T("x", s), T("g", (24,), "weight", gen="ones")]
    cases.append(Case("rms_norm", ts, f"attn.rms_norm $x, $g : {ttype(s, 'f32')}, {ttype((24,), 'f32')}",
                      s, lambda e: ref.rms_norm(e["x"], e["g"], 1e-6)))
    cases.append(Case("layer_norm_rank1", [T("x", (40,)), T("g", (40,), "weight", gen="ones"),
                                           T("b", (40,), "weight")],
                      f"attn.layer_norm $x, $g, $b epsilon = 1.0e-12 : tensor<40xf32>, tensor<40xf32>, tensor<40xf32>",
                      (40,), lambda e: ref.layer_norm(e["x"], e["g"], e["b"], 1e-12)))
    # linear: rank 2 and rank 3, with and without bias
    ts = [T("x", (2, 4, 24)), T("w", (40, 24), "weight"), T("b", (40,), "weight")]
    cases.append(Case("linear_bias_rank3", ts,
                      "attn.linear $x, $w, $b : " + fn_type(ts, ttype((2, 4, 40), "f32")),
                      (2, 4, 40), lambda e: ref.linear(e["x"], e["w"], e["b"])))
    ts = [T("x", (6, 24)), T("w", (8, 24), "weight")]
    cases.append(Case("linear_nobias_rank2", ts,
                      "attn.linear $x, $w : " + fn_type(ts, ttype((6, 8), "f32")),
                      (6, 8), lambda e: ref.linear(e["x"], e["w"])))
    ts = [T("x", (2, 4, 24), dtype="f16"), T("w", (16, 24), "weight", "f16"),
          T("b", (16,), "weight", "f16")]
    cases.append(Case("linear_f16", ts,
                      "attn.linear $x, $w, $b : " + fn_type(ts, ttype((2, 4, 16), "f16")),
                      (2, 4, 16), lambda e: ref.linear(e["x"], e["w"], e["b"]), dtype="f16"))
    for act in ("relu", "gelu", "gelu_tanh", "silu"):
        ts = [T("x", (1, 6, 16)), T("w1", (48, 16), "weight", scale=0.3),
              T("b1", (48,), "weight"), T("w2", (16, 48), "weight", scale=0.3),
              T("b2", (16,), "weight")]
        cases.append(Case(f"ffn_{act}", ts,
                          f"attn.ffn $x up($w1, $b1) down($w2, $b2) activation = {act} : "
                          + fn_type(ts, ttype((1, 6, 16), "f32")),
                          (1, 6, 16),
                          lambda e, act=act: ref.ffn(e["x"], e["w1"], e["b1"], e["w2"], e["b2"], act)))
    # f16/bf16: the hidden activation is rounded to the model's type before
    # the down projection, as the frameworks store it (and as the CUDA
    # tensor-core kernels need it).
    for dtype in ("f16", "bf16"):
        ts = [T("x", (2, 8, 32), dtype=dtype),
              T("w1", (64, 32), "weight", dtype, scale=0.3),
              T("b1", (64,), "weight", dtype), T("w2", (32, 64), "weight", dtype, scale=0.3),
              T("b2", (32,), "weight", dtype)]
        cases.append(Case(f"ffn_gelu_{dtype}", ts,
                          "attn.ffn $x up($w1, $b1) down($w2, $b2) activation = gelu : "
                          + fn_type(ts, ttype((2, 8, 32), dtype)),
                          (2, 8, 32),
                          lambda e: ref.ffn(e["x"], e["w1"], e["b1"], e["w2"], e["b2"], "gelu"),
                          dtype=dtype))
    ts = [T("x", (1, 6, 16)), T("w1", (32, 16), "weight", scale=0.3),
          T("w2", (16, 32), "weight", scale=0.3)]
    cases.append(Case("ffn_nobias", ts,
                      "attn.ffn $x up($w1) down($w2) : " + fn_type(ts, ttype((1, 6, 16), "f32")),
                      (1, 6, 16), lambda e: ref.ffn(e["x"], e["w1"], None, e["w2"], None, "relu")))
    # Gated (SwiGLU-style) FFN: without biases as in LLaMA, and with all biases.
    ts = [T("x", (1, 6, 16)), T("wg", (40, 16), "weight", scale=0.3),
          T("wu", (40, 16), "weight", scale=0.3), T("wd", (16, 40), "weight", scale=0.3)]
    cases.append(Case("ffn_gated_silu", ts,
                      "attn.ffn $x gate($wg) up($wu) down($wd) activation = silu : "
                      + fn_type(ts, ttype((1, 6, 16), "f32")),
                      (1, 6, 16), lambda e: ref.gated_ffn(e["x"], e["wg"], None, e["wu"], None,
                                                          e["wd"], None, "silu")))
    ts = [T("x", (2, 3, 16)), T("wg", (24, 16), "weight", scale=0.3), T("bg", (24,), "weight"),
          T("wu", (24, 16), "weight", scale=0.3), T("bu", (24,), "weight"),
          T("wd", (16, 24), "weight", scale=0.3), T("bd", (16,), "weight")]
    cases.append(Case("ffn_gated_gelu_bias", ts,
                      "attn.ffn $x gate($wg) gate_bias($bg) up($wu, $bu) down($wd, $bd) activation = gelu : "
                      + fn_type(ts, ttype((2, 3, 16), "f32")),
                      (2, 3, 16), lambda e: ref.gated_ffn(e["x"], e["wg"], e["bg"], e["wu"], e["bu"],
                                                          e["wd"], e["bd"], "gelu")))
    return cases


def positions():
    cases = []
    ts = [T("ids", (2, 7), dtype="i32", gen="ints", scale=50), T("table", (50, 12), "weight")]
    cases.append(Case("embedding_i32", ts, "attn.embedding $ids, $table : " + fn_type(ts, ttype((2, 7, 12), "f32")),
                      (2, 7, 12), lambda e: ref.embedding(e["ids"], e["table"])))
    ts = [T("ids", (5,), dtype="i64", gen="ints", scale=9), T("table", (9, 4), "weight")]
    cases.append(Case("embedding_i64", ts, "attn.embedding $ids, $table : " + fn_type(ts, ttype((5, 4), "f32")),
                      (5, 4), lambda e: ref.embedding(e["ids"], e["table"])))
    s = (2, 10, 16)
    cases.append(Case("sinusoidal", [T("x", s)], f"attn.sinusoidal_pos $x : {ttype(s, 'f32')}", s,
                      lambda e: ref.sinusoidal_pos(e["x"])))
    cases.append(Case("sinusoidal_offset", [T("x", s)], f"attn.sinusoidal_pos $x offset = 37 : {ttype(s, 'f32')}", s,
                      lambda e: ref.sinusoidal_pos(e["x"], 37)))
    ts = [T("x", s), T("table", (20, 16), "weight")]
    cases.append(Case("learned_pos", ts, f"attn.learned_pos $x, $table offset = 3 : {ttype(s, 'f32')}, {ttype((20, 16), 'f32')}",
                      s, lambda e: ref.learned_pos(e["x"], e["table"], 3)))
    s4 = (1, 2, 6, 8)
    cases.append(Case("rotary", [T("x", s4)], f"attn.rotary $x : {ttype(s4, 'f32')}", s4,
                      lambda e: ref.rotary(e["x"])))
    cases.append(Case("rotary_partial_offset", [T("x", s4)],
                      f"attn.rotary $x base = 500.0 offset = 5 rotary_dim = 4 : {ttype(s4, 'f32')}", s4,
                      lambda e: ref.rotary(e["x"], 500.0, 5, 4)))
    # Scaled frequencies (linear / llama3 / yarn) and the yarn factor on cos
    # and sin, at run-time positions.
    ts = [T("x", (2, 2, 3, 8)), T("pos", (2,), dtype="i32", gen="ints", scale=100)]
    cases.append(Case("rotary_scaled", ts,
                      f"attn.rotary $x positions($pos : tensor<2xi32>) rotary_dim = 6 "
                      f"inv_freq = [0.75, 0.03, 0.0004] scale = 1.25 : "
                      f"{ttype((2, 2, 3, 8), 'f32')}", (2, 2, 3, 8),
                      lambda e: ref.rotary(e["x"], 10000.0, 0, 6, e["pos"],
                                           [0.75, 0.03, 0.0004], 1.25)))
    # Run-time start positions (a decode step's cache lengths).
    ts = [T("x", (2, 3, 16)), T("table", (20, 16), "weight"),
          T("pos", (2,), dtype="i64", gen="ints", scale=16)]
    cases.append(Case("learned_pos_positions", ts,
                      f"attn.learned_pos $x, $table positions($pos : tensor<2xi64>) offset = 1 : "
                      f"{ttype((2, 3, 16), 'f32')}, {ttype((20, 16), 'f32')}",
                      (2, 3, 16), lambda e: ref.learned_pos(e["x"], e["table"], 1, e["pos"])))
    ts = [T("x", (2, 3, 16)), T("pos", (2,), dtype="i32", gen="ints", scale=500)]
    cases.append(Case("sinusoidal_positions", ts,
                      f"attn.sinusoidal_pos $x positions($pos : tensor<2xi32>) offset = 4 : "
                      f"{ttype((2, 3, 16), 'f32')}",
                      (2, 3, 16), lambda e: ref.sinusoidal_pos(e["x"], 4, e["pos"])))
    ts = [T("x", (2, 2, 3, 8)), T("pos", (2,), dtype="i32", gen="ints", scale=100)]
    cases.append(Case("rotary_positions", ts,
                      f"attn.rotary $x positions($pos : tensor<2xi32>) offset = 2 rotary_dim = 6 : "
                      f"{ttype((2, 2, 3, 8), 'f32')}", (2, 2, 3, 8),
                      lambda e: ref.rotary(e["x"], 10000.0, 2, 6, e["pos"])))
    ts = [T("cache", (2, 2, 7, 4)), T("new", (2, 2, 3, 4)),
          T("pos", (2,), dtype="i64", gen="ints", scale=5)]
    cases.append(Case("cache_write", ts,
                      f"attn.cache_write $new into $cache at $pos : {ttype((2, 2, 3, 4), 'f32')}, "
                      f"{ttype((2, 2, 7, 4), 'f32')}, tensor<2xi64>", (2, 2, 7, 4),
                      lambda e: ref.cache_write(e["cache"], e["new"], e["pos"])))
    return cases


def sdpa_case(name, b=2, hq=4, hkv=4, sq=5, sk=7, d=8, dv=None, attrs="", score="scaled_dot",
              bias_shape=None, lengths=None, weights=(), dtype="f32", starts=None, **kw):
    dv = dv or d
    ts = [T("q", (b, hq, sq, d), dtype=dtype), T("k", (b, hkv, sk, kw.get("dk", d)), dtype=dtype),
          T("v", (b, hkv, sk, dv), dtype=dtype)]
    extra = ""
    if bias_shape:
        ts.append(T("bias", bias_shape, dtype=dtype))
        extra += f" bias($bias : {ttype(bias_shape, dtype)})"
    if lengths:
        ts.append(T("len", (b,), dtype=lengths[0], gen="ints", scale=lengths[1]))
        extra += f" kv_lengths($len : {ttype((b,), lengths[0])})"
    if starts:
        # query_positions: (dtype, (low, high)) of the per-row starts.
        ts.append(T("start", (b,), dtype=starts[0], gen="ints", scale=starts[1]))
        extra += f" query_positions($start : {ttype((b,), starts[0])})"
    if weights:
        for (wn, ws) in weights:
            ts.append(T(wn, ws, "weight", dtype, scale=0.3))
        names = ", ".join("$" + wn for wn, _ in weights)
        types = ", ".join(ttype(ws, dtype) for _, ws in weights)
        extra += f" score_weights({names} : {types})"
    if score != "scaled_dot":
        extra += f" score = {score}"
    op = (f"attn.sdpa $q, $k, $v{extra} {attrs} : {ttype(ts[0][1], dtype)}, {ttype(ts[1][1], dtype)}, "
          f"{ttype(ts[2][1], dtype)} -> {ttype((b, hq, sq, dv), dtype)}")
    causal = "causal" in attrs
    window = None
    scale = None
    for part in attrs.split():
        pass
    if "window = " in attrs:
        window = int(attrs.split("window = ")[1].split()[0])
    if "scale = " in attrs:
        scale = float(attrs.split("scale = ")[1].split()[0])

    def reference(e):
        sw = tuple(e[wn] for wn, _ in weights)
        return ref.sdpa(e["q"], e["k"], e["v"], bias=e.get("bias"), kv_lengths=e.get("len"),
                        score_weights=sw, score=score, scale=scale, causal=causal, window=window,
                        query_positions=e.get("start"))
    return Case(name, ts, op, (b, hq, sq, dv), reference, dtype=dtype)


def sdpa():
    return [
        sdpa_case("scaled_dot"),
        sdpa_case("dot_scale", score="dot", attrs="scale = 0.25"),
        sdpa_case("general", score="general", weights=[("w", (8, 6))], dk=6),
        sdpa_case("additive", score="additive", weights=[("w", (5, 14)), ("va", (5,))], dk=6),
        sdpa_case("cosine", score="cosine", attrs="scale = 4.0"),
        sdpa_case("gaussian", score="gaussian"),
        sdpa_case("causal_sq_lt_sk", attrs="causal"),
        sdpa_case("causal_sq_gt_sk", sq=9, sk=4, attrs="causal"),
        sdpa_case("window", sq=8, sk=8, attrs="window = 3"),
        sdpa_case("causal_window", sq=8, sk=10, attrs="causal window = 2"),
        sdpa_case("kv_lengths_i32", lengths=("i32", (0, 8))),
        sdpa_case("kv_lengths_i64_causal", lengths=("i64", (1, 8)), attrs="causal"),
        sdpa_case("bias_full", bias_shape=(2, 4, 5, 7)),
        sdpa_case("bias_broadcast", bias_shape=(2, 1, 1, 7)),
        sdpa_case("bias_heads", bias_shape=(1, 4, 5, 1)),
        sdpa_case("gqa", hq=6, hkv=2),
        sdpa_case("mqa_causal", hq=4, hkv=1, attrs="causal"),
        sdpa_case("value_dim", dv=5),
        sdpa_case("f16_causal", attrs="causal", dtype="f16"),
        sdpa_case("bf16", dtype="bf16"),
    ]


def mha_case(name, b=2, sq=6, sk=None, dm=16, heads=4, kv_heads=None, wide=False, cross=False,
             biases=True, attrs="", lengths=None, dkv=None):
    kvh = kv_heads or heads
    dh = dm if wide else dm // heads
    sk = sk or sq
    dkv = dkv or dm
    ts = [T("x", (b, sq, dm))]
    operands = "$x"
    if cross:
        ts.append(T("kv", (b, sk, dkv)))
        operands += ", $kv"
    ts += [T("wq", (heads * dh, dm), "weight", scale=0.3), T("wk", (kvh * dh, dkv), "weight", scale=0.3),
           T("wv", (kvh * dh, dkv), "weight", scale=0.3), T("wo", (dm, heads * dh), "weight", scale=0.3)]
    text = f"attn.mha {operands} weights($wq, $wk, $wv, $wo)"
    if biases:
        ts += [T("bq", (heads * dh,), "weight"), T("bk", (kvh * dh,), "weight"),
               T("bv", (kvh * dh,), "weight"), T("bo", (dm,), "weight")]
        text += " biases($bq, $bk, $bv, $bo)"
    if lengths:
        ts.append(T("len", (b,), dtype="i32", gen="ints", scale=(1, sk + 1)))
        text += " kv_lengths($len)"
    text += f" heads = {heads}"
    if kv_heads:
        text += f" kv_heads = {kv_heads}"
    if wide:
        text += " wide"
    text += " " + attrs
    text += " : " + fn_type(ts, ttype((b, sq, dm), "f32"))
    causal = "causal" in attrs

    def reference(e):
        bs = (e["bq"], e["bk"], e["bv"], e["bo"]) if biases else None
        return ref.mha(e["x"], e["wq"], e["wk"], e["wv"], e["wo"], biases=bs, kv=e.get("kv"),
                       num_heads=heads, num_kv_heads=kv_heads, wide=wide, causal=causal,
                       kv_lengths=e.get("len"))
    return Case(name, ts, text, (b, sq, dm), reference)


def mha():
    return [
        mha_case("self_narrow"),
        mha_case("self_wide", wide=True, heads=2),
        mha_case("cross", cross=True, sk=9, dkv=12),
        mha_case("gqa_causal", heads=4, kv_heads=2, attrs="causal"),
        mha_case("nobias_lengths", biases=False, lengths=True),
    ]


def flash():
    """Shapes for attn-flash-attention's default 64 x 64 blocks: several query
    and key blocks, partial last blocks, and masks that let whole key blocks
    be skipped (causal, window, kv_lengths) or hide every key of a row."""
    return [
        sdpa_case("flash_200", b=1, hq=2, hkv=2, sq=200, sk=200, d=32),
        sdpa_case("flash_dot_scale", b=1, hq=2, hkv=2, sq=96, sk=160, d=16, score="dot",
                  attrs="scale = 0.2"),
        sdpa_case("flash_causal_130_300", b=1, hq=2, hkv=2, sq=130, sk=300, d=32, attrs="causal"),
        sdpa_case("flash_causal_300_130", b=1, hq=2, hkv=2, sq=300, sk=130, d=16, attrs="causal"),
        sdpa_case("flash_window70", b=1, hq=2, hkv=2, sq=200, sk=260, d=16, attrs="window = 70"),
        sdpa_case("flash_causal_window", b=1, hq=2, hkv=2, sq=200, sk=200, d=16,
                  attrs="causal window = 50"),
        sdpa_case("flash_kv_lengths", b=3, hq=2, hkv=2, sq=70, sk=300, d=16,
                  lengths=("i32", (0, 301))),
        sdpa_case("flash_kv_lengths_causal", b=2, hq=2, hkv=2, sq=150, sk=150, d=16,
                  lengths=("i64", (1, 151)), attrs="causal"),
        sdpa_case("flash_gqa_causal", b=1, hq=8, hkv=2, sq=150, sk=150, d=16, attrs="causal"),
        sdpa_case("flash_mqa_window", b=1, hq=4, hkv=1, sq=129, sk=129, d=16, attrs="window = 64"),
        sdpa_case("flash_bias_broadcast", b=2, hq=2, hkv=2, sq=100, sk=200, d=16,
                  bias_shape=(2, 1, 1, 200)),
        sdpa_case("flash_bias_full_causal", b=1, hq=2, hkv=2, sq=130, sk=130, d=16,
                  bias_shape=(1, 2, 130, 130), attrs="causal"),
        sdpa_case("flash_bias_rows", b=1, hq=4, hkv=2, sq=90, sk=70, d=16,
                  bias_shape=(1, 4, 90, 1)),
        sdpa_case("flash_value_dim", b=1, hq=2, hkv=2, sq=80, sk=140, d=16, dv=24),
        sdpa_case("flash_decode", b=2, hq=4, hkv=2, sq=1, sk=300, d=32, attrs="causal"),
        # The CPU kernels' edge tiles: head dim 64 with ragged query/key
        # blocks (77, 93), value width 40 (two full vectors and a masked
        # one), GQA; then a causal window whose partial key blocks start
        # mid-row.
        sdpa_case("flash_gqa_d64_ragged", b=1, hq=4, hkv=2, sq=77, sk=93, d=64, dv=40),
        sdpa_case("flash_causal_window_d64", b=1, hq=3, hkv=3, sq=130, sk=197, d=64,
                  attrs="causal window = 45"),
        sdpa_case("flash_f16_causal", b=1, hq=2, hkv=2, sq=200, sk=200, d=32, attrs="causal",
                  dtype="f16"),
        sdpa_case("flash_bf16_window", b=1, hq=2, hkv=2, sq=130, sk=130, d=16, attrs="window = 40",
                  dtype="bf16"),
    ]


def query_positions():
    """attn.sdpa with per-row query_positions (a KV-cache step of T tokens
    per row starting at each row's cache length): random starts and
    kv_lengths, causal and window masks, GQA; dot scores through
    attn-flash-attention (small shapes and several 64 x 64 blocks, a decode
    row), general and cosine scores through the unfused lowering."""
    return [
        sdpa_case("qp_causal_lengths", b=3, hq=4, hkv=2, sq=5, sk=12, attrs="causal",
                  lengths=("i64", (1, 13)), starts=("i64", (0, 8))),
        sdpa_case("qp_window", b=2, sq=6, sk=16, attrs="window = 3", starts=("i32", (0, 11))),
        sdpa_case("qp_general_causal", score="general", weights=[("w", (8, 6))], dk=6,
                  attrs="causal", starts=("i64", (0, 3))),
        sdpa_case("qp_cosine_causal_window", sq=4, sk=10, score="cosine",
                  attrs="causal window = 3 scale = 4.0", lengths=("i32", (1, 11)),
                  starts=("i32", (0, 7))),
        sdpa_case("qp_flash_prefill", b=2, hq=4, hkv=2, sq=150, sk=300, d=16, attrs="causal",
                  lengths=("i64", (1, 301)), starts=("i64", (0, 151))),
        sdpa_case("qp_flash_decode", b=3, hq=4, hkv=1, sq=1, sk=300, d=32, attrs="causal",
                  starts=("i64", (0, 300))),
        sdpa_case("qp_flash_window", b=2, hq=2, hkv=2, sq=130, sk=260, d=16,
                  attrs="causal window = 50", starts=("i32", (0, 131))),
        sdpa_case("qp_f16_causal", b=2, hq=2, hkv=2, sq=70, sk=140, d=32, attrs="causal",
                  starts=("i64", (0, 71)), dtype="f16"),
        # Keys with kv_lengths are a KV cache and stay [keys, d]: on the
        # CPU, Q K^T takes dot-product tiles (d a multiple of 16) with lane
        # sums, ragged key blocks, rows left over from 4-row tiles, GQA.
        sdpa_case("qp_cache_decode_gqa", b=3, hq=8, hkv=2, sq=1, sk=200, d=64, attrs="causal",
                  lengths=("i64", (1, 201)), starts=("i64", (0, 200))),
        sdpa_case("qp_cache_prefill", b=2, hq=4, hkv=2, sq=23, sk=150, d=32, attrs="causal",
                  lengths=("i64", (1, 151)), starts=("i64", (0, 128))),
        sdpa_case("qp_cache_bf16", b=2, hq=2, hkv=1, sq=5, sk=90, d=16, attrs="causal",
                  lengths=("i32", (1, 91)), starts=("i32", (0, 86)), dtype="bf16"),
        # GQA with at least 4 query heads per KV head: the CPU tiles take
        # their rows from the heads, per query row (4-head tiles plus a
        # head left over; with and without a KV cache; bf16).
        sdpa_case("qp_heads_cache_g5", b=2, hq=10, hkv=2, sq=3, sk=140, d=32, attrs="causal",
                  lengths=("i64", (1, 141)), starts=("i64", (0, 137))),
        sdpa_case("qp_heads_prefill_g4", b=2, hq=8, hkv=2, sq=70, sk=140, d=32, attrs="causal",
                  starts=("i64", (0, 71))),
        sdpa_case("qp_heads_cache_bf16_g8", b=1, hq=8, hkv=1, sq=1, sk=100, d=64, attrs="causal",
                  lengths=("i64", (1, 101)), starts=("i64", (0, 100)), dtype="bf16"),
    ]


def tensor_core_flash():
    """f16/bf16 shapes that attn-gpu-flash-attention takes on CUDA (Sq, Sk
    multiples of 16, Dk of 16, Dv of 8): several query and key blocks, causal
    with Sq < Sk and Sq > Sk (rows that see no key), GQA, kv_lengths, head
    dims 16 to 128; plus a near miss (Sq = 50) that stays generic."""
    return [
        sdpa_case("tc_f16", b=2, hq=2, hkv=2, sq=128, sk=128, d=64, dtype="f16"),
        sdpa_case("tc_f16_causal_192_256", b=1, hq=2, hkv=2, sq=192, sk=256, d=64,
                  attrs="causal", dtype="f16"),
        sdpa_case("tc_f16_causal_96_32", b=1, hq=2, hkv=2, sq=96, sk=32, d=16,
                  attrs="causal", dtype="f16"),
        sdpa_case("tc_bf16_causal_d128", b=1, hq=2, hkv=2, sq=128, sk=128, d=128,
                  attrs="causal", dtype="bf16"),
        sdpa_case("tc_f16_gqa_dv24", b=1, hq=8, hkv=2, sq=64, sk=80, d=32, dv=24,
                  dtype="f16"),
        sdpa_case("tc_f16_kv_lengths", b=3, hq=2, hkv=2, sq=64, sk=128, d=32,
                  lengths=("i32", (0, 129)), dtype="f16"),
        sdpa_case("tc_f16_near_miss_sq50", b=1, hq=2, hkv=2, sq=50, sk=64, d=32,
                  dtype="f16"),
    ]


def groups():
    return {"pointwise": pointwise(), "norms": norms(), "positions": positions(),
            "sdpa": sdpa(), "mha": mha(), "flash": flash(),
            "query_positions": query_positions(),
            "tensor_core_flash": tensor_core_flash()}
