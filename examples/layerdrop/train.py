#!/usr/bin/env python3
"""Trains a small transformer encoder with LayerDrop, with structured
head / FFN-group dropout and with neither, and exports each to ONNX, for the
pruning study in docs/layerdrop.md.

    .venv-gen/bin/python examples/layerdrop/train.py --out OUT [--dim 64]

Data: scikit-learn's `load_digits` (1797 8x8 grey-scale digits, 10
classes; shipped inside the package, nothing is downloaded). Each image is
a sequence of its 8 pixel rows (8 tokens of 8 values, scaled to [0, 1]),
split (stratified, seeded) into 60% train, 20% validation, 20% test.

Model: a linear row embedding plus learned positions, 12 pre-LN encoder
blocks (4 heads, matmul/softmax attention written out, GELU FFN), a final
LayerNorm, mean pooling over the rows and a linear classifier. Three
regimes, same seed, same schedule:

  layerdrop   each block is skipped (identity on the residual stream) with
              probability p = 0.5, drawn once per batch and block, as in
              Fan et al. (ICLR 2020) and fairseq;
  structured  every block runs, but each attention head and each FFN
              neuron group is dropped with probability p = 0.5, drawn per
              example, layer and unit: a dropped head's output is zero
              before the output projection, a dropped group's hidden units
              are zero before the down projection. The units are exactly
              those `attn-compile --prune` removes (heads; groups of
              d_ff / --ffn-groups consecutive hidden units, the spec's
              "ffn_group_size"), and as in LayerDrop nothing is rescaled,
              so a pruned network is one the training ran;
  baseline    every block, head and group always runs.

Writes into OUT, for each regime NAME:

  NAME.onnx          the trained model, exported by torch.onnx.export
                     (input `pixels` [batch, 8, 8] float32, output `logits`
                     [batch, 10]; batch dynamic)
  NAME.pt            its state_dict (report.py evaluates pruned networks
                     in PyTorch from it, as the reference)
  NAME.scores.json   {"scores": [...]}: per block, its contribution to the
                     validation loss over random LayerDrop sub-networks
                     (see layer_scores); what
                     `--layer-drop='strategy=top-k keep=k
                     scores-file=NAME.scores.json'` ranks by
  NAME.prune-scores.json
                     {"ffn_group_size": G, "head_scores": [[...] per
                     layer], "ffn_scores": [[...] per layer]}: each head's
                     and FFN group's contribution to the validation loss
                     over random sub-networks (see unit_scores); report.py
                     turns them into `--prune` specs ("head_scores" +
                     "keep_heads", "ffn_scores" + "keep_ffn_groups")
  NAME.json          the training log: settings, seconds, accuracies

and once: val_x.npy / val_y.npy, test_x.npy / test_y.npy (float32 pixels,
int64 labels). Seeded: a rerun on the same versions writes the same models.
"""

import argparse
import json
import math
import os
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

SEED = 0


class Block(nn.Module):
    """One pre-LN encoder block: x + attn(ln1(x)), then + ffn(ln2(x))."""

    def __init__(self, d, heads, ff, groups):
        super().__init__()
        self.heads = heads
        self.groups = groups
        # Structured dropout while training: the probability of dropping
        # each head / FFN group, per example.
        self.head_drop = 0.0
        self.ffn_drop = 0.0
        # None: all heads / groups run; otherwise the 0-based kept ones (a
        # network pruned as `--prune` would, for the PyTorch reference).
        self.keep_heads = None
        self.keep_groups = None
        self.ln1 = nn.LayerNorm(d)
        self.q = nn.Linear(d, d)
        self.k = nn.Linear(d, d)
        self.v = nn.Linear(d, d)
        self.o = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.up = nn.Linear(d, ff)
        self.down = nn.Linear(ff, d)

    def split(self, t):
        b, s, d = t.shape
        return t.reshape(b, s, self.heads, d // self.heads).transpose(1, 2)

    def mask(self, b, units, keep, rate):
        """[b, units] 0/1 multipliers, or None when every unit runs."""
        if keep is not None:
            m = torch.zeros(units)
            m[list(keep)] = 1.0
            return m.expand(b, units)
        if self.training and rate > 0:
            return (torch.rand(b, units) >= rate).float()
        return None

    def forward(self, x):
        b, s, d = x.shape
        h = self.ln1(x)
        q, k, v = self.split(self.q(h)), self.split(self.k(h)), self.split(self.v(h))
        scores = q @ k.transpose(-2, -1) * (1.0 / math.sqrt(d // self.heads))
        a = torch.softmax(scores, dim=-1) @ v  # [b, heads, s, d / heads]
        m = self.mask(b, self.heads, self.keep_heads, self.head_drop)
        if m is not None:
            a = a * m[:, :, None, None]
        x = x + self.o(a.transpose(1, 2).reshape(b, s, d))
        u = F.gelu(self.up(self.ln2(x)))  # [b, s, ff]
        m = self.mask(b, self.groups, self.keep_groups, self.ffn_drop)
        if m is not None:
            u = u * m.repeat_interleave(u.shape[-1] // self.groups, dim=1)[:, None, :]
        return x + self.down(u)


class DigitsEncoder(nn.Module):
    """Rows of an 8x8 digit -> 12 blocks -> mean pool -> 10 logits."""

    def __init__(self, d=64, layers=12, heads=4, ff=None, groups=8, rows=8,
                 cols=8, classes=10):
        super().__init__()
        self.embed = nn.Linear(cols, d)
        self.pos = nn.Parameter(torch.randn(rows, d) * 0.02)
        self.blocks = nn.ModuleList(
            Block(d, heads, ff or 2 * d, groups) for _ in range(layers))
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, classes)
        self.drop_rate = 0.0
        # None: all blocks (or LayerDrop's random ones when training);
        # otherwise the 0-based blocks that run, the others are the identity.
        self.keep = None

    def set_structured_drop(self, rate):
        for block in self.blocks:
            block.head_drop = block.ffn_drop = rate

    def set_pruned(self, heads=None, groups=None):
        """Per block the kept heads / FFN groups (lists of lists), or None:
        all of them."""
        for i, block in enumerate(self.blocks):
            block.keep_heads = None if heads is None else heads[i]
            block.keep_groups = None if groups is None else groups[i]

    def forward(self, pixels):
        x = self.embed(pixels) + self.pos
        for i, block in enumerate(self.blocks):
            if self.keep is not None and i not in self.keep:
                continue
            if self.training and self.drop_rate > 0 and \
                    torch.rand(()) < self.drop_rate:
                continue
            x = block(x)
        return self.head(self.norm(x).mean(dim=1))


def load_splits():
    """Stratified, seeded 60/20/20 split of load_digits."""
    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)  # [N, 8, 8]
    y = digits.target.astype(np.int64)
    x_train, x_rest, y_train, y_rest = train_test_split(
        x, y, test_size=0.4, stratify=y, random_state=SEED)
    x_val, x_test, y_val, y_test = train_test_split(
        x_rest, y_rest, test_size=0.5, stratify=y_rest, random_state=SEED)
    return (x_train, y_train), (x_val, y_val), (x_test, y_test)


@torch.no_grad()
def evaluate(model, x, y, keep=None):
    """(accuracy, mean cross-entropy) with only `keep` blocks."""
    model.eval()
    model.keep = keep
    logits = model(torch.from_numpy(x))
    model.keep = None
    target = torch.from_numpy(y)
    loss = F.cross_entropy(logits, target).item()
    acc = (logits.argmax(-1) == target).float().mean().item()
    return acc, loss


REGIMES = ("layerdrop", "structured", "baseline")


def train(name, args, splits):
    (x_train, y_train), (x_val, y_val), (x_test, y_test) = splits
    drop_rate = args.rate if name == "layerdrop" else 0.0
    structured_rate = args.structured_rate if name == "structured" else 0.0
    torch.manual_seed(SEED)
    model = DigitsEncoder(d=args.dim, layers=args.layers, heads=args.heads,
                          groups=args.ffn_groups)
    model.drop_rate = drop_rate
    model.set_structured_drop(structured_rate)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.05)
    steps_per_epoch = math.ceil(len(x_train) / args.batch)
    total = args.epochs * steps_per_epoch
    sched = torch.optim.lr_scheduler.OneCycleLR(
        opt, max_lr=args.lr, total_steps=total, pct_start=0.1)
    gen = torch.Generator().manual_seed(SEED)
    xt, yt = torch.from_numpy(x_train), torch.from_numpy(y_train)
    start = time.time()
    for epoch in range(args.epochs):
        model.train()
        order = torch.randperm(len(xt), generator=gen)
        for i in range(0, len(xt), args.batch):
            idx = order[i:i + args.batch]
            loss = F.cross_entropy(model(xt[idx]), yt[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
        if (epoch + 1) % 20 == 0 or epoch + 1 == args.epochs:
            acc, vloss = evaluate(model, x_val, y_val)
            print(f"{name}: epoch {epoch + 1}: train loss {loss.item():.3f}, "
                  f"val loss {vloss:.3f}, val acc {acc:.4f}", flush=True)
    seconds = time.time() - start
    model.eval()
    model.drop_rate = 0.0
    model.set_structured_drop(0.0)

    scores = layer_scores(model, x_val, y_val, args.rate)
    unit = unit_scores(model, x_val, y_val, args.structured_rate)

    prefix = os.path.join(args.out, name)
    torch.save(model.state_dict(), prefix + ".pt")
    write_scores(prefix + ".scores.json", scores)
    write_unit_scores(prefix + ".prune-scores.json", model, unit)
    export(model, prefix + ".onnx", x_val[:2])
    val_acc, _ = evaluate(model, x_val, y_val)
    test_acc, _ = evaluate(model, x_test, y_test)
    log = {"name": name, "drop_rate": drop_rate,
           "structured_rate": structured_rate, "dim": args.dim,
           "layers": args.layers, "heads": args.heads,
           "ffn_groups": args.ffn_groups, "epochs": args.epochs,
           "batch": args.batch, "lr": args.lr, "threads": args.threads, "train_seconds": round(seconds, 1),
           "val_accuracy": val_acc, "test_accuracy": test_acc,
           "torch": torch.__version__}
    with open(prefix + ".json", "w") as f:
        json.dump(log, f, indent=1)
        f.write("\n")
    print(f"{name}: {seconds:.0f} s, val acc {val_acc:.4f}, test acc "
          f"{test_acc:.4f}, scores {[round(s, 3) for s in scores]}", flush=True)


def layer_scores(model, x, y, rate, masks=200):
    """Each block's contribution to the validation loss under LayerDrop's
    own distribution: over `masks` random sub-networks (each block kept
    with probability 1 - rate, seeded), the mean loss of those without
    block i minus the mean loss of those with it. Higher: keep. (Dropping
    one block at a time says little about a network trained to lose half
    of them: it barely notices any single one.)"""
    gen = torch.Generator().manual_seed(SEED + 1)
    layers = len(model.blocks)
    kept = torch.rand(masks, layers, generator=gen) >= rate
    kept[kept.sum(1) == 0, 0] = True
    losses = torch.tensor([evaluate(model, x, y, torch.nonzero(k).flatten()
                                    .tolist())[1] for k in kept])
    return [(losses[~kept[:, i]].mean() - losses[kept[:, i]].mean()).item()
            for i in range(layers)]


def unit_scores(model, x, y, rate, masks=200):
    """Each head's and each FFN group's contribution to the validation loss,
    estimated as layer_scores does: over `masks` random sub-networks in
    which every head (FFN groups all kept) or every FFN group (heads all
    kept) of every block is kept with probability 1 - rate (seeded), the
    mean loss of those without the unit minus the mean loss of those with
    it. Higher: keep. Returns (head scores, group scores), one list per
    block."""
    gen = torch.Generator().manual_seed(SEED + 2)
    layers = len(model.blocks)
    result = []
    for units in (model.blocks[0].heads, model.blocks[0].groups):
        kept = torch.rand(masks, layers, units, generator=gen) >= rate
        # At least one unit per block, as a --prune spec must keep one.
        kept[:, :, 0] |= kept.sum(2) == 0
        losses = []
        for k in kept:
            lists = [torch.nonzero(row).flatten().tolist() for row in k]
            if units == model.blocks[0].heads:
                model.set_pruned(heads=lists)
            else:
                model.set_pruned(groups=lists)
            losses.append(evaluate(model, x, y)[1])
        model.set_pruned()
        losses = torch.tensor(losses)
        result.append([[(losses[~kept[:, i, u]].mean() -
                         losses[kept[:, i, u]].mean()).item()
                        for u in range(units)] for i in range(layers)])
    return result


def write_unit_scores(path, model, unit):
    heads, groups = unit
    block = model.blocks[0]
    with open(path, "w") as f:
        json.dump({"ffn_group_size": block.up.out_features // block.groups,
                   "head_scores": [[round(s, 6) for s in l] for l in heads],
                   "ffn_scores": [[round(s, 6) for s in l] for l in groups]},
                  f)
        f.write("\n")


def write_scores(path, scores):
    with open(path, "w") as f:
        json.dump({"scores": [round(s, 6) for s in scores]}, f)
        f.write("\n")


def rescore(name, args, splits):
    """Recomputes NAME.scores.json from NAME.pt (no training)."""
    _, (x_val, y_val), _ = splits
    prefix = os.path.join(args.out, name)
    log = json.load(open(prefix + ".json"))
    model = DigitsEncoder(d=log["dim"], layers=log["layers"], heads=log["heads"],
                          groups=log.get("ffn_groups", 8))
    model.load_state_dict(torch.load(prefix + ".pt"))
    model.eval()
    scores = layer_scores(model, x_val, y_val, args.rate)
    write_scores(prefix + ".scores.json", scores)
    write_unit_scores(prefix + ".prune-scores.json", model,
                      unit_scores(model, x_val, y_val, args.structured_rate))
    print(f"{name}: scores {[round(s, 3) for s in scores]}")


def export(model, path, example):
    """torch.onnx.export as a user calls it today: the default (dynamo)
    exporter at its default opset, the batch dimension dynamic, the weights
    inside the .onnx file."""
    model.eval()
    batch = torch.export.Dim("batch")
    torch.onnx.export(model, (torch.from_numpy(example),), path,
                      input_names=["pixels"], output_names=["logits"],
                      dynamic_shapes={"pixels": {0: batch}},
                      external_data=False, verbose=False)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--layers", type=int, default=12)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--epochs", type=int, default=60)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--rate", type=float, default=0.5,
                   help="LayerDrop probability of the layerdrop regime")
    p.add_argument("--structured-rate", type=float, default=0.5,
                   help="probability of dropping each head / FFN group in "
                   "the structured regime")
    p.add_argument("--ffn-groups", type=int, default=8,
                   help="FFN neuron groups per block (d_ff must be a "
                   "multiple): the structured regime's and the --prune "
                   "specs' granularity")
    p.add_argument("--only", default=",".join(REGIMES))
    p.add_argument("--threads", type=int, default=1,
                   help="torch threads (this model's matmuls are tiny: on a "
                   "busy 2-core machine one thread trained 7x faster than two)")
    p.add_argument("--rescore", action="store_true",
                   help="only recompute the scores of the saved models")
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    torch.use_deterministic_algorithms(True)
    os.makedirs(args.out, exist_ok=True)
    splits = load_splits()
    for split, (x, y) in zip(("val", "test"), splits[1:]):
        np.save(os.path.join(args.out, f"{split}_x.npy"), x)
        np.save(os.path.join(args.out, f"{split}_y.npy"), y)
    for name in args.only.split(","):
        if args.rescore:
            rescore(name, args, splits)
            continue
        train(name, args, splits)


if __name__ == "__main__":
    main()
