#!/usr/bin/env python3
"""Writes examples/*.mlir from the layer templates below.

The templates are the hand-written part; this script only repeats them per
layer so that the 12-layer BERT stack stays consistent. Weight names follow
the checkpoints the models come from (HF BERT for bert_base) and are the
names scripts/make_weights.py and test/reference use.

    scripts/gen_examples.py [OUT_DIR]     (default: examples/)
"""

import os
import sys


def tensor(*dims, dtype="f32"):
    return "tensor<" + "x".join(str(d) for d in dims) + "x" + dtype + ">"


def weight(var, name, *dims):
    return f'    %{var} = attn.weight "{name}" : {tensor(*dims)}\n'


def post_ln_layer(index, prefix, names, seq, d, heads, dff, act, eps):
    """A post-LN encoder layer (base Transformer, BERT): x = LN(x + MHA(x));
    x = LN(x + FFN(x))."""
    x = tensor(1, seq, d)
    n = lambda key: prefix.format(l=index) + names[key]

    def add_norm(i, a, b, ln):
        """%res{i} = a + b, then %n{i} = LayerNorm(%res{i}) with the `ln` weights."""
        return [f"    %res{i} = attn.add %{a}, %{b} : {x}\n",
                weight(f"g{i}", n(ln) + ".weight", d),
                weight(f"be{i}", n(ln) + ".bias", d),
                f"    %n{i} = attn.layer_norm %res{i}, %g{i}, %be{i} epsilon = {eps} : "
                f"{x}, {tensor(d)}, {tensor(d)}\n"]

    out = [f"  %h{index + 1} = attn.layer index = {index} (%h{index}) : ({x}) -> {x} {{\n",
           f"  ^bb0(%x: {x}):\n"]
    for short, key in (("wq", "q"), ("wk", "k"), ("wv", "v"), ("wo", "o")):
        out.append(weight(short, n(key) + ".weight", d, d))
        out.append(weight("b" + short[1], n(key) + ".bias", d))
    out.append(f"    %attn = attn.mha %x weights(%wq, %wk, %wv, %wo) "
               f"biases(%bq, %bk, %bv, %bo) heads = {heads} : "
               f"({x}, {tensor(d, d)}, {tensor(d, d)}, {tensor(d, d)}, {tensor(d, d)}, "
               f"{tensor(d)}, {tensor(d)}, {tensor(d)}, {tensor(d)}) -> {x}\n")
    out += add_norm(1, "x", "attn", "ln1")
    out.append(weight("w1", n("up") + ".weight", dff, d))
    out.append(weight("b1", n("up") + ".bias", dff))
    out.append(weight("w2", n("down") + ".weight", d, dff))
    out.append(weight("b2", n("down") + ".bias", d))
    out.append(f"    %ff = attn.ffn %n1 up(%w1, %b1) down(%w2, %b2) activation = {act} : "
               f"({x}, {tensor(dff, d)}, {tensor(dff)}, {tensor(d, dff)}, {tensor(d)}) -> {x}\n")
    out += add_norm(2, "n1", "ff", "ln2")
    out.append(f"    attn.yield %n2 : {x}\n  }}\n")
    return "".join(out)


SMALL_NAMES = {"q": "attn.q", "k": "attn.k", "v": "attn.v", "o": "attn.o",
               "ln1": "ln1", "up": "ffn.up", "down": "ffn.down", "ln2": "ln2"}
BERT_NAMES = {"q": "attention.self.query", "k": "attention.self.key",
              "v": "attention.self.value", "o": "attention.output.dense",
              "ln1": "attention.output.LayerNorm", "up": "intermediate.dense",
              "down": "output.dense", "ln2": "output.LayerNorm"}


def post_ln_stack(lines, layers, prefix, names, seq, d, heads, dff, act, eps):
    """`lines` (the header and the function's first ops), then `layers`
    post-LN layers on %h0 and the return of the last one's output."""
    lines += [post_ln_layer(l, prefix, names, seq, d, heads, dff, act, eps) for l in range(layers)]
    lines.append(f"  return %h{layers} : {tensor(1, seq, d)}\n}}\n")
    return "".join(lines)


def small_encoder():
    seq, d, heads, dff, vocab, layers = 16, 64, 4, 256, 100, 2
    x = tensor(1, seq, d)
    s = ["// A small encoder in the style of the base Transformer (Vaswani et al.):\n",
         f"// token embedding + sinusoidal positions, {layers} post-LN layers,\n",
         f"// d_model {d}, {heads} heads, d_ff {dff}, ReLU. Weights: scripts/make_weights.py small_encoder.\n",
         f"func.func @main(%ids: {tensor(1, seq, dtype='i32')}) -> {x} {{\n",
         f'  %table = attn.weight "embed.weight" : {tensor(vocab, d)}\n',
         f"  %emb = attn.embedding %ids, %table : ({tensor(1, seq, dtype='i32')}, {tensor(vocab, d)}) -> {x}\n",
         f"  %h0 = attn.sinusoidal_pos %emb : {x}\n"]
    return post_ln_stack(s, layers, "layers.{l}.", SMALL_NAMES, seq, d, heads, dff, "relu",
                         "1.0e-05")


def bert_base(seq=128, d=768, heads=12, dff=3072, layers=12):
    """The example is BERT-base; smaller sizes give the same model shape for
    tests that compile it many times."""
    x = tensor(1, seq, d)
    s = [f"// A BERT-base-shaped encoder stack: {layers} post-LN layers, d_model {d}, {heads} heads,\n",
         f"// d_ff {dff}, erf GELU, LayerNorm epsilon 1e-12, HF BERT weight names. The input\n",
         f"// is the embedded hidden state (batch 1, seq {seq}).\n",
         f"func.func @main(%h0: {x}) -> {x} {{\n"]
    return post_ln_stack(s, layers, "encoder.layer.{l}.", BERT_NAMES, seq, d, heads, dff, "gelu",
                         "9.9999999999999998e-13")


def decoder_block(seq=64, d=256, heads=8, dff=1024):
    x = tensor(1, seq, d)
    p = "h.0."
    s = ["// A GPT-style causal decoder block: pre-LN, causal multi-head self-attention,\n",
         f"// tanh-GELU MLP; d_model {d}, {heads} heads, d_ff {dff}, seq {seq}.\n",
         f"func.func @main(%h0: {x}) -> {x} {{\n",
         f"  %h1 = attn.layer index = 0 (%h0) : ({x}) -> {x} {{\n",
         f"  ^bb0(%x: {x}):\n"]
    s.append(weight("g1", p + "ln_1.weight", d))
    s.append(weight("be1", p + "ln_1.bias", d))
    s.append(f"    %n1 = attn.layer_norm %x, %g1, %be1 : {x}, {tensor(d)}, {tensor(d)}\n")
    for short, key in (("wq", "q"), ("wk", "k"), ("wv", "v"), ("wo", "o")):
        s.append(weight(short, p + "attn." + key + ".weight", d, d))
        s.append(weight("b" + short[1], p + "attn." + key + ".bias", d))
    s.append(f"    %attn = attn.mha %n1 weights(%wq, %wk, %wv, %wo) biases(%bq, %bk, %bv, %bo) "
             f"heads = {heads} causal : ({x}, {tensor(d, d)}, {tensor(d, d)}, {tensor(d, d)}, "
             f"{tensor(d, d)}, {tensor(d)}, {tensor(d)}, {tensor(d)}, {tensor(d)}) -> {x}\n")
    s.append(f"    %res1 = attn.add %x, %attn : {x}\n")
    s.append(weight("g2", p + "ln_2.weight", d))
    s.append(weight("be2", p + "ln_2.bias", d))
    s.append(f"    %n2 = attn.layer_norm %res1, %g2, %be2 : {x}, {tensor(d)}, {tensor(d)}\n")
    s.append(weight("w1", p + "mlp.up.weight", dff, d))
    s.append(weight("b1", p + "mlp.up.bias", dff))
    s.append(weight("w2", p + "mlp.down.weight", d, dff))
    s.append(weight("b2", p + "mlp.down.bias", d))
    s.append(f"    %ff = attn.ffn %n2 up(%w1, %b1) down(%w2, %b2) activation = gelu_tanh : "
             f"({x}, {tensor(dff, d)}, {tensor(dff)}, {tensor(d, dff)}, {tensor(d)}) -> {x}\n")
    s.append(f"    %res2 = attn.add %res1, %ff : {x}\n")
    s.append(f"    attn.yield %res2 : {x}\n  }}\n")
    s.append(f"  return %h1 : {x}\n}}\n")
    return "".join(s)


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "examples")
    os.makedirs(out_dir, exist_ok=True)
    for name, gen in (("small_encoder", small_encoder), ("bert_base", bert_base),
                      ("decoder_block", decoder_block)):
        with open(os.path.join(out_dir, name + ".mlir"), "w") as f:
            f.write(gen())


if __name__ == "__main__":
    main()
