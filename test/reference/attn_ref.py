"""Independent float64 numpy reference for the attnc numerical tests.

Written directly from the mathematical definitions of each op; it does not
use or mirror any compiler code.  Every function casts its inputs to float64
and returns float64 (``embedding`` returns the looked-up rows in float64).

Only numpy and the Python standard library are used, so this runs under
Debian's /usr/bin/python3 (numpy 1.24).
"""

import math

import numpy as np

__all__ = [
    "sdpa", "attention_mask", "mha",
    "layer_norm", "rms_norm", "linear", "ffn", "gated_ffn",
    "relu", "gelu", "gelu_tanh", "silu", "sigmoid", "add", "softmax",
    "ACTIVATIONS",
    "embedding", "sinusoidal_pos", "sinusoidal_table", "learned_pos", "rotary",
    "small_encoder", "bert_encoder", "decoder_block",
]


def _f64(x):
    return np.asarray(x, dtype=np.float64)


# --------------------------------------------------------------------------
# Elementwise ops
# --------------------------------------------------------------------------

def relu(x):
    x = _f64(x)
    return np.maximum(x, 0.0)


_erf_ufunc = np.frompyfunc(math.erf, 1, 1)


def _erf(x):
    x = _f64(x)
    return np.asarray(_erf_ufunc(x), dtype=np.float64).reshape(x.shape)


def gelu(x):
    """Exact GELU: 0.5 x (1 + erf(x / sqrt 2)), erf from math.erf."""
    x = _f64(x)
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def gelu_tanh(x):
    """Tanh-approximated GELU."""
    x = _f64(x)
    c = math.sqrt(2.0 / math.pi)
    return 0.5 * x * (1.0 + np.tanh(c * (x + 0.044715 * x ** 3)))


def sigmoid(x):
    x = _f64(x)
    e = np.exp(-np.abs(x))  # stable in both tails
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def silu(x):
    x = _f64(x)
    return x * sigmoid(x)


def add(a, b):
    return _f64(a) + _f64(b)


def softmax(x, dim=-1):
    x = _f64(x)
    m = np.max(x, axis=dim, keepdims=True)
    e = np.exp(x - m)
    return e / np.sum(e, axis=dim, keepdims=True)


ACTIVATIONS = {
    "relu": relu,
    "gelu": gelu,
    "gelu_tanh": gelu_tanh,
    "silu": silu,
    "identity": lambda x: _f64(x),
    None: lambda x: _f64(x),
}


def _activation(act):
    if callable(act):
        return act
    try:
        return ACTIVATIONS[act]
    except KeyError:
        raise ValueError("unknown activation %r" % (act,))


# --------------------------------------------------------------------------
# Dense / normalization ops
# --------------------------------------------------------------------------

def linear(x, w, b=None):
    """x @ w.T + b with w in PyTorch nn.Linear layout [N, K]."""
    y = _f64(x) @ _f64(w).T
    if b is not None:
        y = y + _f64(b)
    return y


def ffn(x, w1, b1, w2, b2, activation="relu"):
    """act(x @ w1.T + b1) @ w2.T + b2 (biases may be None)."""
    return linear(_activation(activation)(linear(x, w1, b1)), w2, b2)


def gated_ffn(x, wg, bg, wu, bu, wd, bd, activation="silu"):
    """(act(x @ wg.T + bg) * (x @ wu.T + bu)) @ wd.T + bd (GLU family; SwiGLU
    with silu). Biases may be None."""
    return linear(_activation(activation)(linear(x, wg, bg)) * linear(x, wu, bu), wd, bd)


def layer_norm(x, gamma, beta, eps=1e-5):
    """LayerNorm over the last dim with biased variance."""
    x = _f64(x)
    mu = np.mean(x, axis=-1, keepdims=True)
    var = np.mean((x - mu) ** 2, axis=-1, keepdims=True)
    y = (x - mu) / np.sqrt(var + eps)
    if gamma is not None:
        y = y * _f64(gamma)
    if beta is not None:
        y = y + _f64(beta)
    return y


def rms_norm(x, gamma, eps=1e-6):
    """x / sqrt(mean(x^2) + eps) * gamma over the last dim."""
    x = _f64(x)
    y = x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)
    if gamma is not None:
        y = y * _f64(gamma)
    return y


# --------------------------------------------------------------------------
# Attention
# --------------------------------------------------------------------------

def attention_mask(B, Sq, Sk, causal=False, window=None, kv_lengths=None,
                   query_positions=None):
    """Boolean visibility mask [B, 1, Sq, Sk] (True = key visible).

    Query row i sits at absolute position p = i + Sk - Sq (bottom-right
    alignment), or p = query_positions[b] + i when they are given ([B]).
    Key j is visible iff
      (not causal or j <= p) and
      (window in (None, 0) or |p - j| < window) and
      (kv_lengths is None or j < kv_lengths[b]).
    """
    i = np.arange(Sq)[None, :, None]
    j = np.arange(Sk)[None, None, :]
    if query_positions is None:
        p = np.broadcast_to(i + (Sk - Sq), (B, Sq, 1))
    else:
        starts = np.asarray(query_positions).reshape(-1)
        if starts.shape[0] != B:
            raise ValueError("query_positions has %d entries, batch is %d"
                             % (starts.shape[0], B))
        p = starts[:, None, None] + i
    vis = np.ones((B, Sq, Sk), dtype=bool)
    if causal:
        vis &= j <= p
    if window is not None and window != 0:
        vis &= np.abs(p - j) < window
    vis = vis[:, None].copy()
    if kv_lengths is not None:
        lens = np.asarray(kv_lengths).reshape(-1)
        if lens.shape[0] == 1 and B != 1:
            lens = np.broadcast_to(lens, (B,))
        if lens.shape[0] != B:
            raise ValueError("kv_lengths has %d entries, batch is %d"
                             % (lens.shape[0], B))
        vis &= (np.arange(Sk)[None, None, None, :]
                < lens[:, None, None, None])
    return vis


def _expand_kv(t, Hq):
    """Map kv heads to query heads: query head h uses kv head h // (Hq//Hkv)."""
    Hkv = t.shape[1]
    if Hq % Hkv != 0:
        raise ValueError("Hq=%d is not a multiple of Hkv=%d" % (Hq, Hkv))
    group = Hq // Hkv
    idx = np.arange(Hq) // group
    return t[:, idx]


def _scores(q, k, score, scale, score_weights):
    """Raw score tensor [B, H, Sq, Sk] (q and k already head-expanded)."""
    Dk = k.shape[-1]
    score_weights = tuple(score_weights or ())
    if score in ("dot", "scaled_dot"):
        s = 1.0 if score == "dot" else 1.0 / math.sqrt(Dk)
        if scale is not None:
            s = float(scale)
        return s * np.einsum("bhid,bhjd->bhij", q, k)
    if score == "general":
        (W,) = score_weights[:1] or (None,)
        if W is None:
            raise ValueError("'general' score needs score_weights=(W,)")
        W = _f64(W)  # [Dq, Dk]
        s = 1.0 if scale is None else float(scale)
        return s * np.einsum("bhid,de,bhje->bhij", q, W, k)
    if score == "additive":
        if len(score_weights) < 2:
            raise ValueError("'additive' score needs score_weights=(W, v_a)")
        W, va = _f64(score_weights[0]), _f64(score_weights[1])  # [A,Dq+Dk], [A]
        Dq = q.shape[-1]
        wq = np.einsum("bhid,ad->bhia", q, W[:, :Dq])
        wk = np.einsum("bhjd,ad->bhja", k, W[:, Dq:])
        t = np.tanh(wq[:, :, :, None, :] + wk[:, :, None, :, :])
        s = 1.0 if scale is None else float(scale)
        return s * np.einsum("bhija,a->bhij", t, va)
    if score == "cosine":
        nq = np.maximum(np.sqrt(np.sum(q * q, axis=-1)), 1e-6)  # [B,H,Sq]
        nk = np.maximum(np.sqrt(np.sum(k * k, axis=-1)), 1e-6)  # [B,H,Sk]
        s = 1.0 if scale is None else float(scale)
        dots = np.einsum("bhid,bhjd->bhij", q, k)
        return s * dots / (nq[..., :, None] * nk[..., None, :])
    if score == "gaussian":
        s = 1.0 / math.sqrt(Dk) if scale is None else float(scale)
        diff = q[:, :, :, None, :] - k[:, :, None, :, :]
        return -0.5 * s * np.sum(diff * diff, axis=-1)
    raise ValueError("unknown score %r" % (score,))


def sdpa(q, k, v, bias=None, kv_lengths=None, score_weights=(),
         score="scaled_dot", scale=None, causal=False, window=None,
         query_positions=None):
    """Scaled-dot-product-style attention.

    q [B,Hq,Sq,Dq], k [B,Hkv,Sk,Dk], v [B,Hkv,Sk,Dv] -> [B,Hq,Sq,Dv].

    Softmax runs over visible keys only (row max subtracted); a row with no
    visible key -- or whose visible scores are all -inf because of the bias --
    yields all zeros.
    """
    q, k, v = _f64(q), _f64(k), _f64(v)
    if q.ndim != 4 or k.ndim != 4 or v.ndim != 4:
        raise ValueError("q, k, v must be rank 4")
    B, Hq, Sq, _ = q.shape
    Sk = k.shape[2]
    if k.shape[:3] != v.shape[:3]:
        raise ValueError("k and v disagree: %s vs %s" % (k.shape, v.shape))
    ke = _expand_kv(k, Hq)
    ve = _expand_kv(v, Hq)
    scores = _scores(q, ke, score, scale, score_weights)
    if bias is not None:
        bias = _f64(bias)
        if bias.ndim != 4:
            raise ValueError("bias must be rank 4 (broadcastable)")
        scores = scores + bias
    scores = np.broadcast_to(scores, (B, Hq, Sq, Sk))
    vis = np.broadcast_to(
        attention_mask(B, Sq, Sk, causal, window, kv_lengths,
                       query_positions), scores.shape)
    masked = np.where(vis, scores, -np.inf)
    m = np.max(masked, axis=-1, keepdims=True) if Sk > 0 else \
        np.full(scores.shape[:-1] + (1,), -np.inf)
    empty = ~np.isfinite(m)  # no visible key (or all -inf)
    m_safe = np.where(empty, 0.0, m)
    with np.errstate(invalid="ignore", over="ignore"):
        e = np.where(vis, np.exp(masked - m_safe), 0.0)
    denom = np.sum(e, axis=-1, keepdims=True)
    p = np.where(empty, 0.0, e / np.where(denom == 0, 1.0, denom))
    return np.einsum("bhij,bhjd->bhid", p, ve)


def mha(x, wq, wk, wv, wo, biases=None, kv=None, num_heads=None,
        num_kv_heads=None, wide=False, causal=False, window=None, scale=None,
        kv_lengths=None):
    """Multi-head attention with PyTorch nn.Linear weight layout.

    x [B,Sq,Dm]; kv [B,Sk,Dkv] (None = self attention).
    dh = Dm if wide else Dm // num_heads.
    wq [H*dh, Dm], wk/wv [Hkv*dh, Dkv], wo [Dm, H*dh].
    biases = (bq, bk, bv, bo) or None (individual entries may be None).
    """
    if num_heads is None:
        raise ValueError("num_heads is required")
    x = _f64(x)
    src = x if kv is None else _f64(kv)
    B, Sq, Dm = x.shape
    Sk = src.shape[1]
    H = int(num_heads)
    Hkv = H if num_kv_heads is None else int(num_kv_heads)
    if wide:
        dh = Dm
    else:
        if Dm % H != 0:
            raise ValueError("Dm=%d not divisible by heads=%d" % (Dm, H))
        dh = Dm // H
    bq, bk, bv, bo = biases if biases is not None else (None,) * 4
    Q = linear(x, wq, bq)
    K = linear(src, wk, bk)
    V = linear(src, wv, bv)
    if Q.shape[-1] != H * dh or K.shape[-1] != Hkv * dh or V.shape[-1] != Hkv * dh:
        raise ValueError("projection widths %d/%d/%d do not match H*dh=%d, "
                         "Hkv*dh=%d" % (Q.shape[-1], K.shape[-1], V.shape[-1],
                                        H * dh, Hkv * dh))
    Q = Q.reshape(B, Sq, H, dh).transpose(0, 2, 1, 3)
    K = K.reshape(B, Sk, Hkv, dh).transpose(0, 2, 1, 3)
    V = V.reshape(B, Sk, Hkv, dh).transpose(0, 2, 1, 3)
    o = sdpa(Q, K, V, kv_lengths=kv_lengths, score="scaled_dot", scale=scale,
             causal=causal, window=window)
    o = o.transpose(0, 2, 1, 3).reshape(B, Sq, H * dh)
    return linear(o, wo, bo)


# --------------------------------------------------------------------------
# Embeddings / positions
# --------------------------------------------------------------------------

def embedding(ids, table):
    ids = np.asarray(ids)
    if not np.issubdtype(ids.dtype, np.integer):
        raise ValueError("ids must be integers")
    return _f64(table)[ids]


def sinusoidal_table(S, D, offset=0):
    """PE[s, 2i] = sin(p / 10000^(2i/D)), PE[s, 2i+1] = cos(same), p = offset+s."""
    p = (offset + np.arange(S, dtype=np.float64))[:, None]
    i = np.arange((D + 1) // 2, dtype=np.float64)[None, :]
    ang = p / np.power(10000.0, 2.0 * i / D)
    pe = np.zeros((S, D), dtype=np.float64)
    pe[:, 0::2] = np.sin(ang)[:, : (D + 1) // 2]
    pe[:, 1::2] = np.cos(ang)[:, : D // 2]
    return pe


def sinusoidal_pos(x, offset=0, positions=None):
    """x [B,S,D] + the encoding at offset + s, or with run-time start
    positions [B] at offset + positions[b] + s."""
    x = _f64(x)
    S, D = x.shape[-2], x.shape[-1]
    if positions is not None:
        return x + np.stack([sinusoidal_table(S, D, offset + int(p))
                             for p in np.asarray(positions).reshape(-1)])
    return x + sinusoidal_table(S, D, offset)


def learned_pos(x, table, offset=0, positions=None):
    """x [B,S,D] + table rows offset + s, or with run-time start positions
    [B], rows offset + positions[b] + s."""
    x = _f64(x)
    S = x.shape[-2]
    if positions is not None:
        t = _f64(table)
        rows = offset + np.asarray(positions)[:, None] + np.arange(S)[None, :]
        if rows.max() >= t.shape[0] or rows.min() < 0:
            raise ValueError("positions beyond the position table")
        return x + t[rows]
    t = _f64(table)[offset:offset + S]
    if t.shape[0] != S:
        raise ValueError("position table too short for offset %d + %d rows"
                         % (offset, S))
    return x + t


def rotary(x, base=10000.0, offset=0, rotary_dim=None, positions=None,
           inv_freq=None, scale=1.0):
    """Rotary position embedding (rotate-half pairing i <-> i+half).

    x [B,H,S,Dh]; R = rotary_dim or Dh; theta_i = p * base^(-2i/R), or
    p * inv_freq[i] when given (scaled frequencies), p = offset + s (+
    positions[b] with run-time start positions [B]); cos and sin are
    multiplied by `scale`.
    """
    x = _f64(x)
    B, S, Dh = x.shape[0], x.shape[-2], x.shape[-1]
    R = Dh if not rotary_dim else int(rotary_dim)
    if R % 2 != 0 or R > Dh:
        raise ValueError("rotary_dim must be even and <= head dim")
    half = R // 2
    start = (np.zeros(B) if positions is None
             else np.asarray(positions, dtype=np.float64))
    p = (offset + start[:, None] + np.arange(S, dtype=np.float64)[None, :])
    i = np.arange(half, dtype=np.float64)
    freq = (np.power(float(base), -2.0 * i / R) if inv_freq is None
            else np.asarray(inv_freq, dtype=np.float64))
    theta = p[:, None, :, None] * freq
    c, s = scale * np.cos(theta), scale * np.sin(theta)  # [B, 1, S, half]
    x1 = x[..., :half]
    x2 = x[..., half:R]
    y = x.copy()
    y[..., :half] = x1 * c - x2 * s
    y[..., half:R] = x2 * c + x1 * s
    return y


def cache_write(cache, new, positions):
    """cache [B,H,L,D] with rows [positions[b], positions[b] + T) of batch b
    replaced by new[b] ([B,H,T,D])."""
    y = _f64(cache).copy()
    T = new.shape[2]
    for b, p in enumerate(np.asarray(positions)):
        if p < 0 or p + T > y.shape[2]:
            raise ValueError("cache write outside the cache")
        y[b, :, p:p + T] = _f64(new[b])
    return y


# --------------------------------------------------------------------------
# Whole-model references (weights as a dict name -> array)
# --------------------------------------------------------------------------

def _layer_indices(W, prefix):
    """Sorted layer indices l for which some key starts with prefix + 'l.'."""
    idx = set()
    for name in W:
        if name.startswith(prefix):
            head = name[len(prefix):].split(".", 1)[0]
            if head.isdigit():
                idx.add(int(head))
    return sorted(idx)


def _select_layers(num_layers, layers_to_keep):
    if layers_to_keep is None:
        return list(range(num_layers))
    keep = sorted(set(int(l) for l in layers_to_keep))
    for l in keep:
        if not 0 <= l < num_layers:
            raise ValueError("layer %d out of range [0, %d)" % (l, num_layers))
    return keep


def _attn_weights(W, p, names=("q", "k", "v", "o")):
    ws = [W[p + n + ".weight"] for n in names]
    bs = tuple(W.get(p + n + ".bias") for n in names)
    if all(b is None for b in bs):
        bs = None
    return ws, bs


def small_encoder(ids, W, layers_to_keep=None, num_layers=None, heads=4,
                  eps=1e-5):
    """Post-LN base-Transformer-like encoder (ReLU FFN, sinusoidal positions,
    no sqrt(D) embedding scale).  ids [B,S] ints -> [B,S,D]."""
    if num_layers is None:
        num_layers = len(_layer_indices(W, "layers.")) or 2
    x = sinusoidal_pos(embedding(ids, W["embed.weight"]), offset=0)
    for l in _select_layers(num_layers, layers_to_keep):
        p = "layers.%d." % l
        (wq, wk, wv, wo), bs = _attn_weights(W, p + "attn.")
        a = mha(x, wq, wk, wv, wo, biases=bs, num_heads=heads)
        x = layer_norm(x + a, W[p + "ln1.weight"], W[p + "ln1.bias"], eps)
        f = ffn(x, W[p + "ffn.up.weight"], W.get(p + "ffn.up.bias"),
                W[p + "ffn.down.weight"], W.get(p + "ffn.down.bias"), "relu")
        x = layer_norm(x + f, W[p + "ln2.weight"], W[p + "ln2.bias"], eps)
    return x


def bert_encoder(x, W, num_layers=None, layers_to_keep=None, d=None, heads=12,
                 dff=None, eps=1e-12):
    """HF-BERT encoder stack (post-LN, erf GELU) on an already embedded
    hidden state x [B,S,d].  num_layers/d/dff default to what W holds
    (d and dff, if given, are checked against the weight shapes)."""
    pre = "encoder.layer."
    if num_layers is None:
        num_layers = len(_layer_indices(W, pre))
    x = _f64(x)
    for l in _select_layers(num_layers, layers_to_keep):
        p = pre + "%d." % l
        names = ("attention.self.query", "attention.self.key",
                 "attention.self.value", "attention.output.dense")
        (wq, wk, wv, wo), bs = _attn_weights(W, p, names)
        up_w = W[p + "intermediate.dense.weight"]
        if d is not None and (x.shape[-1] != d or np.shape(wq) != (d, d)):
            raise ValueError("d=%d does not match weights/input" % d)
        if dff is not None and np.shape(up_w)[0] != dff:
            raise ValueError("dff=%d does not match weights" % dff)
        a = mha(x, wq, wk, wv, wo, biases=bs, num_heads=heads)
        x = layer_norm(x + a, W[p + "attention.output.LayerNorm.weight"],
                       W[p + "attention.output.LayerNorm.bias"], eps)
        f = ffn(x, up_w, W.get(p + "intermediate.dense.bias"),
                W[p + "output.dense.weight"], W.get(p + "output.dense.bias"),
                "gelu")
        x = layer_norm(x + f, W[p + "output.LayerNorm.weight"],
                       W[p + "output.LayerNorm.bias"], eps)
    return x


def decoder_block(x, W, heads=8, eps=1e-5):
    """GPT-style pre-LN causal block (layer index 0, tanh-GELU MLP)."""
    x = _f64(x)
    p = "h.0."
    (wq, wk, wv, wo), bs = _attn_weights(W, p + "attn.")
    h = x + mha(layer_norm(x, W[p + "ln_1.weight"], W[p + "ln_1.bias"], eps),
                wq, wk, wv, wo, biases=bs, num_heads=heads, causal=True)
    f = ffn(layer_norm(h, W[p + "ln_2.weight"], W[p + "ln_2.bias"], eps),
            W[p + "mlp.up.weight"], W.get(p + "mlp.up.bias"),
            W[p + "mlp.down.weight"], W.get(p + "mlp.down.bias"), "gelu_tanh")
    return h + f
