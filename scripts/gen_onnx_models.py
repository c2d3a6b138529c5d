#!/usr/bin/python3
"""Exports the small PyTorch models the ONNX importer is tested on.

    /usr/bin/python3 scripts/gen_onnx_models.py [OUTDIR [MODEL ...]]

Needs Debian's python3-torch (1.13) and python3-onnx. For every model and
opset (13 to 17) it writes, into OUTDIR (default test/ONNX/Models):

  <model>-op<opset>.onnx          the exported graph (sequence and batch axes
                                   symbolic, as exporters emit them)
  <model>.<input name>.npy        the reference inputs (one per graph input)
  <model>.ref.npy                 PyTorch's output on them (float32)

PyTorch 1.13 exports up to opset 17. Where the onnx package is new enough
(>= 1.13, e.g. `pip install onnx` in a virtual environment with
--system-site-packages), the opset-17 export is also converted to opset 18
by ONNX's own version converter (ReduceMean and Split take their axes and
sizes as inputs there) and written as <model>-op18.onnx.

The reference output is what PyTorch computes, not what attnc computes, so
the tests compare the compiler against the exporting framework.

    python scripts/gen_onnx_models.py --dynamic-refs [OUTDIR [MODEL ...]]

writes, for the dynamic-shape tests, references at other sizes of the
symbolic batch and sequence dimensions into OUTDIR/dynamic (default
test/ONNX/Models/dynamic): for each model and each shape in DYNAMIC_SHAPES
(batch 2; sequences 5, 16, 37, or 5, 11, 16 for the models with 16 learned
positions), seeded inputs <model>.<B>x<S>.<input>.npy and the output of
onnxruntime running the committed <model>-op17.onnx on them,
<model>.<B>x<S>.ref.npy. Needs numpy, onnxruntime and onnx (the bench venv:
.venv-bench/bin/python); no export is redone. Seeds are
fixed, so a re-run reproduces the committed files. Model sizes are kept to a
few hundred KB: d_model 32, 4 heads, 2 layers, sequence 8.
"""

import math
import os
import sys

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F

D_MODEL = 32
HEADS = 4
D_FF = 64
LAYERS = 2
SEQ = 8
VOCAB = 50
MAX_POS = 16
OPSETS = (13, 14, 15, 16, 17)


def encoder_stack(activation, norm_first, final_norm=False):
    """nn.TransformerEncoder of LAYERS layers (batch first, no dropout),
    with a final LayerNorm if `final_norm`."""
    layer = nn.TransformerEncoderLayer(D_MODEL, HEADS, D_FF, dropout=0.0,
                                       activation=activation,
                                       batch_first=True, norm_first=norm_first)
    return nn.TransformerEncoder(layer, LAYERS,
                                 norm=nn.LayerNorm(D_MODEL) if final_norm else None,
                                 enable_nested_tensor=False)


class Encoder(nn.Module):
    """An encoder_stack on one input x."""

    def __init__(self, activation, norm_first, final_norm=False):
        super().__init__()
        self.encoder = encoder_stack(activation, norm_first, final_norm)

    def forward(self, x):
        return self.encoder(x)


class EncoderPostLnRelu(Encoder):
    """nn.TransformerEncoder, post-LN, ReLU (the original Transformer)."""

    def __init__(self):
        super().__init__("relu", norm_first=False)


class EncoderPreLnGelu(Encoder):
    """nn.TransformerEncoder, pre-LN, GELU, final LayerNorm."""

    def __init__(self):
        super().__init__("gelu", norm_first=True, final_norm=True)


class CausalDecoder(nn.Module):
    """Decoder-only stack (self-attention with an additive mask input)."""

    def __init__(self):
        super().__init__()
        self.decoder = encoder_stack("gelu", norm_first=True)

    def forward(self, x, mask):
        return self.decoder(x, mask=mask)


class BertSelfAttention(nn.Module):
    """Hugging Face's BERT self-attention: query/key/value Linear, view/permute
    head split, softmax(q k^T / sqrt(head width) + bias) v. Also the
    attention of bench/onnx_bert_layer.py's BERT-base layer (no bias)."""

    def __init__(self, d=D_MODEL, heads=HEADS):
        super().__init__()
        self.query = nn.Linear(d, d)
        self.key = nn.Linear(d, d)
        self.value = nn.Linear(d, d)
        self.d = d
        self.heads = heads
        self.head_dim = d // heads

    def split(self, x):
        b, s, _ = x.size()
        return x.view(b, s, self.heads, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, x, bias=None):
        q = self.split(self.query(x))
        k = self.split(self.key(x))
        v = self.split(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2))
        scores = scores / math.sqrt(self.head_dim)
        if bias is not None:
            scores = scores + bias
        probs = F.softmax(scores, dim=-1)
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        b, s = ctx.size(0), ctx.size(1)
        return ctx.view(b, s, self.d)


class BertLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention = BertSelfAttention()
        self.attn_out = nn.Linear(D_MODEL, D_MODEL)
        self.attn_norm = nn.LayerNorm(D_MODEL, eps=1e-12)
        self.intermediate = nn.Linear(D_MODEL, D_FF)
        self.output = nn.Linear(D_FF, D_MODEL)
        self.out_norm = nn.LayerNorm(D_MODEL, eps=1e-12)

    def forward(self, x, bias):
        h = self.attn_norm(x + self.attn_out(self.attention(x, bias)))
        f = self.output(F.gelu(self.intermediate(h)))
        return self.out_norm(h + f)


class BertLike(nn.Module):
    """BERT-shaped: word + position + token-type embeddings, post-LN layers,
    an additive padding bias built from an `attention_mask` input."""

    def __init__(self):
        super().__init__()
        self.word = nn.Embedding(VOCAB, D_MODEL)
        self.position = nn.Embedding(MAX_POS, D_MODEL)
        self.token_type = nn.Embedding(2, D_MODEL)
        self.emb_norm = nn.LayerNorm(D_MODEL, eps=1e-12)
        self.register_buffer("position_ids",
                             torch.arange(MAX_POS).unsqueeze(0))
        self.layers = nn.ModuleList([BertLayer() for _ in range(LAYERS)])

    def forward(self, input_ids, attention_mask):
        seq = input_ids.size(1)
        pos = self.position_ids[:, :seq]
        types = torch.zeros_like(input_ids)
        h = self.word(input_ids) + self.position(pos) + self.token_type(types)
        h = self.emb_norm(h)
        bias = attention_mask[:, None, None, :].to(h.dtype)
        bias = (1.0 - bias) * torch.finfo(h.dtype).min
        for layer in self.layers:
            h = layer(h, bias)
        return h


class Conv1D(nn.Module):
    """GPT-2's Conv1D: y = x W + b with W stored [in, out]."""

    def __init__(self, nx, nf):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(nx, nf) * 0.1)
        self.bias = nn.Parameter(torch.randn(nf) * 0.1)

    def forward(self, x):
        shape = x.size()[:-1] + (self.weight.size(1),)
        y = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        return y.view(shape)


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) *
                                       (x + 0.044715 * torch.pow(x, 3.0))))


class Gpt2Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1 = nn.LayerNorm(D_MODEL)
        self.c_attn = Conv1D(D_MODEL, 3 * D_MODEL)
        self.c_proj = Conv1D(D_MODEL, D_MODEL)
        self.ln_2 = nn.LayerNorm(D_MODEL)
        self.c_fc = Conv1D(D_MODEL, D_FF)
        self.mlp_proj = Conv1D(D_FF, D_MODEL)
        self.register_buffer("bias", torch.tril(
            torch.ones(MAX_POS, MAX_POS, dtype=torch.bool)).view(
                1, 1, MAX_POS, MAX_POS))
        self.register_buffer("masked_bias", torch.tensor(-1e4))

    def heads(self, x):
        b, s, _ = x.size()
        return x.view(b, s, HEADS, D_MODEL // HEADS).permute(0, 2, 1, 3)

    def forward(self, x):
        h = self.ln_1(x)
        q, k, v = self.c_attn(h).split(D_MODEL, dim=2)
        q, k, v = self.heads(q), self.heads(k), self.heads(v)
        w = torch.matmul(q, k.transpose(-1, -2))
        w = w / (float(v.size(-1)) ** 0.5)
        sq, sk = q.size(-2), k.size(-2)
        causal = self.bias[:, :, sk - sq:sk, :sk]
        w = torch.where(causal, w, self.masked_bias.to(w.dtype))
        w = F.softmax(w, dim=-1)
        a = torch.matmul(w, v).permute(0, 2, 1, 3).contiguous()
        a = a.view(a.size(0), a.size(1), D_MODEL)
        x = x + self.c_proj(a)
        return x + self.mlp_proj(gelu_new(self.c_fc(self.ln_2(x))))


class Gpt2Like(nn.Module):
    """GPT-2-shaped LM: Conv1D projections, tanh GELU, tied head."""

    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, D_MODEL)
        self.wpe = nn.Embedding(MAX_POS, D_MODEL)
        self.blocks = nn.ModuleList([Gpt2Block() for _ in range(LAYERS)])
        self.ln_f = nn.LayerNorm(D_MODEL)

    def forward(self, input_ids):
        seq = input_ids.size(-1)
        pos = torch.arange(0, seq, dtype=torch.long).unsqueeze(0)
        h = self.wte(input_ids) + self.wpe(pos)
        for block in self.blocks:
            h = block(h)
        return F.linear(self.ln_f(h), self.wte.weight)


class MiscOps(nn.Module):
    """The ops the layer models do not reach, on run-time values (so that
    nothing folds): Sin/Cos, Sigmoid (SiLU), Greater + Where, Cast from bool,
    Trilu, Expand, Max/Min, Gather with constant indices, Concat, Gemm with
    alpha/beta, Exp/Neg/Reciprocal, Softmax and ReduceMean over a middle
    axis."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(D_MODEL, D_MODEL) * 0.1)
        self.b = nn.Parameter(torch.randn(D_MODEL) * 0.1)

    def forward(self, x):
        b, s, d = x.size()
        half = d // 2
        rot = torch.cat([torch.sin(x[..., :half]), torch.cos(x[..., half:])],
                        dim=-1)
        silu = x * torch.sigmoid(x)
        leaky = torch.where(x > 0, x, 0.1 * x) + (x > 0.5).to(x.dtype)
        scores = torch.matmul(x, x.transpose(1, 2))            # [b, s, s]
        upper = torch.triu(scores, diagonal=1)
        tri = torch.matmul(upper, x) * 0.05                     # [b, s, d]
        first = x[:, :1, :].expand(b, s, d)
        mx = torch.maximum(x, first) - torch.minimum(x, 0.5 * first)
        picked = x[:, 2] + x[:, s - 1]                          # [b, d]
        lin = torch.addmm(self.b, x.reshape(b * s, d), self.w,
                          beta=0.5, alpha=2.0).reshape(b, s, d)
        smooth = torch.exp(-x) * torch.reciprocal(1.0 + x * x)
        mid = F.softmax(x, dim=1) + x.mean(dim=1, keepdim=True)
        return torch.cat([rot, silu, leaky, tri, mx,
                          picked.unsqueeze(1).expand(b, s, d), lin, smooth,
                          mid], dim=-1)


def randomize(model, gen):
    """Seeded values for every parameter. nn.TransformerEncoder deep-copies
    one layer, so without this all layers would be equal (and the exporter
    would share their initializers), hiding a layer mix-up; default
    LayerNorm parameters (1, 0) would hide a swapped gamma/beta."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if isinstance(p, nn.Parameter) and p.dim() >= 2:
                fan_in = p.shape[0] if "c_" in name or "mlp_proj" in name \
                    else p.shape[-1]
                p.copy_(torch.randn(p.shape, generator=gen) / math.sqrt(fan_in))
            elif "norm" in name or "ln_" in name:
                base = 1.0 if name.endswith("weight") else 0.0
                p.copy_(base + 0.1 * torch.randn(p.shape, generator=gen))
            else:
                p.copy_(0.1 * torch.randn(p.shape, generator=gen))


def models():
    gen = torch.Generator().manual_seed(1234)
    x = torch.randn(1, SEQ, D_MODEL, generator=gen)
    causal = torch.triu(torch.full((SEQ, SEQ), float("-inf")), diagonal=1)
    ids = torch.randint(0, VOCAB, (1, SEQ), generator=gen)
    # Two padded positions at the end, as a tokenizer's batch would have.
    attention_mask = torch.ones(1, SEQ, dtype=torch.long)
    attention_mask[0, SEQ - 2:] = 0
    seq_axes = {0: "batch", 1: "sequence"}
    return [
        ("encoder_postln_relu", EncoderPostLnRelu(), {"x": x},
         {"x": seq_axes}),
        ("encoder_preln_gelu", EncoderPreLnGelu(), {"x": x},
         {"x": seq_axes}),
        ("causal_decoder", CausalDecoder(), {"x": x, "mask": causal},
         {"x": seq_axes, "mask": {0: "sequence", 1: "sequence"}}),
        ("bert_like", BertLike(),
         {"input_ids": ids, "attention_mask": attention_mask},
         {"input_ids": seq_axes, "attention_mask": seq_axes}),
        ("gpt2_like", Gpt2Like(), {"input_ids": ids},
         {"input_ids": seq_axes}),
        ("misc_ops", MiscOps(), {"x": x}, {"x": seq_axes}),
    ]


# (batch, sequence) shapes of the dynamic references; the models with
# learned positions (MAX_POS rows) stop at MAX_POS.
DYNAMIC_SHAPES = ((2, 5), (2, 16), (2, 37))
DYNAMIC_SHAPES_POSITIONS = ((2, 5), (2, 11), (2, MAX_POS))


def dynamic_inputs(name, batch, seq, rng):
    """Seeded inputs of model `name` at [batch, seq]."""
    if name in ("bert_like", "gpt2_like"):
        ids = rng.integers(0, VOCAB, (batch, seq), dtype=np.int64)
        if name == "gpt2_like":
            return {"input_ids": ids}
        mask = np.ones((batch, seq), dtype=np.int64)
        mask[1, seq - 2:] = 0  # the second sequence padded by two
        return {"input_ids": ids, "attention_mask": mask}
    x = rng.standard_normal((batch, seq, D_MODEL)).astype(np.float32)
    if name == "causal_decoder":
        causal = np.triu(np.full((seq, seq), -np.inf, dtype=np.float32), 1)
        return {"x": x, "mask": causal}
    return {"x": x}


def dynamic_refs(outdir, only):
    """References at other batch / sequence sizes, from onnxruntime."""
    import onnxruntime as ort
    models_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                              "..", "test", "ONNX", "Models")
    os.makedirs(outdir, exist_ok=True)
    rng = np.random.default_rng(4321)
    for name in ("encoder_postln_relu", "encoder_preln_gelu", "causal_decoder",
                 "bert_like", "gpt2_like", "misc_ops"):
        if only and name not in only:
            continue
        session = ort.InferenceSession(
            os.path.join(models_dir, f"{name}-op17.onnx"),
            providers=["CPUExecutionProvider"])
        shapes = DYNAMIC_SHAPES_POSITIONS if name in (
            "bert_like", "gpt2_like") else DYNAMIC_SHAPES
        for batch, seq in shapes:
            inputs = dynamic_inputs(name, batch, seq, rng)
            (ref,) = session.run(None, inputs)
            stem = os.path.join(outdir, f"{name}.{batch}x{seq}")
            for key, value in inputs.items():
                np.save(f"{stem}.{key}.npy", value)
            np.save(f"{stem}.ref.npy", ref.astype(np.float32))
            print(f"{stem}: output {ref.shape}")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--dynamic-refs":
        here = os.path.dirname(os.path.abspath(__file__))
        outdir = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
            here, "..", "test", "ONNX", "Models", "dynamic")
        dynamic_refs(outdir, sys.argv[3:])
        return
    here = os.path.dirname(os.path.abspath(__file__))
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        here, "..", "test", "ONNX", "Models")
    os.makedirs(outdir, exist_ok=True)
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(99)
    only = sys.argv[2:]
    for name, model, inputs, axes in models():
        if only and name not in only:
            continue
        randomize(model, gen)
        model.eval()
        names = list(inputs)
        args = tuple(inputs[n] for n in names)
        with torch.no_grad():
            ref = model(*args)
        for n in names:
            np.save(os.path.join(outdir, f"{name}.{n}.npy"), inputs[n].numpy())
        np.save(os.path.join(outdir, f"{name}.ref.npy"),
                ref.numpy().astype(np.float32))
        for opset in OPSETS:
            # Trilu (misc_ops' torch.triu) exists from opset 14.
            if name == "misc_ops" and opset < 14:
                continue
            path = os.path.join(outdir, f"{name}-op{opset}.onnx")
            axes_all = dict(axes)
            axes_all["output"] = {0: "batch", 1: "sequence"}
            # With gradients enabled (parameters require them), PyTorch's
            # fused fast path (aten::_transformer_encoder_layer_fwd, which no
            # opset exports) is not taken: the layers trace op by op.
            with torch.enable_grad():
                torch.onnx.export(model, args, path, input_names=names,
                                  output_names=["output"],
                                  dynamic_axes=axes_all, opset_version=opset,
                                  do_constant_folding=True)
            # The exporter must not have fallen back to ATen or a fast-path
            # op that no ONNX runtime knows.
            onnx.checker.check_model(onnx.load(path))
            ops = sorted({n.op_type for n in onnx.load(path).graph.node})
            print(f"{path}: {os.path.getsize(path)} bytes, ops {ops}")
        export18(os.path.join(outdir, f"{name}-op17.onnx"))


def export18(path17):
    """<model>-op18.onnx from the opset-17 export, by ONNX's converter."""
    if onnx.defs.onnx_opset_version() < 18:
        print(f"onnx {onnx.__version__} knows no opset 18: {path17} not converted")
        return
    from onnx import version_converter
    model = version_converter.convert_version(onnx.load(path17), 18)
    onnx.checker.check_model(model)
    path = path17.replace("-op17.onnx", "-op18.onnx")
    onnx.save(model, path)
    ops = sorted({n.op_type for n in model.graph.node})
    print(f"{path}: {os.path.getsize(path)} bytes, ops {ops}")


if __name__ == "__main__":
    main()
