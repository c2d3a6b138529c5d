#!/usr/bin/env python3
"""Checks the weights file of attn-compile --quantize=int8-weights /
int4-weights against the f32 checkpoint it was made from, with numpy only.

    check_woq.py layout CKPT_DIR OUT.safetensors --bits B --group G
                 [--dequantized DIR]
    check_woq.py tokens GOT.npy WANT.npy --min-agree F

layout: every `<name>.q8` / `.q4` tensor (rows of little-endian i32 words,
two's complement; int8: weight k is byte k; int4: blocks of 32 weights in
16 bytes, byte j of a block holding weight j in its low nibble and weight
16 + j in its high nibble, zero past K; or, with --int8-activations on
AVX-512 VNNI, [ceil(N / 16), W, 16]: 16 rows interleaved a word at a time,
int4 words holding k..k+3 in their low nibbles and k+4..k+7 in their high
ones, zero past N) is unpacked here and multiplied by `<name>.q*_scale`
([N, K / G] f32, or interleaved the same way); the
result must be within half a quantization step (scale / 2) of the original
f32 weight W[n, k] (the checkpoint tensor, or its transpose for GPT-2's
Conv1D layout), the scale must be max|W| / (2^(B-1) - 1) over its group,
and the f32 tensors the model replaced must be absent. With --dequantized,
writes a checkpoint directory whose tensors are those dequantized weights
(in the checkpoint's own layout), for an f32 build to run as a reference.

tokens: the share of generated tokens equal to the reference's (same row,
same position); PASS when it is at least --min-agree.

    check_woq.py int8-activations CKPT_DIR OUT.safetensors --group G
                 --input IDS.npy --got LOGITS.npy --tol T [--min-tie D]
    check_woq.py bf16-activations CKPT_DIR OUT.safetensors --group G
                 --input IDS.npy --got LOGITS.npy --tol T [--min-tie D]
    check_woq.py random-gpt2 DIR --embd D [--seed S] [--layers L]
                 [--ids IDS.npy --tokens T]

int8-activations (GPT-2 only): a numpy GPT-2 that runs every projection
as --quantize=int8-weights / int4-weights --int8-activations specifies: each activation
row quantized per group of G along K (scale max|x| / 127, 1 for a zero
group; q = clamp(round half to even(x / scale), -127, 127)), the integer
products of a group summed exactly and scaled once by the weight's and
the row's scale. The weights are the file's int8 or int4 ones (as
`layout` reads them), the rest the checkpoint's f32 tensors. PASS when the model's logits
are within --tol of it (max abs error / max|reference|). An activation
whose x / scale lies within an f32 rounding error of a tie (k + 0.5) may
round the other way in the compiled model, whose sums associate
differently, and the layers after it amplify that step; with --min-tie,
an input whose quantized activations come within D of a tie FAILs as
unfit for the check, whatever the logits.

bf16-activations (GPT-2, int4 only): the same numpy GPT-2 with every
projection as --quantize=int4-weights --bf16-activations specifies: the
activation row rounded to bf16 (to nearest even), each weight the group's
scale times its int4 value in f32, rounded to bf16, the products summed
in f64. An activation within an f32 rounding error of halfway between two
bf16 may round the other way here too; --min-tie D (in bf16 steps; one
f32 rounding error is 1.5e-5 of one) fails such an input.

random-gpt2: writes a GPT-2 checkpoint directory (config.json and
model.safetensors, L layers (default 2), 4 heads, 99 tokens, 64 positions,
hidden size D) of seeded random weights, for groups the committed
checkpoint's hidden size of 32 cannot hold; with --ids, also a [1, T]
int64 input of seeded random token ids.
"""

import argparse
import json
import os
import shutil
import struct
import sys

import numpy as np

DTYPES = {"F32": np.float32, "I32": np.int32, "I64": np.int64}


def read_safetensors(path):
    with open(path, "rb") as f:
        size = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(size))
        data = f.read()
    meta = header.pop("__metadata__", None)
    out = {}
    for name, info in header.items():
        a, b = info["data_offsets"]
        out[name] = np.frombuffer(data[a:b], DTYPES[info["dtype"]]).reshape(
            info["shape"])
    return out, meta


def write_safetensors(path, tensors):
    header, offset, blobs = {}, 0, []
    for name, t in tensors.items():
        t = np.ascontiguousarray(t, dtype=np.float32)
        header[name] = {"dtype": "F32", "shape": list(t.shape),
                        "data_offsets": [offset, offset + t.nbytes]}
        offset += t.nbytes
        blobs.append(t.tobytes())
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def deinterleave(t):
    """[ceil(N / 16), X, 16] (rows interleaved 16 at a time) -> [16 *
    ceil(N / 16), X] row by row, padding rows included; 2-D as it is."""
    if t.ndim == 2:
        return t
    return np.ascontiguousarray(t.transpose(0, 2, 1)).reshape(-1, t.shape[1])


def unpack(words, bits):
    """i32 words [N, W] -> weights [N, 4 * W] (int8) or [N, 8 * W] (int4,
    whole blocks of 32, padding included) in k order. Interleaved words
    [ceil(N / 16), W, 16] (rank 3) give their 16 * ceil(N / 16) rows, each
    word's 8 int4 weights in its low nibbles, then its high ones."""
    interleaved = words.ndim == 3
    b = np.ascontiguousarray(deinterleave(words)).view(np.uint8)
    if bits == 8:
        return b.view(np.int8).astype(np.int32)
    n = b.shape[0]
    if interleaved:
        w = b.reshape(n, -1, 4).astype(np.int32)
        lo, hi = w & 0xF, (w >> 4) & 0xF
        both = np.concatenate([lo, hi], axis=2).reshape(n, -1)
        return np.where(both >= 8, both - 16, both)
    blocks = b.reshape(n, -1, 16).astype(np.int32)
    lo = blocks & 0xF
    hi = (blocks >> 4) & 0xF
    lo = np.where(lo >= 8, lo - 16, lo)
    hi = np.where(hi >= 8, hi - 16, hi)
    # Block b's weights 32b .. 32b + 15 are the low nibbles, then the high.
    return np.concatenate([lo, hi], axis=2).reshape(n, -1)


def layout(args):
    ckpt, _ = read_safetensors(os.path.join(args.checkpoint,
                                            "model.safetensors"))
    written, meta = read_safetensors(args.weights)
    with open(os.path.join(args.checkpoint, "config.json")) as f:
        conv1d = json.load(f).get("model_type") == "gpt2"
    suffix = ".q8" if args.bits == 8 else ".q4"
    qmax = 2 ** (args.bits - 1) - 1
    dequantized = dict(ckpt)
    count, worst, untie = 0, 0.0, False
    for name, words in written.items():
        if not name.endswith(suffix):
            continue
        source = name[:-len(suffix)]
        # Packed projections (QKV, gate and up) are named "a+b+c" and bind
        # the concatenation of their rows; GPT-2's Conv1D stores [in, out].
        parts = source.split("+")
        transposed = conv1d and not source.endswith("wte.weight")
        ws = [ckpt[p].T if transposed else ckpt[p] for p in parts]
        wb = np.concatenate(ws, axis=0)
        q = unpack(words, args.bits)
        n, k = wb.shape
        interleaved = words.ndim == 3
        rows = -(-n // 16) * 16 if interleaved else n
        padded = k if args.bits == 8 or interleaved else -(-k // 32) * 32
        if q.shape != (rows, padded):
            print(f"FAIL {name}: {q.shape} does not match {source} {wb.shape}")
            return 1
        if np.any(q[:, k:]) or np.any(q[n:]):
            print(f"FAIL {name}: the padding past K = {k} or N = {n} is not "
                  "zero")
            return 1
        q = q[:n, :k]
        scale = written[name + "_scale"]
        if scale.shape != ((rows // 16, k // args.group, 16) if interleaved
                           else (n, k // args.group)):
            print(f"FAIL {name}_scale shape {scale.shape}")
            return 1
        scale = deinterleave(scale)
        if np.any(scale[n:]):
            print(f"FAIL {name}_scale: the padding past N = {n} is not zero")
            return 1
        scale = scale[:n]
        groups = np.abs(wb).reshape(n, k // args.group, args.group).max(-1)
        want_scale = np.where(groups == 0, 1, groups / qmax)
        if not np.allclose(scale, want_scale, rtol=1e-6, atol=0):
            print(f"FAIL {name}_scale is not max|W| / {qmax} per group")
            return 1
        if np.abs(q).max() > qmax:
            print(f"FAIL {name}: |q| > {qmax}")
            return 1
        step = np.repeat(scale, args.group, axis=1)
        deq = q * step
        err = np.abs(deq - wb) / step
        worst = max(worst, float(err.max()))
        if err.max() > 0.5 + 1e-4:
            print(f"FAIL {name}: {err.max():.4f} steps from W")
            return 1
        row = 0
        for p, w in zip(parts, ws):
            d = deq[row:row + w.shape[0]]
            row += w.shape[0]
            if p.endswith("wte.weight"):
                # The tied LM head: the embedding still gathers from the f32
                # table, so the reference gets an untied head instead.
                untie = True
                p = "lm_head.weight"
            dequantized[p] = d.T if transposed else d
            if p in written and not p.endswith(
                    ("wte.weight", "embed_tokens.weight")):
                print(f"FAIL {p} (replaced) is still in the file")
                return 1
        count += 1
    if count == 0:
        print(f"FAIL no {suffix} tensors in {args.weights}")
        return 1
    if args.dequantized:
        os.makedirs(args.dequantized, exist_ok=True)
        for f in os.listdir(args.checkpoint):
            if f.endswith(".json"):
                shutil.copy(os.path.join(args.checkpoint, f), args.dequantized)
        write_safetensors(os.path.join(args.dequantized, "model.safetensors"),
                          dequantized)
        if untie:
            path = os.path.join(args.dequantized, "config.json")
            with open(path) as f:
                config = json.load(f)
            config["tie_word_embeddings"] = False
            with open(path, "w") as f:
                json.dump(config, f)
    print(f"PASS {count} int{args.bits} weights (group {args.group}) within "
          f"{worst:.4f} steps of the f32 weights")
    return 0


def quantized_linear(x, q, scale, group, ties=None):
    """x [M, K] f32 times integer weights q [N, K] (scales [N, K / G]) with the
    activations quantized per row and group, in exact integer sums. `ties`
    (a list) gets the distance of the quantized values x / scale closest to
    a rounding tie (k + 0.5)."""
    x = x.astype(np.float32)
    m, k = x.shape
    xg = x.reshape(m, k // group, group)
    row_scale = np.abs(xg).max(-1) / np.float32(127)
    row_scale = np.where(row_scale == 0, np.float32(1), row_scale)
    ratio = xg / row_scale[:, :, None]
    if ties is not None:
        ties.append(float(np.abs(ratio - np.floor(ratio) - 0.5).min()))
    qa = np.clip(np.rint(ratio), -127, 127)
    qa = qa.astype(np.int64)
    qw = q.reshape(q.shape[0], k // group, group).astype(np.int64)
    sums = np.einsum("mgk,ngk->mng", qa, qw).astype(np.float64)
    scales = row_scale[:, None, :].astype(np.float64) * scale[None, :, :]
    return (sums * scales).sum(-1).astype(np.float32)


def to_bf16(x):
    """x f32 rounded to the nearest bf16 (ties to even), as f32."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    bits = bits.astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return rounded.astype(np.uint32).view(np.float32).reshape(np.shape(x))


def bf16_linear(x, q, scale, group, ties=None):
    """x [M, K] f32 times int4 weights q [N, K] (scales [N, K / G]), both
    rounded to bf16 as attn-cpu-matmul-kernel{int4-bf16-dot} multiplies
    them: the activations, and the f32 product of each weight and its
    group's scale. `ties` (a list) gets the distance of the activation
    closest to a rounding tie (halfway between two bf16), in bf16 steps."""
    if ties is not None:
        low = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32) & \
            np.uint32(0xFFFF)
        ties.append(float(np.abs(low.astype(np.int64) - 0x8000).min()) /
                    65536)
    n, k = q.shape
    w = q.astype(np.float32).reshape(n, k // group, group) * \
        scale.astype(np.float32)[:, :, None]
    w = to_bf16(w.reshape(n, k)).astype(np.float64)
    return (to_bf16(x.astype(np.float32)).astype(np.float64) @ w.T).astype(
        np.float32)


def numpy_gpt2(args):
    ckpt, _ = read_safetensors(os.path.join(args.checkpoint,
                                            "model.safetensors"))
    written, _ = read_safetensors(args.weights)
    with open(os.path.join(args.checkpoint, "config.json")) as f:
        config = json.load(f)
    if config.get("model_type") != "gpt2":
        print("FAIL int8-activations checks GPT-2 checkpoints only")
        return 1
    g = args.group

    bits = 8 if any(n.endswith(".q8") for n in written) else 4
    suffix = f".q{bits}"
    bf16 = args.cmd == "bf16-activations"
    label = "bf16-activation" if bf16 else "int8-activation"
    if bf16 and bits != 4:
        print("FAIL bf16-activations checks int4 weights only")
        return 1

    ties = []

    def linear(x, name, bias=None):
        # N: Conv1D stores [in, out], the tied LM head [vocab, in].
        w = ckpt[name]
        n = w.shape[0] if name.endswith("wte.weight") else w.shape[1]
        q = unpack(written[name + suffix], bits)[:n, :x.shape[1]]
        scale = deinterleave(written[name + suffix + "_scale"])[:n]
        y = (bf16_linear(x, q, scale, g, ties) if bf16 else
             quantized_linear(x, q, scale, g, ties))
        return y if bias is None else y + ckpt[bias]

    def norm(x, prefix):
        x = x.astype(np.float32)
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        eps = np.float32(config.get("layer_norm_epsilon", 1e-5))
        return ((x - mean) / np.sqrt(var + eps) * ckpt[prefix + ".weight"] +
                ckpt[prefix + ".bias"])

    ids = np.load(args.input)
    got = np.load(args.got)
    d, heads = config["n_embd"], config["n_head"]
    hd = d // heads
    worst, mag = 0.0, 0.0
    for row, tokens in enumerate(ids):
        s = len(tokens)
        h = ckpt["transformer.wte.weight"][tokens] + \
            ckpt["transformer.wpe.weight"][:s]
        for layer in range(config["n_layer"]):
            p = f"transformer.h.{layer}."
            qkv = linear(norm(h, p + "ln_1"), p + "attn.c_attn.weight",
                         p + "attn.c_attn.bias")
            q, k, v = (qkv[:, i * d:(i + 1) * d].reshape(s, heads, hd)
                       .transpose(1, 0, 2) for i in range(3))
            score = q @ k.transpose(0, 2, 1) / np.float32(np.sqrt(hd))
            score = np.where(np.tril(np.ones((s, s), bool)), score, -np.inf)
            score = np.exp(score - score.max(-1, keepdims=True))
            att = (score / score.sum(-1, keepdims=True)) @ v
            att = att.transpose(1, 0, 2).reshape(s, d).astype(np.float32)
            h = h + linear(att, p + "attn.c_proj.weight", p + "attn.c_proj.bias")
            f = linear(norm(h, p + "ln_2"), p + "mlp.c_fc.weight",
                       p + "mlp.c_fc.bias")
            f = 0.5 * f * (1 + np.tanh(np.sqrt(2 / np.pi) *
                                       (f + 0.044715 * f ** 3)))
            h = h + linear(f.astype(np.float32), p + "mlp.c_proj.weight",
                           p + "mlp.c_proj.bias")
        want = linear(norm(h, "transformer.ln_f"), "transformer.wte.weight")
        worst = max(worst, float(np.abs(got[row] - want).max()))
        mag = max(mag, float(np.abs(want).max()))
    err = worst / mag
    verdict = "PASS" if err <= args.tol else "FAIL"
    if min(ties) < args.min_tie:
        print(f"FAIL the input comes within {min(ties):.1e} of a rounding "
              f"tie (--min-tie {args.min_tie}): unfit for the check")
        return 1
    # An activation within an f32 rounding error of a tie may round the
    # other way in the compiled model, whose sums associate differently:
    # one step of one activation, which the layers after it amplify.
    print(f"{verdict} {label} logits within {err:.2e} of numpy's "
          f"(max |ref| {mag:.3f}, tol {args.tol}; closest rounding tie "
          f"{min(ties):.1e})")
    return 0 if verdict == "PASS" else 1


def random_gpt2(args):
    rng = np.random.default_rng(args.seed)
    d, layers, vocab, positions = args.embd, args.layers, 99, 64
    config = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"],
              "activation_function": "gelu_new", "n_embd": d, "n_head": 4,
              "n_layer": layers, "n_positions": positions, "n_inner": None,
              "vocab_size": vocab, "layer_norm_epsilon": 1e-5,
              "bos_token_id": 0, "eos_token_id": 0,
              "tie_word_embeddings": True, "torch_dtype": "float32"}

    def rand(*shape, scale=0.1):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    tensors = {"transformer.wte.weight": rand(vocab, d, scale=0.5),
               "transformer.wpe.weight": rand(positions, d),
               "transformer.ln_f.weight": 1 + rand(d),
               "transformer.ln_f.bias": rand(d)}
    shapes = {"attn.c_attn": (d, 3 * d), "attn.c_proj": (d, d),
              "mlp.c_fc": (d, 4 * d), "mlp.c_proj": (4 * d, d)}
    for i in range(layers):
        p = f"transformer.h.{i}."
        for norm in ("ln_1", "ln_2"):
            tensors[p + norm + ".weight"] = 1 + rand(d)
            tensors[p + norm + ".bias"] = rand(d)
        for name, shape in shapes.items():
            tensors[p + name + ".weight"] = rand(*shape)
            tensors[p + name + ".bias"] = rand(shape[1])
    os.makedirs(args.directory, exist_ok=True)
    if args.ids:
        np.save(args.ids, rng.integers(0, vocab, (1, args.tokens),
                                       dtype=np.int64))
    with open(os.path.join(args.directory, "config.json"), "w") as f:
        json.dump(config, f, indent=1)
    write_safetensors(os.path.join(args.directory, "model.safetensors"),
                      tensors)
    return 0


def tokens(args):
    got, want = np.load(args.got), np.load(args.want)
    if got.shape != want.shape:
        print(f"FAIL shape {got.shape} != {want.shape}")
        return 1
    agree = float((got == want).mean())
    verdict = "PASS" if agree >= args.min_agree else "FAIL"
    print(f"{verdict} {agree:.3f} of {got.size} tokens agree "
          f"(min {args.min_agree})")
    return 0 if verdict == "PASS" else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    lp = sub.add_parser("layout")
    lp.add_argument("checkpoint")
    lp.add_argument("weights")
    lp.add_argument("--bits", type=int, required=True)
    lp.add_argument("--group", type=int, required=True)
    lp.add_argument("--dequantized")
    tp = sub.add_parser("tokens")
    tp.add_argument("got")
    tp.add_argument("want")
    tp.add_argument("--min-agree", type=float, required=True)
    for cmd in ("int8-activations", "bf16-activations"):
        np_ = sub.add_parser(cmd)
        np_.add_argument("checkpoint")
        np_.add_argument("weights")
        np_.add_argument("--group", type=int, required=True)
        np_.add_argument("--input", required=True)
        np_.add_argument("--got", required=True)
        np_.add_argument("--tol", type=float, required=True)
        np_.add_argument("--min-tie", type=float, default=0.0)
    rp = sub.add_parser("random-gpt2")
    rp.add_argument("directory")
    rp.add_argument("--embd", type=int, required=True)
    rp.add_argument("--seed", type=int, default=0)
    rp.add_argument("--layers", type=int, default=2)
    rp.add_argument("--ids")
    rp.add_argument("--tokens", type=int, default=16)
    args = ap.parse_args()
    return {"layout": layout, "tokens": tokens,
            "int8-activations": numpy_gpt2,
            "bf16-activations": numpy_gpt2,
            "random-gpt2": random_gpt2}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
