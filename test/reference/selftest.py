#!/usr/bin/python3
"""Sanity checks of the numpy reference itself against independent
formulations (explicit Python loops, alternative algebra, known values).

Run:  /usr/bin/python3 test/reference/selftest.py
Prints "N passed, M failed" and exits non-zero on any failure.
"""

import json
import math
import os
import struct
import subprocess
import sys
import tempfile
import traceback

import numpy as np

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, _HERE)

import attn_ref as R  # noqa: E402
import tensorio as T  # noqa: E402

_REPO = os.path.abspath(os.path.join(_HERE, os.pardir, os.pardir))
_MAKE_WEIGHTS = os.path.join(_REPO, "scripts", "make_weights.py")

TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn


def close(a, b, tol=1e-10, what=""):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    assert a.shape == b.shape, "%s shape %s != %s" % (what, a.shape, b.shape)
    err = np.max(np.abs(a - b)) if a.size else 0.0
    assert err <= tol, "%s max abs err %.3g > %.3g" % (what, err, tol)


def _read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def _write_bytes(path, data):
    with open(path, "wb") as f:
        f.write(data)


def rng(seed=0):
    return np.random.default_rng(seed)


# --------------------------------------------------------------------------
# Independent loop implementations
# --------------------------------------------------------------------------

def loop_attention(q, k, v, score_fn, visible_fn, bias=None):
    """Pure-Python-loop attention. score_fn(qvec, kvec) -> float;
    visible_fn(b, i, j) -> bool.  kv head for query head h: h*Hkv//Hq."""
    B, Hq, Sq, _ = q.shape
    Hkv, Sk, Dv = k.shape[1], k.shape[2], v.shape[3]
    out = np.zeros((B, Hq, Sq, Dv))
    for b in range(B):
        for h in range(Hq):
            g = h // (Hq // Hkv)
            for i in range(Sq):
                sc = []
                for j in range(Sk):
                    if not visible_fn(b, i, j):
                        continue
                    s = score_fn(q[b, h, i], k[b, g, j])
                    if bias is not None:
                        bb = np.broadcast_to(bias, (B, Hq, Sq, Sk))
                        s += bb[b, h, i, j]
                    sc.append((j, s))
                if not sc:
                    continue
                m = max(s for _, s in sc)
                ws = [(j, math.exp(s - m)) for j, s in sc]
                z = sum(w for _, w in ws)
                for j, w in ws:
                    out[b, h, i] += (w / z) * v[b, g, j]
    return out


def all_visible(b, i, j):
    return True


def loop_linear(x, w, b=None):
    x = np.asarray(x, dtype=np.float64)
    flat = x.reshape(-1, x.shape[-1])
    N = w.shape[0]
    out = np.zeros((flat.shape[0], N))
    for r in range(flat.shape[0]):
        for n in range(N):
            out[r, n] = sum(float(flat[r, kk]) * float(w[n, kk])
                            for kk in range(flat.shape[1]))
            if b is not None:
                out[r, n] += b[n]
    return out.reshape(x.shape[:-1] + (N,))


def loop_mha(x, wq, wk, wv, wo, biases, kv, H, Hkv, dh, causal=False):
    """Per-head slicing formulation: head h uses rows h*dh:(h+1)*dh of the
    projection weights; outputs are concatenated head-major."""
    bq, bk, bv, bo = biases if biases is not None else (None,) * 4
    src = x if kv is None else kv
    B, Sq, _ = x.shape
    Sk = src.shape[1]
    heads = []
    for h in range(H):
        g = h // (H // Hkv)
        sl_q = slice(h * dh, (h + 1) * dh)
        sl_k = slice(g * dh, (g + 1) * dh)
        Qh = x @ wq[sl_q].T + (0 if bq is None else bq[sl_q])
        Kh = src @ wk[sl_k].T + (0 if bk is None else bk[sl_k])
        Vh = src @ wv[sl_k].T + (0 if bv is None else bv[sl_k])
        out_h = np.zeros((B, Sq, dh))
        for b in range(B):
            for i in range(Sq):
                p = i + Sk - Sq
                js = [j for j in range(Sk) if (not causal or j <= p)]
                s = np.array([Qh[b, i] @ Kh[b, j] / math.sqrt(dh) for j in js])
                e = np.exp(s - s.max())
                e /= e.sum()
                out_h[b, i] = sum(e[t] * Vh[b, j] for t, j in enumerate(js))
        heads.append(out_h)
    cat = np.concatenate(heads, axis=-1)
    return cat @ wo.T + (0 if bo is None else bo)


def loop_layer_norm(x, g, b, eps):
    out = np.zeros_like(x, dtype=np.float64)
    flat = x.reshape(-1, x.shape[-1])
    o = out.reshape(-1, x.shape[-1])
    for r in range(flat.shape[0]):
        row = [float(t) for t in flat[r]]
        mu = sum(row) / len(row)
        var = sum((t - mu) ** 2 for t in row) / len(row)
        for c in range(len(row)):
            o[r, c] = (row[c] - mu) / math.sqrt(var + eps) * g[c] + b[c]
    return out


# --------------------------------------------------------------------------
# sdpa
# --------------------------------------------------------------------------

def qkv(B=2, Hq=4, Hkv=4, Sq=5, Sk=7, D=8, Dv=6, seed=0):
    g = rng(seed)
    return (g.standard_normal((B, Hq, Sq, D)), g.standard_normal((B, Hkv, Sk, D)),
            g.standard_normal((B, Hkv, Sk, Dv)))


@test
def sdpa_scaled_dot_vs_loop():
    q, k, v = qkv()
    ref = loop_attention(q, k, v, lambda a, b: float(a @ b) / math.sqrt(8),
                         all_visible)
    close(R.sdpa(q, k, v), ref)


@test
def sdpa_matches_plain_softmax_formula():
    q, k, v = qkv(seed=1)
    s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(q.shape[-1])
    p = np.exp(s) / np.exp(s).sum(-1, keepdims=True)
    close(R.sdpa(q, k, v), p @ v)


@test
def sdpa_dot_and_scale_override():
    q, k, v = qkv(seed=2)
    ref = loop_attention(q, k, v, lambda a, b: float(a @ b), all_visible)
    close(R.sdpa(q, k, v, score="dot"), ref)
    close(R.sdpa(q, k, v, score="scaled_dot", scale=1.0), ref)
    ref2 = loop_attention(q, k, v, lambda a, b: 0.3 * float(a @ b), all_visible)
    close(R.sdpa(q, k, v, score="dot", scale=0.3), ref2)
    close(R.sdpa(q, k, v, scale=0.3), ref2)


@test
def sdpa_gqa_equals_repeated_kv():
    q, k, v = qkv(Hq=6, Hkv=2, seed=3)
    kr = np.repeat(k, 3, axis=1)  # head h -> kv head h // 3
    vr = np.repeat(v, 3, axis=1)
    close(R.sdpa(q, k, v), R.sdpa(q, kr, vr))
    close(R.sdpa(q, k, v, causal=True), R.sdpa(q, kr, vr, causal=True))
    ref = loop_attention(q, k, v, lambda a, b: float(a @ b) / math.sqrt(8),
                         all_visible)
    close(R.sdpa(q, k, v), ref)
    # MQA
    q, k, v = qkv(Hq=4, Hkv=1, seed=4)
    close(R.sdpa(q, k, v), R.sdpa(q, np.repeat(k, 4, 1), np.repeat(v, 4, 1)))


@test
def sdpa_causal_vs_explicit_neg_inf_matrix():
    q, k, v = qkv(Sq=6, Sk=6, seed=5)
    S = 6
    bias = np.where(np.tril(np.ones((S, S))) > 0, 0.0, -np.inf)
    s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(8) + bias
    s = s - s.max(-1, keepdims=True)
    p = np.exp(s)
    p /= p.sum(-1, keepdims=True)
    close(R.sdpa(q, k, v, causal=True), p @ v)


@test
def sdpa_causal_bottom_right_alignment():
    # Sq < Sk: query row i is at position i + Sk - Sq
    q, k, v = qkv(Sq=7, Sk=7, seed=6)
    full = R.sdpa(q, k, v, causal=True)
    part = R.sdpa(q[:, :, 4:], k, v, causal=True)
    close(part, full[:, :, 4:])
    ref = loop_attention(q[:, :, 4:], k, v, lambda a, b: float(a @ b) / math.sqrt(8),
                         lambda b, i, j: j <= i + 4)
    close(part, ref)
    # single decode step sees every key
    close(R.sdpa(q[:, :, 6:], k, v, causal=True), R.sdpa(q[:, :, 6:], k, v))


@test
def sdpa_causal_sq_gt_sk_empty_rows_are_zero():
    q, k, v = qkv(Sq=6, Sk=3, seed=7)
    out = R.sdpa(q, k, v, causal=True)  # p = i - 3 -> rows 0..2 see nothing
    assert np.all(out[:, :, :3] == 0.0)
    ref = loop_attention(q, k, v, lambda a, b: float(a @ b) / math.sqrt(8),
                         lambda b, i, j: j <= i - 3)
    close(out, ref)


@test
def sdpa_window_vs_loop():
    q, k, v = qkv(Sq=5, Sk=9, seed=8)
    for causal in (False, True):
        for w in (1, 2, 3, 20):
            ref = loop_attention(
                q, k, v, lambda a, b: float(a @ b) / math.sqrt(8),
                lambda b, i, j, w=w, c=causal: (not c or j <= i + 4) and abs(i + 4 - j) < w)
            close(R.sdpa(q, k, v, causal=causal, window=w), ref,
                  what="window=%d causal=%s" % (w, causal))
    close(R.sdpa(q, k, v, window=0), R.sdpa(q, k, v))
    close(R.sdpa(q, k, v, window=None, causal=True), R.sdpa(q, k, v, window=0, causal=True))


@test
def sdpa_kv_lengths_equals_truncation():
    q, k, v = qkv(B=3, Sq=4, Sk=8, seed=9)
    lens = [8, 5, 1]
    out = R.sdpa(q, k, v, kv_lengths=np.array(lens, dtype=np.int32))
    for b, L in enumerate(lens):
        close(out[b:b + 1], R.sdpa(q[b:b + 1], k[b:b + 1, :, :L], v[b:b + 1, :, :L]),
              what="batch %d" % b)
    # zero length -> zero rows
    out0 = R.sdpa(q, k, v, kv_lengths=[8, 0, 3])
    assert np.all(out0[1] == 0.0)
    # combined with causal: loop
    ref = loop_attention(q, k, v, lambda a, b: float(a @ b) / math.sqrt(8),
                         lambda b, i, j: j <= i + 4 and j < [6, 2, 8][b])
    close(R.sdpa(q, k, v, causal=True, kv_lengths=[6, 2, 8]), ref)


@test
def sdpa_bias_vs_loop_and_broadcast():
    q, k, v = qkv(seed=10)
    g = rng(11)
    bias = g.standard_normal((1, 4, 5, 7))
    ref = loop_attention(q, k, v, lambda a, b: float(a @ b) / math.sqrt(8),
                         all_visible, bias=bias)
    close(R.sdpa(q, k, v, bias=bias), ref)
    # a key-padding style bias [B,1,1,Sk]
    kb = g.standard_normal((2, 1, 1, 7))
    close(R.sdpa(q, k, v, bias=kb), R.sdpa(q, k, v, bias=np.broadcast_to(kb, (2, 4, 5, 7))))
    # constant bias does not change softmax
    close(R.sdpa(q, k, v, bias=np.full((1, 1, 1, 1), 3.5)), R.sdpa(q, k, v))
    # -inf bias behaves like a mask
    m = np.zeros((1, 1, 1, 7))
    m[..., 4:] = -np.inf
    close(R.sdpa(q, k, v, bias=m), R.sdpa(q, k, v, kv_lengths=[4, 4]))


@test
def sdpa_general_vs_loop():
    q, k, v = qkv(D=8, seed=12)
    g = rng(13)
    # differing Dq and Dk
    q = g.standard_normal((2, 4, 5, 6))
    W = g.standard_normal((6, 8))
    ref = loop_attention(q, k, v, lambda a, b: float(a @ W @ b), all_visible)
    close(R.sdpa(q, k, v, score="general", score_weights=(W,)), ref)
    ref2 = loop_attention(q, k, v, lambda a, b: 0.5 * float(a @ W @ b), all_visible)
    close(R.sdpa(q, k, v, score="general", score_weights=(W,), scale=0.5), ref2)
    # identity W == dot
    q2, k2, v2 = qkv(seed=14)
    close(R.sdpa(q2, k2, v2, score="general", score_weights=(np.eye(8),)),
          R.sdpa(q2, k2, v2, score="dot"))


@test
def sdpa_additive_vs_loop():
    g = rng(15)
    q = g.standard_normal((2, 2, 3, 5))
    k = g.standard_normal((2, 2, 4, 6))
    v = g.standard_normal((2, 2, 4, 3))
    W = g.standard_normal((7, 11))
    va = g.standard_normal(7)
    ref = loop_attention(q, k, v,
                         lambda a, b: float(va @ np.tanh(W @ np.concatenate([a, b]))),
                         all_visible)
    close(R.sdpa(q, k, v, score="additive", score_weights=(W, va)), ref)
    ref2 = loop_attention(q, k, v,
                          lambda a, b: 2.0 * float(va @ np.tanh(W @ np.concatenate([a, b]))),
                          lambda b, i, j: j <= i + 1)
    close(R.sdpa(q, k, v, score="additive", score_weights=(W, va), scale=2.0,
                 causal=True), ref2)


@test
def sdpa_cosine_vs_loop():
    q, k, v = qkv(seed=16)
    q[0, 0, 0] = 0.0  # exercises the 1e-6 clamp

    def cos(a, b):
        return float(a @ b) / (max(math.sqrt(float(a @ a)), 1e-6) *
                               max(math.sqrt(float(b @ b)), 1e-6))
    close(R.sdpa(q, k, v, score="cosine"), loop_attention(q, k, v, cos, all_visible))
    close(R.sdpa(q, k, v, score="cosine", scale=10.0),
          loop_attention(q, k, v, lambda a, b: 10.0 * cos(a, b), all_visible))


@test
def sdpa_gaussian_vs_loop():
    q, k, v = qkv(seed=17)
    ref = loop_attention(q, k, v,
                         lambda a, b: -0.5 / math.sqrt(8) * float((a - b) @ (a - b)),
                         all_visible)
    close(R.sdpa(q, k, v, score="gaussian"), ref)
    ref2 = loop_attention(q, k, v, lambda a, b: -0.5 * 2.0 * float((a - b) @ (a - b)),
                          all_visible)
    close(R.sdpa(q, k, v, score="gaussian", scale=2.0), ref2)


@test
def sdpa_rows_are_convex_combinations():
    q, k, v = qkv(seed=18)
    v = np.ones_like(v)
    close(R.sdpa(q, k, v, causal=True, window=2), np.ones((2, 4, 5, 6)))


@test
def sdpa_large_scores_stable():
    q, k, v = qkv(seed=19)
    out = R.sdpa(q * 1e3, k * 1e3, v)
    assert np.all(np.isfinite(out))


# --------------------------------------------------------------------------
# mha
# --------------------------------------------------------------------------

def mha_weights(Dm, H, Hkv=None, wide=False, Dkv=None, seed=0, bias=True):
    g = rng(seed)
    Hkv = Hkv or H
    Dkv = Dkv or Dm
    dh = Dm if wide else Dm // H
    wq = g.standard_normal((H * dh, Dm)) * 0.3
    wk = g.standard_normal((Hkv * dh, Dkv)) * 0.3
    wv = g.standard_normal((Hkv * dh, Dkv)) * 0.3
    wo = g.standard_normal((Dm, H * dh)) * 0.3
    bs = tuple(g.standard_normal(n) * 0.1 for n in (H * dh, Hkv * dh, Hkv * dh, Dm)) \
        if bias else None
    return wq, wk, wv, wo, bs, dh


@test
def mha_narrow_vs_per_head_loop():
    g = rng(20)
    x = g.standard_normal((2, 5, 16))
    wq, wk, wv, wo, bs, dh = mha_weights(16, 4, seed=21)
    out = R.mha(x, wq, wk, wv, wo, biases=bs, num_heads=4)
    assert out.shape == (2, 5, 16)
    close(out, loop_mha(x, wq, wk, wv, wo, bs, None, 4, 4, dh))
    outc = R.mha(x, wq, wk, wv, wo, biases=bs, num_heads=4, causal=True)
    close(outc, loop_mha(x, wq, wk, wv, wo, bs, None, 4, 4, dh, causal=True))


@test
def mha_wide_vs_narrow_shapes():
    g = rng(22)
    x = g.standard_normal((1, 6, 8))
    wq, wk, wv, wo, bs, dh = mha_weights(8, 2, wide=True, seed=23)
    assert dh == 8 and wq.shape == (16, 8) and wo.shape == (8, 16)
    out = R.mha(x, wq, wk, wv, wo, biases=bs, num_heads=2, wide=True)
    assert out.shape == (1, 6, 8)
    close(out, loop_mha(x, wq, wk, wv, wo, bs, None, 2, 2, 8))
    wq2, wk2, wv2, wo2, bs2, dh2 = mha_weights(8, 2, wide=False, seed=23)
    assert dh2 == 4 and wq2.shape == (8, 8)
    assert R.mha(x, wq2, wk2, wv2, wo2, biases=bs2, num_heads=2).shape == (1, 6, 8)
    # wide with one head == narrow with one head
    wq3, wk3, wv3, wo3, bs3, _ = mha_weights(8, 1, seed=24)
    close(R.mha(x, wq3, wk3, wv3, wo3, bs3, num_heads=1, wide=True),
          R.mha(x, wq3, wk3, wv3, wo3, bs3, num_heads=1))


@test
def mha_gqa_and_cross_attention():
    g = rng(25)
    x = g.standard_normal((2, 4, 16))
    kv = g.standard_normal((2, 7, 12))
    wq, wk, wv, wo, bs, dh = mha_weights(16, 4, Hkv=2, Dkv=12, seed=26)
    out = R.mha(x, wq, wk, wv, wo, biases=bs, kv=kv, num_heads=4, num_kv_heads=2)
    close(out, loop_mha(x, wq, wk, wv, wo, bs, kv, 4, 2, dh))
    out_c = R.mha(x, wq, wk, wv, wo, biases=bs, kv=kv, num_heads=4, num_kv_heads=2,
                  causal=True)
    close(out_c, loop_mha(x, wq, wk, wv, wo, bs, kv, 4, 2, dh, causal=True))


@test
def mha_no_bias_and_scale_and_lengths():
    g = rng(27)
    x = g.standard_normal((2, 5, 8))
    wq, wk, wv, wo, _, dh = mha_weights(8, 2, seed=28, bias=False)
    a = R.mha(x, wq, wk, wv, wo, num_heads=2)
    b = R.mha(x, wq, wk, wv, wo, biases=(None, None, None, None), num_heads=2)
    close(a, b)
    # scale: scale=s equals scaling wq by s*sqrt(dh)
    s = 0.7
    close(R.mha(x, wq, wk, wv, wo, num_heads=2, scale=s),
          R.mha(x, wq * s * math.sqrt(dh), wk, wv, wo, num_heads=2))
    # kv_lengths: batch 1 with length 3 == truncated kv
    out = R.mha(x, wq, wk, wv, wo, num_heads=2, kv_lengths=[5, 3])
    close(out[1:], R.mha(x[1:], wq, wk, wv, wo, kv=x[1:, :3], num_heads=2))


# --------------------------------------------------------------------------
# norms, dense, activations
# --------------------------------------------------------------------------

@test
def layer_norm_stats_and_loop():
    g = rng(30)
    x = g.standard_normal((3, 4, 32)) * 5 + 2
    y = R.layer_norm(x, np.ones(32), np.zeros(32), eps=0.0)
    close(y.mean(-1), np.zeros((3, 4)), 1e-12)
    close(y.var(-1), np.ones((3, 4)), 1e-12)
    gam, bet = g.standard_normal(32), g.standard_normal(32)
    close(R.layer_norm(x, gam, bet, eps=1e-5), loop_layer_norm(x, gam, bet, 1e-5))
    close(R.layer_norm(x, gam, bet, eps=1e-12), loop_layer_norm(x, gam, bet, 1e-12))


@test
def rms_norm_checks():
    g = rng(31)
    x = g.standard_normal((2, 3, 16)) * 3
    y = R.rms_norm(x, np.ones(16), eps=0.0)
    close(np.sqrt((y ** 2).mean(-1)), np.ones((2, 3)), 1e-12)
    gam = g.standard_normal(16)
    ref = np.zeros_like(x)
    for idx in np.ndindex(2, 3):
        r = math.sqrt(sum(float(t) ** 2 for t in x[idx]) / 16 + 1e-6)
        ref[idx] = x[idx] / r * gam
    close(R.rms_norm(x, gam), ref)


@test
def linear_and_ffn_vs_loop():
    g = rng(32)
    x = g.standard_normal((2, 3, 5))
    w1, b1 = g.standard_normal((7, 5)), g.standard_normal(7)
    w2, b2 = g.standard_normal((5, 7)), g.standard_normal(5)
    close(R.linear(x, w1, b1), loop_linear(x, w1, b1))
    close(R.linear(x, w1), loop_linear(x, w1))
    h = loop_linear(x, w1, b1)
    for act, f in (("relu", lambda t: max(t, 0.0)),
                   ("gelu", lambda t: 0.5 * t * (1 + math.erf(t / math.sqrt(2)))),
                   ("gelu_tanh", lambda t: 0.5 * t * (1 + math.tanh(
                       math.sqrt(2 / math.pi) * (t + 0.044715 * t ** 3)))),
                   ("silu", lambda t: t / (1 + math.exp(-t)))):
        ha = np.vectorize(f)(h)
        close(R.ffn(x, w1, b1, w2, b2, act), loop_linear(ha, w2, b2), what=act)
    close(R.ffn(x, w1, None, w2, None), loop_linear(np.maximum(loop_linear(x, w1), 0), w2))


@test
def activation_known_values():
    # gelu(1) = Phi(1) = 0.8413447460685429...
    close(R.gelu(1.0), 0.8413447460685429, 1e-15)
    close(R.gelu(-1.0), -0.15865525393145707, 1e-15)
    close(R.gelu(np.array([0.0, 3.0])), [0.0, 3.0 * 0.9986501019683699], 1e-15)
    close(R.gelu_tanh(1.0), 0.8411919906082768, 1e-15)
    x = np.linspace(-6, 6, 101)
    close(R.gelu(x), R.gelu_tanh(x), 1e-3)  # approximation is close
    close(R.silu(x), x / (1 + np.exp(-x)), 1e-14)
    close(R.silu(np.array([-800.0, 800.0])), [0.0, 800.0], 1e-12)
    close(R.relu(x), np.where(x > 0, x, 0))
    close(R.add(x, 1), x + 1)
    assert R.gelu(np.zeros((2, 3))).shape == (2, 3)


@test
def softmax_checks():
    g = rng(33)
    x = g.standard_normal((3, 4, 5)) * 10
    for dim in (-1, 0, 1):
        y = R.softmax(x, dim)
        close(y.sum(axis=dim), np.ones(np.delete(x.shape, dim % 3)), 1e-12)
        close(R.softmax(x + 100.0, dim), y, 1e-12)
    row = [1.0, 2.0, 3.0]
    z = sum(math.exp(t) for t in row)
    close(R.softmax(np.array(row)), [math.exp(t) / z for t in row], 1e-15)


# --------------------------------------------------------------------------
# embeddings / positions
# --------------------------------------------------------------------------

@test
def embedding_and_learned_pos():
    g = rng(34)
    table = g.standard_normal((10, 4))
    ids = np.array([[3, 0, 9], [1, 1, 2]], dtype=np.int32)
    e = R.embedding(ids, table)
    assert e.shape == (2, 3, 4) and e.dtype == np.float64
    for b in range(2):
        for s in range(3):
            close(e[b, s], table[ids[b, s]])
    pt = g.standard_normal((8, 4))
    close(R.learned_pos(e, pt), e + pt[:3])
    close(R.learned_pos(e, pt, offset=5), e + pt[5:8])


@test
def sinusoidal_vs_loop():
    for D, off in ((8, 0), (6, 3), (7, 2)):
        x = np.zeros((2, 5, D))
        y = R.sinusoidal_pos(x, offset=off)
        for s in range(5):
            p = off + s
            for c in range(D):
                i = c // 2
                ang = p / 10000 ** (2 * i / D)
                want = math.sin(ang) if c % 2 == 0 else math.cos(ang)
                close(y[1, s, c], want, 1e-12, "D=%d s=%d c=%d" % (D, s, c))
    # offset consistency
    x = rng(35).standard_normal((1, 9, 8))
    close(R.sinusoidal_pos(x, 0)[:, 4:], R.sinusoidal_pos(x[:, 4:], offset=4))


def rotary_complex(x, base, offset, R_):
    """Independent formulation: pair (i, i+half) as a complex number
    x[i] + 1j*x[i+half] multiplied by exp(1j*theta_i)."""
    half = R_ // 2
    y = x.copy()
    S = x.shape[2]
    for s in range(S):
        for i in range(half):
            th = (offset + s) * base ** (-2.0 * i / R_)
            z = (x[..., s, i] + 1j * x[..., s, i + half]) * complex(math.cos(th), math.sin(th))
            y[..., s, i] = z.real
            y[..., s, i + half] = z.imag
    return y


@test
def rotary_vs_complex_and_norms():
    g = rng(36)
    x = g.standard_normal((2, 3, 6, 8))
    y = R.rotary(x)
    close(y, rotary_complex(x, 10000.0, 0, 8))
    close(R.rotary(x, base=500.0, offset=7), rotary_complex(x, 500.0, 7, 8))
    # norms of each rotated pair preserved
    half = 4
    close(y[..., :half] ** 2 + y[..., half:] ** 2, x[..., :half] ** 2 + x[..., half:] ** 2,
          1e-12)
    # position 0 is identity
    close(y[:, :, 0], x[:, :, 0])
    # partial rotary: channels >= R pass through
    yp = R.rotary(x, rotary_dim=4, offset=2)
    close(yp[..., 4:], x[..., 4:])
    close(yp[..., :4], rotary_complex(x[..., :4].copy(), 10000.0, 2, 4))
    # offset consistency
    close(R.rotary(x)[:, :, 2:], R.rotary(x[:, :, 2:], offset=2))


@test
def rotary_relative_position_property():
    g = rng(37)
    q = g.standard_normal(16)
    k = g.standard_normal(16)

    def at(v, pos):
        return R.rotary(v.reshape(1, 1, 1, 16), offset=pos)[0, 0, 0]
    d1 = at(q, 10) @ at(k, 7)
    d2 = at(q, 53) @ at(k, 50)
    close(d1, d2, 1e-9)


# --------------------------------------------------------------------------
# whole models
# --------------------------------------------------------------------------

def _load_make_weights():
    import importlib.util
    spec = importlib.util.spec_from_file_location("make_weights", _MAKE_WEIGHTS)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@test
def small_encoder_structure():
    mw = _load_make_weights()
    W, cfg = mw.make_weights("small_encoder", seed=1)
    names = sorted(W)
    assert len(names) == 1 + 2 * 16, len(names)
    assert W["embed.weight"].shape == (100, 64)
    assert W["layers.1.ffn.up.weight"].shape == (256, 64)
    assert W["layers.1.ffn.down.weight"].shape == (64, 256)
    ids = rng(40).integers(0, 100, size=(1, 16)).astype(np.int32)
    y = R.small_encoder(ids, W)
    assert y.shape == (1, 16, 64)
    close(R.small_encoder(ids, W, layers_to_keep=[0, 1]), y)
    x0 = W["embed.weight"][ids].astype(np.float64) + R.sinusoidal_table(16, 64)
    close(R.small_encoder(ids, W, layers_to_keep=[]), x0)
    # manual composition of layer 1 only with loop-based parts
    p = "layers.1."
    Wd = {k: v.astype(np.float64) for k, v in W.items()}
    a = loop_mha(x0, Wd[p + "attn.q.weight"], Wd[p + "attn.k.weight"],
                 Wd[p + "attn.v.weight"], Wd[p + "attn.o.weight"],
                 tuple(Wd[p + "attn.%s.bias" % n] for n in "qkvo"), None, 4, 4, 16)
    h = loop_layer_norm(x0 + a, Wd[p + "ln1.weight"], Wd[p + "ln1.bias"], 1e-5)
    f = np.maximum(h @ Wd[p + "ffn.up.weight"].T + Wd[p + "ffn.up.bias"], 0) \
        @ Wd[p + "ffn.down.weight"].T + Wd[p + "ffn.down.bias"]
    want = loop_layer_norm(h + f, Wd[p + "ln2.weight"], Wd[p + "ln2.bias"], 1e-5)
    close(R.small_encoder(ids, W, layers_to_keep=[1]), want, 1e-9)


@test
def bert_encoder_small_config():
    mw = _load_make_weights()
    W, cfg = mw.make_weights("bert", seed=2, layers=3, d=32, heads=4, dff=64)
    assert len(W) == 3 * 16
    x = rng(41).standard_normal((2, 6, 32))
    y = R.bert_encoder(x, W, num_layers=3, d=32, heads=4, dff=64)
    assert y.shape == (2, 6, 32)
    close(R.bert_encoder(x, W, heads=4), y)  # layer count / sizes inferred
    # composition of layer 2 with loop parts
    Wd = {k: v.astype(np.float64) for k, v in W.items()}
    p = "encoder.layer.2."
    names = ["attention.self.query", "attention.self.key", "attention.self.value",
             "attention.output.dense"]
    a = loop_mha(x, *[Wd[p + n + ".weight"] for n in names],
                 tuple(Wd[p + n + ".bias"] for n in names), None, 4, 4, 8)
    h = loop_layer_norm(x + a, Wd[p + "attention.output.LayerNorm.weight"],
                        Wd[p + "attention.output.LayerNorm.bias"], 1e-12)
    u = h @ Wd[p + "intermediate.dense.weight"].T + Wd[p + "intermediate.dense.bias"]
    u = np.vectorize(lambda t: 0.5 * t * (1 + math.erf(t / math.sqrt(2))))(u)
    f = u @ Wd[p + "output.dense.weight"].T + Wd[p + "output.dense.bias"]
    want = loop_layer_norm(h + f, Wd[p + "output.LayerNorm.weight"],
                           Wd[p + "output.LayerNorm.bias"], 1e-12)
    close(R.bert_encoder(x, W, num_layers=3, layers_to_keep=[2], heads=4), want, 1e-9)
    try:
        R.bert_encoder(x, W, num_layers=3, heads=4, d=64)
    except ValueError:
        pass
    else:
        raise AssertionError("d mismatch not detected")


@test
def decoder_block_causal_and_composition():
    mw = _load_make_weights()
    W, cfg = mw.make_weights("decoder_block", seed=3)
    assert len(W) == 16
    assert W["h.0.mlp.up.weight"].shape == (1024, 256)
    g = rng(42)
    x = g.standard_normal((1, 64, 256))
    y = R.decoder_block(x, W)
    assert y.shape == (1, 64, 256)
    x2 = x.copy()
    x2[:, 40:] = g.standard_normal((1, 24, 256))
    y2 = R.decoder_block(x2, W)
    close(y2[:, :40], y[:, :40], 1e-12, "causality")
    assert np.max(np.abs(y2[:, 40:] - y[:, 40:])) > 1e-6
    # small-size composition against loop parts
    W2, _ = mw.make_weights("decoder_block", seed=4, d=16, heads=2, dff=32)
    Wd = {k: v.astype(np.float64) for k, v in W2.items()}
    xs = g.standard_normal((1, 5, 16))
    p = "h.0."
    ln1 = loop_layer_norm(xs, Wd[p + "ln_1.weight"], Wd[p + "ln_1.bias"], 1e-5)
    a = loop_mha(ln1, *[Wd[p + "attn.%s.weight" % n] for n in "qkvo"],
                 tuple(Wd[p + "attn.%s.bias" % n] for n in "qkvo"), None, 2, 2, 8,
                 causal=True)
    h = xs + a
    ln2 = loop_layer_norm(h, Wd[p + "ln_2.weight"], Wd[p + "ln_2.bias"], 1e-5)
    u = ln2 @ Wd[p + "mlp.up.weight"].T + Wd[p + "mlp.up.bias"]
    u = 0.5 * u * (1 + np.tanh(math.sqrt(2 / math.pi) * (u + 0.044715 * u ** 3)))
    want = h + u @ Wd[p + "mlp.down.weight"].T + Wd[p + "mlp.down.bias"]
    close(R.decoder_block(xs, W2, heads=2), want, 1e-9)


# --------------------------------------------------------------------------
# tensor I/O
# --------------------------------------------------------------------------

@test
def safetensors_round_trip_and_alignment():
    g = rng(50)
    tensors = {
        "a.f32": g.standard_normal((3, 5)).astype(np.float32),
        "b.f16": g.standard_normal((7,)).astype(np.float16),
        "c.i32": g.integers(-1000, 1000, size=(2, 3, 4)).astype(np.int32),
        "d.i64": g.integers(-2 ** 40, 2 ** 40, size=(5,)).astype(np.int64),
        "e.scalar": np.array(3.25, dtype=np.float32),
        "f.empty": np.zeros((0, 4), dtype=np.float32),
        "g.f64": g.standard_normal((2, 2)),
        "h.u8": np.arange(5, dtype=np.uint8),
    }
    with tempfile.TemporaryDirectory() as d:
        for nm_len in range(0, 9):  # vary header length to hit every padding
            path = os.path.join(d, "t%d.safetensors" % nm_len)
            t = dict(tensors)
            t["x" * (nm_len + 1)] = np.ones((1,), np.float32)
            T.write_safetensors(path, t, metadata={"format": "pt", "k" * nm_len: "v"})
            raw = _read_bytes(path)
            (n,) = struct.unpack("<Q", raw[:8])
            assert (8 + n) % 8 == 0 and n % 8 == 0, "header not 8-byte aligned"
            hdr = json.loads(raw[8:8 + n].decode("utf-8"))
            assert hdr["__metadata__"]["format"] == "pt"
            assert raw[8:8 + n].rstrip(b" ") == raw[8:8 + n].rstrip()
            # independently decode one tensor straight from the bytes
            info = hdr["a.f32"]
            assert info["dtype"] == "F32" and info["shape"] == [3, 5]
            b0, e0 = info["data_offsets"]
            arr = np.frombuffer(raw[8 + n + b0:8 + n + e0], dtype="<f4").reshape(3, 5)
            assert np.array_equal(arr, tensors["a.f32"])
            back, md = T.read_safetensors_with_metadata(path)
            assert md["format"] == "pt"
            assert set(back) == set(t)
            for k, v in t.items():
                assert back[k].dtype == v.dtype, (k, back[k].dtype, v.dtype)
                assert back[k].shape == v.shape, k
                assert np.array_equal(back[k], v), k
            tags = {k: hdr[k]["dtype"] for k in tensors}
            assert tags == {"a.f32": "F32", "b.f16": "F16", "c.i32": "I32",
                            "d.i64": "I64", "e.scalar": "F32", "f.empty": "F32",
                            "g.f64": "F64", "h.u8": "U8"}, tags
            assert hdr["e.scalar"]["shape"] == []
            assert T.read_safetensors(path).keys() == back.keys()


@test
def safetensors_bf16():
    vals = np.array([1.0, -2.5, 3.140625, 1.0 + 2.0 ** -8, 1.0 + 3 * 2.0 ** -8,
                     1.0 + 2.0 ** -8 + 2.0 ** -20, 0.0, -0.0, np.inf, -np.inf,
                     3.0e38], dtype=np.float32)
    bits = T.f32_to_bf16_bits(vals)
    back = T.bf16_bits_to_f32(bits)
    # exact-representable values survive
    assert np.array_equal(back[[0, 1, 2, 6, 9]], vals[[0, 1, 2, 6, 9]])
    assert back[3] == 1.0                     # tie -> even (down)
    assert back[4] == 1.0 + 4 * 2.0 ** -8     # tie -> even (up)
    assert back[5] == 1.0 + 2 * 2.0 ** -8     # above tie -> up
    assert np.signbit(back[7]) and back[7] == 0
    assert np.isposinf(back[8]) and np.isneginf(back[9])
    assert T.bf16_bits_to_f32(T.f32_to_bf16_bits(np.float32(1.0 + 3 * 2.0 ** -8),
                                                 "truncate")) == 1.0 + 2 * 2.0 ** -8
    assert np.isnan(T.bf16_bits_to_f32(T.f32_to_bf16_bits(np.array([np.nan], np.float32))))[0]
    assert int(T.f32_to_bf16_bits(np.float32(1.0))) == 0x3F80
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "bf.safetensors")
        x = np.random.default_rng(51).standard_normal((4, 3)).astype(np.float32)
        T.write_safetensors(path, {"w": x, "raw": bits}, dtypes={"w": "BF16", "raw": "BF16"})
        hdr, _ = T.read_safetensors_header(path)
        assert hdr["w"]["dtype"] == "BF16" and hdr["raw"]["dtype"] == "BF16"
        assert hdr["w"]["data_offsets"][1] - hdr["w"]["data_offsets"][0] == 24
        f = T.read_safetensors(path)
        assert f["w"].dtype == np.float32
        assert np.array_equal(f["w"], T.bf16_bits_to_f32(T.f32_to_bf16_bits(x)))
        assert np.max(np.abs(f["w"] - x) / np.maximum(np.abs(x), 1e-30)) <= 2.0 ** -8
        assert np.array_equal(T.read_safetensors(path, bf16="bits")["raw"], bits)
        # other dtype overrides
        T.write_safetensors(path, {"w": x}, dtypes={"w": "F16"})
        assert np.array_equal(T.read_safetensors(path)["w"], x.astype(np.float16))


@test
def safetensors_rejects_corruption():
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "c.safetensors")
        T.write_safetensors(path, {"a": np.ones((4,), np.float32)})
        raw = _read_bytes(path)
        _write_bytes(path, raw[:-2])  # truncated data
        try:
            T.read_safetensors(path)
        except ValueError:
            pass
        else:
            raise AssertionError("truncation not detected")


@test
def npy_round_trip():
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "a.npy")
        a = np.arange(12, dtype=np.int32).reshape(3, 4)
        T.save_npy(p, a)
        b = T.load_npy(p)
        assert b.dtype == np.int32 and np.array_equal(a, b)


# --------------------------------------------------------------------------
# make_weights.py end to end
# --------------------------------------------------------------------------

@test
def make_weights_cli():
    mw = _load_make_weights()
    with tempfile.TemporaryDirectory() as d:
        for model, extra, stem in (
                ("small_encoder", [], "ids"),
                ("bert", ["--layers", "3", "--d", "32", "--heads", "4", "--dff", "64",
                          "--seq", "8", "--keep", "0,2"], "x"),
                ("decoder_block", [], "x")):
            out = os.path.join(d, model + ".safetensors")
            ref = os.path.join(d, model + "_ref.npy")
            inp = os.path.join(d, model + "_in")
            cmd = [sys.executable, _MAKE_WEIGHTS, model, out, "--seed", "5",
                   "--inputs", inp, "--reference", ref] + extra
            r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            assert r.returncode == 0, r.stderr.decode()
            W, md = T.read_safetensors_with_metadata(out)
            assert md["model"] == model
            assert all(v.dtype == np.float32 for v in W.values())
            x = T.load_npy(os.path.join(inp, stem + ".npy"))
            y = T.load_npy(ref)
            assert y.dtype == np.float32
            if model == "small_encoder":
                assert x.dtype == np.int32 and x.shape == (1, 16)
                assert x.min() >= 0 and x.max() < 100
                want = R.small_encoder(x, W)
                assert y.shape == (1, 16, 64)
            elif model == "bert":
                assert x.dtype == np.float32 and x.shape == (1, 8, 32)
                assert len(W) == 48
                want = R.bert_encoder(x, W, num_layers=3, layers_to_keep=[0, 2], heads=4)
            else:
                assert x.dtype == np.float32 and x.shape == (1, 64, 256)
                want = R.decoder_block(x, W)
            close(y, want.astype(np.float32), 0.0, model)
            # the seeded weights are reproducible in-process
            W2, _ = mw.make_weights(model, seed=5, **(
                dict(layers=3, d=32, heads=4, dff=64) if model == "bert" else {}))
            assert set(W2) == set(W)
            for k in W:
                assert np.array_equal(W2[k], W[k]), k
        # a layer's weights do not depend on the layer count
        Wa, _ = mw.make_weights("bert", seed=5, layers=1, d=32, heads=4, dff=64)
        Wb, _ = mw.make_weights("bert", seed=5, layers=4, d=32, heads=4, dff=64)
        for k in Wa:
            assert np.array_equal(Wa[k], Wb[k])
        # init statistics
        Wc, _ = mw.make_weights("bert", seed=0, layers=1)
        q = Wc["encoder.layer.0.attention.self.query.weight"]
        assert q.shape == (768, 768) and abs(q.std() - 0.02) < 1e-3
        lw = Wc["encoder.layer.0.output.LayerNorm.weight"]
        assert abs(lw.mean() - 1.0) < 5e-3 and abs(lw.std() - 0.02) < 5e-3
        We, _ = mw.make_weights("small_encoder", seed=0)
        assert abs(We["embed.weight"].std() - 0.5) < 0.02


def main():
    passed = failed = 0
    for t in TESTS:
        try:
            t()
        except Exception:
            failed += 1
            print("FAIL %s" % t.__name__)
            traceback.print_exc()
        else:
            passed += 1
            print("ok   %s" % t.__name__)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
