#!/usr/bin/env python3
"""Prunes the models train.py wrote with attn-compile's LayerDrop strategies
and its head / FFN-group pruning, and measures what each costs in accuracy,
latency and weight bytes.

    .venv-gen/bin/python examples/layerdrop/report.py --tools build/bin \\
        --data OUT [--md docs/layerdrop-table.md] [--png docs/layerdrop.png]

For each trained model (layerdrop, structured, baseline) and each strategy, at depths
12, 9, 6, 4, 3, 2, it compiles the model's .onnx with attn-compile, runs
the executable on the test split (`--input pixels=test_x.npy --output
logits.npy --bench N`) and records accuracy, the latency of one batch (the
whole test split; the fastest of N runs) and the weight bytes the
executable reads:

  every-other  `--layer-drop='strategy=every-other rate=p'` where a rate
               gives the depth (9: p = 1/4, 6: p = 1/2); below half depth,
               where no rate does, evenly spaced layers as a keep-list
               (4: 0,3,6,9; 3: 0,4,8; 2: 0,6);
  top-k        `strategy=top-k keep=k scores-file=NAME.scores.json`, the
               per-layer validation-loss scores train.py wrote;
  search       `strategy=search keep=k --calibration val_x.npy`: attnc runs
               candidate sub-networks on the validation split and keeps
               the one whose logits are closest to the full model's; the
               keep list it finds is then compiled as a keep-list.

and, all 12 layers kept, with `--prune=spec.json` (attn-prune-structure):

  heads        3 or 2 of the 4 heads in every layer;
  ffn          6 or 4 of the 8 FFN neuron groups in every layer;
  heads+ffn    2 of 4 heads and 4 of 8 groups in every layer;

the kept ones chosen by attnc from the per-layer scores train.py wrote
(NAME.prune-scores.json: each head's / group's contribution to the
validation loss over random sub-networks), through the spec's
"head_scores" + "keep_heads" and "ffn_scores" + "keep_ffn_groups".

Every keep list is also evaluated in PyTorch from NAME.pt (the reference:
the compiled accuracy must be PyTorch's for the same layers, heads and
groups). Writes
OUT/results.json, the markdown table (--md) and the plot (--png).
"""

import argparse
import json
import os
import re
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DEPTHS = (12, 9, 6, 4, 3, 2)
STRATEGIES = ("every-other", "top-k", "search")
# every-other's rate for the depths it reaches from 12 layers.
EVERY_OTHER_RATE = {9: 0.25, 6: 0.5}
# Head / FFN-group pruning rows: (strategy, tag, heads kept of 4, groups
# kept of 8), with all layers.
PRUNE_ROWS = (("heads", "heads3", 3, None), ("heads", "heads2", 2, None),
              ("ffn", "ffn6", None, 6), ("ffn", "ffn4", None, 4),
              ("heads+ffn", "heads2-ffn4", 2, 4))
PRUNE_STRATEGIES = ("heads", "ffn", "heads+ffn")


def top_units(scores, keep):
    """The `keep` highest-scored units, ascending (ties to the lower index,
    as attn-prune-structure breaks them)."""
    return sorted(sorted(range(len(scores)), key=lambda u: -scores[u])[:keep])


def prune_spec(unit, keep_heads, keep_groups):
    """A --prune spec (and the kept heads / groups per layer it selects)
    from NAME.prune-scores.json."""
    layers, heads, groups = {}, None, None
    for i, (hs, fs) in enumerate(zip(unit["head_scores"], unit["ffn_scores"])):
        layer = {}
        if keep_heads:
            layer.update(head_scores=hs, keep_heads=keep_heads)
        if keep_groups:
            layer.update(ffn_scores=fs, keep_ffn_groups=keep_groups)
        layers[str(i)] = layer
    if keep_heads:
        heads = [top_units(hs, keep_heads) for hs in unit["head_scores"]]
    if keep_groups:
        groups = [top_units(fs, keep_groups) for fs in unit["ffn_scores"]]
    spec = dict(ffn_group_size=unit["ffn_group_size"], layers=layers)
    return spec, heads, groups


def prune_description(row):
    parts = []
    if row.get("keep_heads"):
        parts.append(f"{row['keep_heads']}/{row['heads']} heads")
    if row.get("keep_groups"):
        parts.append(f"{row['keep_groups']}/{row['groups']} FFN groups")
    return " + ".join(parts) + " per layer"


def ref_key(row):
    """What PyTorch runs for a row: (kept layers, kept heads, kept groups)."""
    freeze = lambda lists: None if lists is None else \
        tuple(tuple(l) for l in lists)
    return (tuple(row["kept"]), freeze(row.get("kept_heads")),
            freeze(row.get("kept_groups")))


def evenly_spaced(layers, depth):
    """depth layers, every (layers / depth)-th from the first."""
    return [i * layers // depth for i in range(depth)]


def every_other_kept(layers, rate):
    """attn-layer-drop's every-other rule: drop 1-based depth d when
    d = 0 mod floor(1/p)."""
    period = int(1.0 / rate)
    return [i for i in range(layers) if (i + 1) % period != 0]


def run(cmd, **kw):
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if proc.returncode != 0:
        sys.exit(f"report: {' '.join(cmd)} failed ({proc.returncode}):\n"
                 f"{proc.stdout}{proc.stderr}")
    return proc.stdout + proc.stderr


def kept_from_remark(text):
    m = re.search(r"attn-layer-drop \([a-z-]+\): kept \[([^\]]*)\]", text)
    if not m:
        return None
    return [int(t.split()[0]) for t in m.group(1).split(",") if t.strip()]


class Runner:
    def __init__(self, args):
        self.args = args
        self.compile = os.path.join(args.tools, "attn-compile")
        self.work = os.path.join(args.data, "compiled")
        os.makedirs(self.work, exist_ok=True)
        self.test_x = os.path.join(args.data, "test_x.npy")
        self.test_y = np.load(os.path.join(args.data, "test_y.npy"))
        self.val_x = os.path.join(args.data, "val_x.npy")
        self.compile_seconds = 0.0

    def build(self, onnx, tag, layer_drop=None, extra=(), prune=None):
        """Compiles; returns (executable, compiler output)."""
        exe = os.path.join(self.work, tag)
        cmd = [self.compile, onnx, "-o", exe] + list(extra)
        if layer_drop:
            cmd.append("--layer-drop=" + layer_drop)
        inputs = [onnx]
        if prune is not None:
            path = exe + ".prune.json"
            text = json.dumps(prune) + "\n"
            # Rewritten only when it changes, so that a rerun's cache holds.
            if not os.path.exists(path) or open(path).read() != text:
                with open(path, "w") as f:
                    f.write(text)
            cmd.append("--prune=" + path)
            inputs.append(path)
        # A rerun reuses what the same command compiled (the command and
        # the compiler's messages are kept beside the output).
        log = exe + ".log"
        key = " ".join(cmd) + "\n"
        if os.path.exists(exe) and os.path.exists(log) and \
                all(os.path.getmtime(exe) > os.path.getmtime(i)
                    for i in inputs):
            with open(log) as f:
                cached = f.read()
            if cached.startswith(key):
                return exe, cached[len(key):]
        start = time.time()
        text = run(cmd)
        self.compile_seconds += time.time() - start
        with open(log, "w") as f:
            f.write(key + text)
        return exe, text

    def measure(self, exe):
        """(accuracy, predictions, fastest ms per batch, weight bytes read)."""
        out = os.path.join(self.work, os.path.basename(exe) + ".logits.npy")
        text = run([exe, "--input", f"pixels={self.test_x}", "--output", out,
                    "--bench", str(self.args.bench)])
        pred = np.load(out).argmax(-1)
        # The fastest run: on a shared machine the median measures the
        # neighbours as much as the model.
        ms = float(re.search(r"min ([0-9.e+-]+) ms", text).group(1))
        read = int(re.search(r"weights: read (\d+) bytes", text).group(1))
        return float((pred == self.test_y).mean()), pred, ms, read


def torch_reference(data, name, keys):
    """PyTorch's test predictions for each ref_key (None: the full model)."""
    import torch
    sys.path.insert(0, HERE)
    import train
    torch.set_num_threads(1)
    log = json.load(open(os.path.join(data, name + ".json")))
    model = train.DigitsEncoder(d=log["dim"], layers=log["layers"],
                                heads=log["heads"],
                                groups=log.get("ffn_groups", 8))
    model.load_state_dict(torch.load(os.path.join(data, name + ".pt")))
    model.eval()
    x = torch.from_numpy(np.load(os.path.join(data, "test_x.npy")))
    preds = {}
    with torch.no_grad():
        for key in keys:
            keep, heads, groups = key or (None, None, None)
            model.keep = None if keep is None else list(keep)
            model.set_pruned(heads, groups)
            preds[key] = model(x).argmax(-1).numpy()
    return preds, log


def compile_model(r, args, name):
    """Compiles one model's rows; returns them (unmeasured, with "exe")."""
    onnx = os.path.join(args.data, name + ".onnx")
    scores = os.path.join(args.data, name + ".scores.json")
    layers = json.load(open(os.path.join(args.data, name + ".json")))["layers"]
    nval = np.load(r.val_x).shape[0]
    rows = []
    exe, _ = r.build(onnx, f"{name}-full")
    rows.append(dict(model=name, strategy="full", depth=layers,
                     kept=list(range(layers)), exe=exe))
    strategies = [s for s in args.strategies
                  if s != "search" or name in args.search_models]
    for depth in args.depths:
        if depth >= layers:
            continue
        for strategy in strategies:
            if strategy == "every-other":
                if depth in EVERY_OTHER_RATE:
                    spec = f"strategy=every-other rate={EVERY_OTHER_RATE[depth]}"
                    expect = every_other_kept(layers, EVERY_OTHER_RATE[depth])
                else:
                    expect = evenly_spaced(layers, depth)
                    spec = "strategy=keep-list layers=" + \
                        ",".join(map(str, expect))
            elif strategy == "top-k":
                spec = f"strategy=top-k keep={depth} scores-file={scores}"
                s = json.load(open(scores))["scores"]
                expect = sorted(sorted(range(layers), key=lambda i: -s[i])[:depth])
            else:
                # The search runs at the calibration's batch; what it
                # keeps is then compiled for any batch.
                _, text = r.build(
                    onnx, f"{name}-search{depth}.mlir",
                    f"strategy=search keep={depth}",
                    ["--emit=linalg", "--input-shape", f"pixels={nval}x8x8",
                     "--calibration", r.val_x, "--weights",
                     os.path.join(r.work, f"{name}-full.safetensors")])
                m = re.search(r"search \((.*)\) kept \[([^\]]*)\]", text)
                if not m:
                    sys.exit(f"report: no search result in:\n{text}")
                expect = [int(t) for t in m.group(2).split(",")]
                spec = "strategy=keep-list layers=" + ",".join(map(str, expect))
            exe, text = r.build(onnx, f"{name}-{strategy}{depth}", spec)
            kept = kept_from_remark(text)
            if kept != expect:
                sys.exit(f"report: {name} {strategy} depth {depth}: attnc "
                         f"kept {kept}, expected {expect}")
            rows.append(dict(model=name, strategy=strategy, depth=depth,
                             kept=kept, exe=exe))
    unit = json.load(open(os.path.join(args.data, name + ".prune-scores.json")))
    nheads = len(unit["head_scores"][0])
    ngroups = len(unit["ffn_scores"][0])
    for strategy, tag, keep_heads, keep_groups in PRUNE_ROWS:
        if strategy not in args.prune:
            continue
        spec, heads, groups = prune_spec(unit, keep_heads, keep_groups)
        exe, text = r.build(onnx, f"{name}-{tag}", prune=spec)
        # One remark per pruned attn.mha / attn.ffn.
        got = (len(re.findall(rf"kept {keep_heads} of {nheads} heads", text)),
               len(re.findall(rf"kept {keep_groups} of {ngroups} FFN groups", text)))
        want = (layers if keep_heads else 0, layers if keep_groups else 0)
        if got != want:
            sys.exit(f"report: {name} {tag}: attnc pruned {got} attention "
                     f"/ FFN ops, expected {want}:\n{text}")
        row = dict(model=name, strategy=strategy, depth=layers,
                   kept=list(range(layers)), exe=exe, heads=nheads,
                   groups=ngroups,
                   keep_heads=keep_heads, keep_groups=keep_groups,
                   kept_heads=heads, kept_groups=groups)
        row["fraction"] = (keep_heads or keep_groups) / \
            (nheads if keep_heads else ngroups)
        rows.append(row)
    return rows


def study(args):
    """Compiles every model's rows (--jobs models at a time), then runs the
    executables one at a time, so that no compile competes with a timed
    run of ours."""
    from concurrent.futures import ThreadPoolExecutor
    r = Runner(args)
    names = args.models.split(",")
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        compiled = list(pool.map(lambda n: compile_model(r, args, n), names))
    results = []
    for name, built in zip(names, compiled):
        rows = []
        for row in built:
            acc, pred, ms, read = r.measure(row.pop("exe"))
            row.update(accuracy=acc, ms=ms, bytes=read, pred=pred)
            if row["strategy"] == "full":
                # The unpruned model is every layer strategy's depth 12.
                rows += [dict(row, strategy=s) for s in STRATEGIES]
            else:
                rows.append(row)
            print(f"{name} {row['strategy']:11s} depth {row['depth']:2d} "
                  f"{prune_description(row) if row.get('heads') else row['kept']}: "
                  f"accuracy {acc:.4f}, {ms:.2f} ms, {read} bytes", flush=True)
        # The reference: PyTorch with the same layers, heads and groups.
        keys = [None] + [ref_key(row) for row in rows]
        preds, log = torch_reference(args.data, name, keys)
        torch_full = float((preds[None] == r.test_y).mean())
        for row in rows:
            tp = preds[ref_key(row)]
            row["torch_accuracy"] = float((tp == r.test_y).mean())
            row["agreement"] = float((tp == row["pred"]).mean())
            del row["pred"]
        results.append(dict(model=name, torch_full_accuracy=torch_full,
                            train_seconds=log["train_seconds"],
                            drop_rate=log["drop_rate"],
                            structured_rate=log.get("structured_rate", 0.0),
                            rows=rows))
    return results, r.compile_seconds


def regime(res):
    if res["drop_rate"]:
        return f"{res['model']} (LayerDrop p = {res['drop_rate']})"
    if res["structured_rate"]:
        return (f"{res['model']} (heads and FFN groups dropped, p = "
                f"{res['structured_rate']})")
    return f"{res['model']} (no dropout of structure)"


def table(results, ntest, bench):
    lines = [f"| training | strategy | depth | kept layers | test accuracy "
             f"| PyTorch, same layers | latency (ms / {ntest} images, best of {bench}) "
             "| weight bytes read |",
             "|---|---|---:|---|---:|---:|---:|---:|"]
    for res in results:
        lines.append(f"| {regime(res)} | PyTorch, "
                     f"all 12 layers (reference) | 12 | all | "
                     f"{100 * res['torch_full_accuracy']:.1f}% | | | |")
        seen_full = False
        for row in res["rows"]:
            if row["strategy"] in PRUNE_STRATEGIES:
                strategy = f"{row['strategy']}: {prune_description(row)}"
                kept = "all"
            elif row["depth"] == 12:
                if seen_full:
                    continue
                seen_full = True
                strategy = "none (attnc, unpruned)"
                kept = "all"
            else:
                strategy = row["strategy"]
                kept = ",".join(map(str, row["kept"]))
            lines.append(
                f"| {res['model']} | {strategy} | {row['depth']} | {kept} | "
                f"{100 * row['accuracy']:.1f}% | "
                f"{100 * row['torch_accuracy']:.1f}% | {row['ms']:.2f} | "
                f"{row['bytes']:,} |")
    return "\n".join(lines) + "\n"


BEGIN, END = "<!-- layerdrop table: begin -->\n", "<!-- layerdrop table: end -->"


def write_table(path, text):
    """Replaces the table between the markers of an existing document
    (docs/layerdrop.md), or writes a file holding the table alone."""
    doc = open(path).read() if os.path.exists(path) else ""
    if BEGIN in doc and END in doc:
        head, rest = doc.split(BEGIN, 1)
        text = head + BEGIN + text + END + rest.split(END, 1)[1]
    with open(path, "w") as f:
        f.write(text)


def plot(results, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(2, 2, figsize=(13, 9.5))
    axes = axes.flatten()
    styles = {"layerdrop": "-", "structured": "-.", "baseline": "--"}
    markers = {"every-other": "o", "top-k": "s", "search": "^",
               "heads": "D", "ffn": "v", "heads+ffn": "X"}
    colors = {"layerdrop": "tab:blue", "structured": "tab:green",
              "baseline": "tab:red"}
    for res in results:
        model = res["model"]
        for ax in axes:
            ax.axhline(100 * res["torch_full_accuracy"], color=colors[model],
                       linestyle=styles[model], linewidth=0.8, alpha=0.5)
        for strategy in STRATEGIES + PRUNE_STRATEGIES:
            pruned = strategy in PRUNE_STRATEGIES
            rows = [r for r in res["rows"] if r["strategy"] == strategy]
            if len(rows) < 2 and not pruned:
                continue  # Not run on this model (the search, by default).
            full = next(r for r in res["rows"] if r["strategy"] == "every-other"
                        and r["depth"] == max(DEPTHS))
            if pruned:
                # From the unpruned model down to the smallest fraction.
                rows = [dict(full, fraction=1.0)] + \
                    sorted(rows, key=lambda r: -r["fraction"])
            else:
                rows = sorted(rows, key=lambda r: r["depth"])
            label = f"{model}, {strategy}"
            acc = [100 * r["accuracy"] for r in rows]
            kw = dict(color=colors[model], marker=markers[strategy],
                      label=label, markersize=5)
            if not pruned:
                axes[0].plot([r["depth"] for r in rows], acc, styles[model], **kw)
            else:
                axes[1].plot([r["fraction"] for r in rows], acc,
                             styles[model], **kw)
            for ax, key in zip(axes[2:], ("ms", "bytes")):
                xs = [r[key] / (1e6 if key == "bytes" else 1) for r in rows]
                ax.plot(xs, acc, styles[model] if not pruned else ":", **kw)
    for ax, xlabel in zip(axes, ("layers kept (all heads and FFN groups)",
                                 "fraction of heads / FFN groups kept per "
                                 "layer (all 12 layers; heads+ffn: both)",
                                 "latency per test batch (ms)",
                                 "weight MB read")):
        ax.set_xlabel(xlabel)
        ax.set_ylabel("test accuracy (%)")
        ax.grid(alpha=0.3)
    axes[0].set_xticks(DEPTHS)
    axes[1].set_xticks([0.5, 0.75, 1.0])
    axes[1].invert_xaxis()
    axes[0].legend(fontsize=7)
    axes[1].legend(fontsize=7)
    fig.suptitle("load_digits, 12-layer encoders pruned by attnc: layers "
                 "(LayerDrop strategies) and heads / FFN groups (--prune)\n"
                 "thin lines: PyTorch, unpruned; dotted in the lower "
                 "panels: head / FFN pruning")
    fig.tight_layout()
    fig.savefig(path, dpi=80)


def write_lit(results, data, out, calibration):
    """The inputs of test/LayerDrop/digits.test: the models, their scores,
    the test split, a calibration subset of the validation split, and the
    cases with PyTorch's accuracies for the same layers, heads and
    groups."""
    import shutil
    os.makedirs(out, exist_ok=True)
    for f in ("test_x.npy", "test_y.npy"):
        shutil.copyfile(os.path.join(data, f), os.path.join(out, f))
    val = np.load(os.path.join(data, "val_x.npy"))[:calibration]
    np.save(os.path.join(out, "calib_x.npy"), val)
    cases = []
    for res in results:
        name = res["model"]
        for suffix in (".scores.json", ".prune-scores.json"):
            shutil.copyfile(os.path.join(data, name + suffix),
                            os.path.join(out, name + suffix))
        # The exporter's per-node provenance (stack traces, module names)
        # is half the file and nothing the compiler reads: the committed
        # copy goes without it.
        import onnx
        model = onnx.load(os.path.join(data, name + ".onnx"))
        for node in model.graph.node:
            del node.metadata_props[:]
            node.doc_string = ""
        for info in model.graph.value_info:
            del info.metadata_props[:]
        onnx.save(model, os.path.join(out, name + ".onnx"))
        rows = {(r["strategy"], r["depth"]): r for r in res["rows"]
                if r["strategy"] not in PRUNE_STRATEGIES}
        layers = max(r["depth"] for r in res["rows"])

        def case(tag, spec, row, **kw):
            cases.append(dict(name=f"{name}-{tag}", model=name, spec=spec,
                              kept=row["kept"],
                              accuracy=round(row["torch_accuracy"], 6), **kw))

        case("full", "strategy=keep-list layers=" +
             ",".join(map(str, range(layers))), rows[("every-other", layers)])
        # Head / FFN-group pruning of the structured model and of the
        # baseline: the spec is built from the committed scores.
        for row in res["rows"]:
            if row["strategy"] in PRUNE_STRATEGIES and name != "layerdrop" \
                    and row["fraction"] == 0.5 and row["strategy"] != "heads+ffn":
                cases.append(dict(
                    name=f"{name}-{row['strategy']}{int(100 * row['fraction'])}",
                    model=name, spec=None,
                    prune=dict(scores="{inputs}/" + name + ".prune-scores.json",
                               keep_heads=row["keep_heads"],
                               keep_ffn_groups=row["keep_groups"]),
                    pruned=dict(heads=row["heads"], groups=row["groups"],
                                layers=layers),
                    kept_heads=row["kept_heads"], kept_groups=row["kept_groups"],
                    accuracy=round(row["torch_accuracy"], 6)))
        if name == "structured":
            continue
        case("every-other6", "strategy=every-other rate=0.5",
             rows[("every-other", 6)])
        case("top-k3", "strategy=top-k keep=3 scores-file={inputs}/" + name +
             ".scores.json", rows[("top-k", 3)])
        if res["drop_rate"] > 0:
            case("top-k6", "strategy=top-k keep=6 scores-file={inputs}/" +
                 name + ".scores.json", rows[("top-k", 6)])
            case("keep-list4", "strategy=keep-list layers=0,3,6,9",
                 rows[("every-other", 4)])
            # The study searched on the whole validation split; the test
            # searches on a subset, so only the accuracy must come close.
            row = rows[("search", 6)]
            cases.append(dict(
                name=f"{name}-search6", model=name,
                spec="strategy=search keep=6",
                args=["--input-shape", f"pixels={calibration}x8x8",
                      "--calibration", "{inputs}/calib_x.npy", "--weights",
                      "{workdir}/" + name + "-full.safetensors"],
                kept=None, accuracy=round(row["torch_accuracy"], 6),
                tolerance=0.03, study_kept=row["kept"]))
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump(dict(cases=cases), f, indent=1)
        f.write("\n")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tools", required=True,
                   help="directory holding attn-compile (build/bin)")
    p.add_argument("--data", required=True, help="train.py's --out")
    p.add_argument("--models", default="layerdrop,structured,baseline")
    p.add_argument("--depths", default=",".join(map(str, DEPTHS)))
    p.add_argument("--strategies", default=",".join(STRATEGIES),
                   help="the layer-pruning strategies to run")
    p.add_argument("--search-models", default="layerdrop,baseline",
                   help="the models the (slow) search strategy runs on")
    p.add_argument("--jobs", type=int, default=3,
                   help="models compiled at a time (the timed runs are "
                   "one at a time, after all compiles)")
    p.add_argument("--prune", default=",".join(PRUNE_STRATEGIES),
                   help="the head / FFN-group pruning rows to run (empty: "
                   "none)")
    p.add_argument("--bench", type=int, default=20,
                   help="timed runs per executable (the fastest is reported)")
    p.add_argument("--md", help="write the markdown table here (between "
                   "the table markers if the file has them)")
    p.add_argument("--png", help="write the plot here")
    p.add_argument("--write-lit", metavar="DIR",
                   help="also write test/LayerDrop's inputs into DIR")
    p.add_argument("--calibration", type=int, default=100,
                   help="with --write-lit: validation images to search on")
    args = p.parse_args()
    args.depths = [int(d) for d in args.depths.split(",")]
    args.strategies = [s for s in args.strategies.split(",") if s]
    args.prune = [s for s in args.prune.split(",") if s]
    args.search_models = args.search_models.split(",")
    start = time.time()
    results, compile_seconds = study(args)
    ntest = len(np.load(os.path.join(args.data, "test_y.npy")))
    summary = dict(results=results, seconds=round(time.time() - start, 1),
                   compile_seconds=round(compile_seconds, 1))
    with open(os.path.join(args.data, "results.json"), "w") as f:
        json.dump(summary, f, indent=1)
        f.write("\n")
    text = table(results, ntest, args.bench)
    print(text)
    if args.md:
        write_table(args.md, text)
    if args.png:
        plot(results, args.png)
    if args.write_lit:
        write_lit(results, args.data, args.write_lit, args.calibration)
    bad = [(res["model"], row["strategy"], row["depth"]) for res in results
           for row in res["rows"] if row["agreement"] < 0.99]
    print(f"report: {summary['seconds']} s ({summary['compile_seconds']} s "
          f"compiling)")
    if bad:
        sys.exit(f"report: attnc and PyTorch disagree on more than 1% of the "
                 f"test predictions for {bad}")


if __name__ == "__main__":
    main()
