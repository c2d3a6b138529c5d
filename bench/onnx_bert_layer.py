#!/usr/bin/python3
"""An exported BERT layer against the hand-written one.

    .venv-onnx/bin/python bench/onnx_bert_layer.py [--seqs 128,512]
        [--threads 1,2] [--rounds 7] [--opset 17] [--workdir DIR]

Both sides are attnc: one BERT-base layer (post-LN, erf GELU, LN eps 1e-12,
batch 1, f32) at the same shapes and weights,
  hand  bench/bench_models.py's bert_layer (the text examples/bert_base.mlir
        is made of), compiled with attn-compile model.mlir;
  onnx  the same layer as a PyTorch module with Hugging Face's structure
        (scripts/gen_onnx_models.py's BertSelfAttention: separate
        query/key/value Linear, view/permute head split, matmul / sqrt(d) /
        softmax / matmul; F.gelu, nn.LayerNorm), exported by
        torch.onnx.export at --opset, compiled with attn-compile model.onnx
        (import + raising), run on the weights attn-compile wrote beside it.
Both outputs must match PyTorch's to 1e-4 relative. Timing: each round runs
both executables (`--bench N`), in alternating order; the table gives the
median over rounds of each side's median latency and the ratio onnx/hand
with its range over rounds. The issue's goal is a ratio within 1.05.
Needs torch and onnx (Debian's python3-torch, python3-onnx).
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, os.path.join(ROOT, "test", "reference"))
import bench_models as bm  # noqa: E402
import cpu_bench as cb  # noqa: E402
import make_weights as mw  # noqa: E402
import tensorio  # noqa: E402

D, HEADS, DFF = 768, 12, 3072
PREFIX = "encoder.layer.0."


def bert_layer_module(weights):
    """A torch BERT layer with HF's parameter names, loaded from `weights`."""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from gen_onnx_models import BertSelfAttention

    class Output(nn.Module):
        def __init__(self, din):
            super().__init__()
            self.dense = nn.Linear(din, D)
            self.LayerNorm = nn.LayerNorm(D, eps=1e-12)

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            setattr(self, "self", BertSelfAttention(D, HEADS))
            self.output = Output(D)

    class Intermediate(nn.Module):
        def __init__(self):
            super().__init__()
            self.dense = nn.Linear(D, DFF)

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.attention = Attention()
            self.intermediate = Intermediate()
            self.output = Output(DFF)

        def forward(self, x):
            a = self.attention
            h = a.output.LayerNorm(x + a.output.dense(getattr(a, "self")(x)))
            f = self.output.dense(F.gelu(self.intermediate.dense(h)))
            return self.output.LayerNorm(h + f)

    layer = Layer()
    state = {k[len(PREFIX):]: torch.from_numpy(v) for k, v in weights.items()
             if k.startswith(PREFIX)}
    layer.load_state_dict(state, strict=True)
    return layer.eval()


def compile_or_die(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("FAILED: %s\n%s" % (" ".join(cmd), r.stderr))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seqs", default="128,512")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--opset", type=int, default=17)
    ap.add_argument("--workdir")
    ap.add_argument("--attn-compile", default=os.path.join(ROOT, "build", "bin", "attn-compile"))
    args = ap.parse_args()
    import torch
    seqs = [int(s) for s in args.seqs.split(",")]
    threads = [int(t) for t in args.threads.split(",")]
    wd = args.workdir or tempfile.mkdtemp(prefix="attnc-onnx-bert-")
    os.makedirs(wd, exist_ok=True)
    log = lambda *a: print(*a, file=sys.stderr, flush=True)  # noqa: E731

    W, _ = mw.make_weights("bert", 0, layers=1)
    hand_w = os.path.join(wd, "bert1.safetensors")
    tensorio.write_safetensors(hand_w, W)
    layer = bert_layer_module(W)
    rng = np.random.default_rng(7)
    failures, rows = [], []
    for s in seqs:
        x = rng.standard_normal((1, s, D)).astype(np.float32)
        xfile = os.path.join(wd, f"x_{s}.npy")
        np.save(xfile, x)
        with torch.no_grad():
            ref = layer(torch.from_numpy(x)).numpy()

        log(f"seq {s}: compiling the hand-written layer ...")
        hand = os.path.join(wd, f"hand_{s}")
        cb.compile_model(args.attn_compile, bm.bert_layer(s), hand)
        log(f"seq {s}: exporting (opset {args.opset}) and compiling the ONNX layer ...")
        onnx_path = os.path.join(wd, f"bert_layer_{s}.onnx")
        with torch.no_grad():
            torch.onnx.export(layer, (torch.from_numpy(x),), onnx_path,
                              input_names=["x"], output_names=["y"],
                              opset_version=args.opset, do_constant_folding=True)
        exported = os.path.join(wd, f"onnx_{s}")
        compile_or_die([args.attn_compile, onnx_path, "--target=cpu", "-q", "-o", exported])
        # What raising made of it, for the record.
        attn_ir = subprocess.run([args.attn_compile, onnx_path, "--emit=attn", "-q", "-o", "-"],
                                 capture_output=True, text=True).stdout
        ops = sorted({w for w in attn_ir.replace("(", " ").split() if w.startswith("attn.")
                      and w[5:6].isalpha()})
        log(f"seq {s}: raised ops: {' '.join(ops)}")

        for name, exe, wfile in (("hand", hand, hand_w),
                                 ("onnx", exported, exported + ".safetensors")):
            out = os.path.join(wd, f"{name}_{s}.out.npy")
            cb.run_attnc(exe, wfile, [xfile], 1, out=out)
            err, rel = cb.rel_err(np.load(out), ref)
            log(f"seq {s}: {name} vs PyTorch: max abs err {err:.2e}, relative {rel:.2e}")
            if not rel <= cb.TOL:
                failures.append(f"seq {s} {name}: relative error {rel:.3g} > {cb.TOL}")

        for t in threads:
            reps = max(3, min(50, int(400 / (s / 128) / 8)))
            hand_ms, onnx_ms = [], []
            for r in range(args.rounds):
                order = [(hand_ms, hand, hand_w), (onnx_ms, exported, exported + ".safetensors")]
                if r % 2:
                    order.reverse()
                for acc, exe, wfile in order:
                    acc.append(cb.run_attnc(exe, wfile, [xfile], t, reps, 2))
            ratios = [o / h for h, o in zip(hand_ms, onnx_ms)]
            rows.append((s, t, statistics.median(hand_ms), statistics.median(onnx_ms),
                         statistics.median(onnx_ms) / statistics.median(hand_ms),
                         min(ratios), max(ratios)))

    print(f"attnc: exported (ONNX opset {args.opset}, torch {torch.__version__}) vs hand-written "
          f"BERT-base layer, {args.rounds} rounds; load average {os.getloadavg()[0]:.2f}")
    print("| seq | threads | hand ms | onnx ms | onnx/hand | range |")
    print("| --- | --- | --- | --- | --- | --- |")
    for s, t, h, o, ratio, lo, hi in rows:
        print(f"| {s} | {t} | {h:.2f} | {o:.2f} | {ratio:.3f} | {lo:.3f}-{hi:.3f} |")
    worst = max((r[4] for r in rows), default=float("nan"))
    print(f"worst median ratio {worst:.3f} (goal: <= 1.05)")
    for f in failures:
        print("FAILED:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
