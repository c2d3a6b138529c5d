#!/usr/bin/python3
"""attnc against the CPU peers a user would pick, on one ONNX BERT export.

    bench/peers.py [--layers 12] [--seqs 128,512] [--threads 1,2] [--rounds 3]
                   [--no-layer-rows] [--peers ort,iree,torch] [--workdir DIR]
    bench/peers.py --check        # 1 layer, seq 16, 1 thread: outputs only

Runs under the virtual environment from `scripts/setup.sh --bench`
(.venv-bench; the script re-executes itself there when started elsewhere).

The model is Hugging Face's BertModel (transformers, BERT-base: hidden 768,
12 heads, FFN 3072, erf GELU, no pooler) with seeded random parameters,
batch 1, f32, inputs `input_ids` and `attention_mask` (all ones), exported
once per sequence length by torch.onnx.export (opset 17, static shapes).
Every peer runs that same .onnx file:

  attnc        attn-compile model.onnx --target=cpu; the executable's --bench
               (inference only), OMP_NUM_THREADS=N
  ONNX Runtime CPUExecutionProvider, ORT_ENABLE_ALL (its transformer fusions),
               intra_op_num_threads=N, sequential
  IREE         iree-import-onnx, iree-compile --iree-hal-target-backends=llvm-cpu
               --iree-llvmcpu-target-cpu=host; local-task driver, N workers
  PyTorch      the BertModel that produced the export, eager, no_grad,
               torch.set_num_threads(N)

Before timing, every peer's output is compared with the exporting model's
(PyTorch's) output, and all pairs of peers with each other; a peer that
disagrees (relative error max|a - ref| / max|ref| above --tol) is reported
and not timed. PyTorch's OpenBLAS core type is detected (bench/openblas_kernel)
and, where Debian's OpenBLAS falls back to narrower kernels than the host
has, OPENBLAS_CORETYPE is set for the peers; a ratio against a peer still on
a fallback kernel is refused. Peers run in worker processes (one per peer and
thread count) and are timed in alternation with attnc, rotating the order
each round; the table gives the median over rounds of each run's median and
the ratio attnc / peer (lower is better for attnc) with its range over rounds.
With --layers > 1 a second row set times a 1-layer export the same way.
"""

import argparse
import collections
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from workers import RunFailed, WorkerProcess, exit_status, median_ms, serve  # noqa: E402
ROOT = os.path.dirname(HERE)
VENV = os.path.join(ROOT, ".venv-bench")
MODEL_TAG = "hfbert-v1"  # bump when the model or its parameters change
SEED = 1234
OPSET = 17
D, HEADS, DFF, VOCAB = 768, 12, 3072, 30522
PEERS = ("ort", "iree", "torch")
TITLE = {"attnc": "attnc", "ort": "ONNX Runtime", "iree": "IREE", "torch": "PyTorch"}
PEER_IDLE_S = 0.25  # let a worker's threads stop spinning before the next peer runs


def _reexec_in_venv():
    """Run under .venv-bench when started with another interpreter."""
    if os.path.realpath(sys.prefix) == os.path.realpath(VENV):
        return
    py = os.path.join(VENV, "bin", "python")
    if os.path.exists(py) and not os.environ.get("ATTNC_PEERS_NO_REEXEC"):
        os.execv(py, [py, os.path.abspath(__file__)] + sys.argv[1:])


def log(*a):
    print(*a, file=sys.stderr, flush=True)




# ---------------------------------------------------------------------------
# The model: HF BertModel, seeded
# ---------------------------------------------------------------------------

def build_bert(layers):
    import torch
    from transformers import BertConfig, BertModel

    cfg = BertConfig(vocab_size=VOCAB, hidden_size=D, num_hidden_layers=layers,
                     num_attention_heads=HEADS, intermediate_size=DFF, hidden_act="gelu",
                     layer_norm_eps=1e-12, attn_implementation="eager")
    model = BertModel(cfg, add_pooling_layer=False).eval()
    # HF's init leaves biases 0 and LayerNorm at (1, 0), which the exporter
    # folds into shared constants; random values keep every tensor distinct.
    gen = torch.Generator().manual_seed(SEED)
    with torch.no_grad():
        for name, p in sorted(model.named_parameters()):
            r = torch.randn(p.shape, generator=gen)
            if "LayerNorm.weight" in name:
                p.copy_(1.0 + 0.1 * r)
            elif "LayerNorm.bias" in name:
                p.copy_(0.1 * r)
            else:
                p.copy_(0.02 * r)
    return model


def model_inputs(seq):
    import numpy as np
    rng = np.random.default_rng(SEED + seq)
    ids = rng.integers(0, VOCAB, size=(1, seq), dtype=np.int64)
    return ids, np.ones((1, seq), np.int64)


def paths(wd, layers, seq):
    stem = os.path.join(wd, "%s_L%d_S%d" % (MODEL_TAG, layers, seq))
    return {"onnx": stem + ".onnx", "ref": stem + ".ref.npy", "stem": stem,
            "ids": os.path.join(wd, "input_ids_%d.npy" % seq),
            "mask": os.path.join(wd, "attention_mask_%d.npy" % seq)}


def export_main(wd, layers, seq):
    """Child process: export the model at one sequence length, with PyTorch's output."""
    import numpy as np
    import torch

    p = paths(wd, layers, seq)
    ids, mask = model_inputs(seq)
    np.save(p["ids"], ids)
    np.save(p["mask"], mask)
    model = build_bert(layers)
    args = (torch.from_numpy(ids), torch.from_numpy(mask))
    with torch.no_grad():
        ref = model(*args).last_hidden_state.numpy()
        tmp = p["onnx"] + ".tmp"
        torch.onnx.export(model, args, tmp, input_names=["input_ids", "attention_mask"],
                          output_names=["last_hidden_state"], opset_version=OPSET,
                          do_constant_folding=True)
    np.save(p["ref"], ref)
    os.replace(tmp, p["onnx"])


# ---------------------------------------------------------------------------
# Peer workers: one process per peer and thread count, JSON lines on stdio
# ---------------------------------------------------------------------------

def _ort_worker(threads):
    import onnx
    import onnxruntime as ort

    def options():
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        return so

    def load(req):
        t0 = time.perf_counter()
        sess = ort.InferenceSession(req["onnx"], options(), providers=["CPUExecutionProvider"])
        load_s = time.perf_counter() - t0
        feeds = {"input_ids": _npload(req["ids"]), "attention_mask": _npload(req["mask"])}
        info = {"load_s": load_s, "providers": sess.get_providers()}
        if req.get("describe"):
            # What ORT's optimizer made of the graph: its fused ops, counted.
            so = options()
            so.optimized_model_filepath = req["stem"] + ".ort-opt.onnx"
            ort.InferenceSession(req["onnx"], so, providers=["CPUExecutionProvider"])
            g = onnx.load(so.optimized_model_filepath, load_external_data=False).graph
            info["ops"] = dict(collections.Counter(n.op_type for n in g.node))
            os.remove(so.optimized_model_filepath)
        return (lambda: sess.run(None, feeds)[0]), info

    hello = {"version": ort.__version__, "providers": ort.get_available_providers()}
    return hello, load


def _iree_worker(threads):
    import iree.runtime as rt

    # The task system reads its topology when the device is created.
    rt.flags.parse_flags("--task_topology_group_count=%d" % threads)
    config = rt.Config("local-task")

    def load(req):
        t0 = time.perf_counter()
        vm = rt.VmModule.mmap(config.vm_instance, req["vmfb"])
        ctx = rt.SystemContext(vm_modules=[vm], config=config)
        entry = [n for n in vm.function_names if not n.startswith("__") and "$" not in n]
        if len(entry) != 1:
            raise RunFailed("IREE module has entry points %s" % entry)
        fn = ctx.modules[vm.name][entry[0]]
        load_s = time.perf_counter() - t0
        ids, mask = _npload(req["ids"]), _npload(req["mask"])
        return (lambda: fn(ids, mask).to_host()), {"load_s": load_s, "entry": entry[0]}

    hello = {"version": "?"}
    try:
        from iree.runtime import version as rv
        hello["version"] = rv.VERSION
    except ImportError:
        pass
    return hello, load


def _torch_worker(threads):
    import numpy as np
    import torch
    import transformers

    sys.path.insert(0, HERE)
    import openblas_kernel as ok

    torch.set_num_threads(threads)
    a = torch.ones(64, 64)
    a @ a  # load the BLAS before asking which kernels it chose
    cap = ""
    for line in torch.__config__.show().splitlines():
        if "CPU capability usage" in line:
            cap = line.split(":", 1)[1].strip()
    models = {}

    def load(req):
        t0 = time.perf_counter()
        if req["layers"] not in models:
            models[req["layers"]] = build_bert(req["layers"])
        model = models[req["layers"]]
        ids = torch.from_numpy(_npload(req["ids"]))
        mask = torch.from_numpy(_npload(req["mask"]))

        def run():
            with torch.no_grad():
                return model(input_ids=ids, attention_mask=mask).last_hidden_state.numpy()
        return run, {"load_s": time.perf_counter() - t0}

    libs = ok.loaded_openblas()
    hello = {"version": torch.__version__, "transformers": transformers.__version__,
             "threads": torch.get_num_threads(), "aten_capability": cap, "openblas": libs,
             "fallback": any(ok.is_fallback(lib["corename"]) for lib in libs),
             "numpy": np.__version__, "wait_policy": os.environ.get("OMP_WAIT_POLICY")}
    return hello, load


def _npload(path):
    import numpy as np
    return np.load(path)


def worker_main(kind, threads):
    import numpy as np
    hello, load = {"ort": _ort_worker, "iree": _iree_worker, "torch": _torch_worker}[kind](threads)
    runs = {}

    def handle(req):
        if req["op"] == "load":
            runs[req["key"]], rep = load(req)
            return rep
        fn = runs[req["key"]]
        rep = {"ms": median_ms(fn, req["reps"], req["warmup"])}
        if req.get("out"):
            np.save(req["out"], np.asarray(fn()))
        time.sleep(PEER_IDLE_S)
        return rep

    serve(hello, handle)


class Worker(WorkerProcess):
    def __init__(self, kind, threads, env_overrides):
        super().__init__(__file__, ["--worker", kind, "--threads", str(threads)],
                         threads, torch=(kind == "torch"), env_overrides=env_overrides)
        if "error" in self.hello:
            raise RunFailed(self.hello["error"])

    def call(self, **req):
        return self.request(**req)


# ---------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------

def peer_availability():
    """{peer: None if importable, else why not}."""
    import importlib
    why = {}
    for peer, mods in (("ort", ("onnxruntime", "onnx")), ("iree", ("iree.compiler", "iree.runtime")),
                       ("torch", ("torch", "transformers"))):
        why[peer] = None
        for m in mods:
            try:
                importlib.import_module(m)
            except Exception as e:  # ImportError, or a broken install raising anything
                why[peer] = "%s: %s" % (type(e).__name__, str(e).splitlines()[0][:120])
                break
    for tool in ("iree-import-onnx", "iree-compile"):
        if why["iree"] is None and not _venv_tool(tool):
            why["iree"] = "%s not found" % tool
    return why


def _venv_tool(name):
    cand = os.path.join(os.path.dirname(sys.executable), name)
    return cand if os.path.exists(cand) else shutil.which(name)


def optimize_for_ort(p):
    """The export through onnxruntime.transformers' BERT optimizer; returns
    (path, fused operator counts)."""
    from onnxruntime.transformers import optimizer
    m = optimizer.optimize_model(p["onnx"], model_type="bert", num_heads=HEADS, hidden_size=D,
                                 opt_level=0, use_gpu=False)
    out = p["stem"] + ".ort.onnx"
    m.save_model_to_file(out)
    return out, {k: v for k, v in m.get_fused_operator_statistics().items() if v}


def timed_run(cmd, what):
    t0 = time.perf_counter()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as e:
        raise RunFailed("%s: cannot run %s: %s" % (what, cmd[0], e))
    if r.returncode != 0:
        raise RunFailed("%s failed (rc %d): %s\n%s" % (what, r.returncode, " ".join(cmd),
                                                      r.stderr[-3000:]))
    return time.perf_counter() - t0


def rel_err(a, ref):
    import numpy as np
    if a.shape != ref.shape:
        return float("inf")
    err = float(np.max(np.abs(a.astype(np.float64) - ref.astype(np.float64))))
    return err / max(float(np.max(np.abs(ref))), 1e-30)


def run_attnc(exe, p, threads, reps=0, warmup=0, out=None):
    sys.path.insert(0, HERE)
    import cpu_bench as cb
    try:
        return cb.run_attnc(exe, exe + ".safetensors",
                            ["input_ids=" + p["ids"], "attention_mask=" + p["mask"]],
                            threads, reps, warmup, out, timeout=1800)
    except (cb.RunFailed, subprocess.TimeoutExpired) as e:
        raise RunFailed(str(e))


def fmt_ratio(vals):
    med = statistics.median(vals)
    if len(vals) == 1:
        return "%.2f" % med
    return "%.2f (%.2f-%.2f)" % (med, min(vals), max(vals))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--seqs", default="128,512")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--budget-ms", type=float, default=1500,
                    help="aim for about this much time per measurement (reps = budget / run)")
    ap.add_argument("--peers", default=",".join(PEERS), help="subset of ort,iree,torch")
    ap.add_argument("--no-layer-rows", action="store_true",
                    help="skip the 1-layer row set (only timed when --layers > 1)")
    ap.add_argument("--tol", type=float, default=1e-4,
                    help="largest relative error max|a-b|/max|b| between two peers' outputs")
    ap.add_argument("--keep-coretype", action="store_true",
                    help="do not set OPENBLAS_CORETYPE on a fallback (ratios are then refused)")
    ap.add_argument("--check", action="store_true",
                    help="outputs only: 1 layer, seq 16, 1 thread, no timing table")
    ap.add_argument("--workdir", default=os.path.join(ROOT, "build", "bench-peers"))
    ap.add_argument("--attn-compile", default=os.path.join(ROOT, "build", "bin", "attn-compile"))
    ap.add_argument("--worker", choices=PEERS, help=argparse.SUPPRESS)
    ap.add_argument("--export", nargs=2, type=int, metavar=("LAYERS", "SEQ"),
                    help=argparse.SUPPRESS)
    args = ap.parse_args()
    threads = [int(t) for t in args.threads.split(",")]
    wd = os.path.abspath(args.workdir)
    if args.worker:
        return worker_main(args.worker, threads[0])
    if args.export:
        return export_main(wd, *args.export)

    import numpy as np
    sys.path.insert(0, HERE)
    import openblas_kernel as ok

    if args.check:
        args.layers, args.seqs, args.rounds, args.no_layer_rows = 1, "16", 1, True
        threads = [1]
    seqs = [int(s) for s in args.seqs.split(",")]
    if not os.access(args.attn_compile, os.X_OK):
        raise SystemExit("peers: no attn-compile at %s (build attnc first, or --attn-compile)"
                         % args.attn_compile)
    os.makedirs(wd, exist_ok=True)
    t_start = time.time()
    load0 = os.getloadavg()
    failures = []

    # Which peers exist, and which BLAS kernels PyTorch gets --------------
    wanted = [p for p in args.peers.split(",") if p]
    for p in wanted:
        if p not in PEERS:
            raise SystemExit("unknown peer %r (ort, iree, torch)" % p)
    missing = {p: why for p, why in peer_availability().items() if p in wanted and why}
    if missing.get("torch"):
        raise SystemExit("PyTorch and transformers are needed for the export: %s "
                         "(run scripts/setup.sh --bench)" % missing["torch"])
    peers = [p for p in wanted if p not in missing]
    for p, why in missing.items():
        log("peer %s not installed: %s" % (TITLE[p], why))
    log("checking OpenBLAS's core type ...")
    env_overrides, blas = ok.peer_environment(log=log, keep=args.keep_coretype)
    log(blas["note"])

    models = [(args.layers, s) for s in seqs]
    if not args.no_layer_rows and args.layers > 1:
        models += [(1, s) for s in seqs]

    # Export, compile -------------------------------------------------------
    compile_s = collections.defaultdict(dict)
    exes, vmfbs, ort_opt = {}, {}, {}
    for L, s in models:
        p = paths(wd, L, s)
        if not (os.path.exists(p["onnx"]) and os.path.exists(p["ref"])):
            log("exporting BERT-base L=%d seq=%d (opset %d) ..." % (L, s, OPSET))
            timed_run([sys.executable, os.path.abspath(__file__), "--workdir", wd,
                       "--export", str(L), str(s)], "export")
        log("attn-compile L=%d seq=%d ..." % (L, s))
        exes[(L, s)] = p["stem"] + ".attnc"
        try:
            compile_s[(L, s)]["attnc"] = timed_run(
                [args.attn_compile, p["onnx"], "--target=cpu", "-q", "-o", exes[(L, s)]],
                "attn-compile")
        except RunFailed as e:
            failures.append(str(e))
            exes[(L, s)] = None
        if "ort" in peers:
            # ONNX Runtime's transformer optimizer (what its docs prescribe for
            # BERT on CPU) fuses Attention, SkipLayerNormalization and BiasGelu,
            # which the session's ORT_ENABLE_ALL alone does not.
            log("onnxruntime.transformers optimizer L=%d seq=%d ..." % (L, s))
            try:
                t0 = time.perf_counter()
                ort_opt[(L, s)] = optimize_for_ort(p)
                compile_s[(L, s)]["ort optimize"] = time.perf_counter() - t0
            except Exception as e:  # the optimizer raises anything on a model it cannot read
                failures.append("ORT transformer optimizer L=%d S=%d: %s: %s"
                                % (L, s, type(e).__name__, e))
        if "iree" in peers:
            log("iree-import-onnx + iree-compile L=%d seq=%d ..." % (L, s))
            mlir, vmfbs[(L, s)] = p["stem"] + ".iree.mlir", p["stem"] + ".vmfb"
            try:
                compile_s[(L, s)]["iree import"] = timed_run(
                    [_venv_tool("iree-import-onnx"), p["onnx"], "-o", mlir], "iree-import-onnx")
                compile_s[(L, s)]["iree"] = timed_run(
                    [_venv_tool("iree-compile"), mlir, "--iree-hal-target-backends=llvm-cpu",
                     "--iree-llvmcpu-target-cpu=host", "-o", vmfbs[(L, s)]], "iree-compile")
            except RunFailed as e:
                failures.append(str(e))
                vmfbs[(L, s)] = None
            if os.path.exists(mlir):
                os.remove(mlir)  # the weights as hex text: ~2.7x the .onnx

    # Per thread count: load, check outputs (first time), time -------------
    errors = {}       # (L, s) -> {peer: rel err vs PyTorch's exported output}
    pair_err = {}     # (L, s) -> largest relative error between two peers
    bad = collections.defaultdict(dict)  # (L, s) -> {peer: why not timed}
    hellos, infos = {}, collections.defaultdict(dict)
    results = {}      # (L, s, t) -> {peer: [ms per round]}
    for t in threads:
        workers = {}
        for peer in peers:
            log("starting %s worker, %d thread(s) ..." % (TITLE[peer], t))
            try:
                workers[peer] = Worker(peer, t, env_overrides)
                hellos.setdefault(peer, workers[peer].hello)
            except RunFailed as e:
                failures.append("%s worker: %s" % (TITLE[peer], e))
        if "torch" in workers:
            h = workers["torch"].hello
            if h["threads"] != t:
                failures.append("torch runs %s threads, wanted %d" % (h["threads"], t))
        for L, s in models:
            key = "L%d_S%d" % (L, s)
            p = paths(wd, L, s)
            live = {}
            for peer, w in workers.items():
                if peer in bad[(L, s)]:
                    continue
                if peer == "iree" and not vmfbs.get((L, s)):
                    bad[(L, s)]["iree"] = "compile failed"
                    continue
                if peer == "ort" and (L, s) not in ort_opt:
                    bad[(L, s)]["ort"] = "transformer optimizer failed"
                    continue
                rep = w.call(op="load", key=key, vmfb=vmfbs.get((L, s)),
                             onnx=ort_opt[(L, s)][0] if peer == "ort" else p["onnx"],
                             ids=p["ids"], mask=p["mask"], stem=p["stem"], layers=L, seq=s,
                             describe=(t == threads[0]))
                if "error" in rep:
                    bad[(L, s)][peer] = "load failed: " + rep["error"][:300]
                    failures.append("%s L=%d S=%d: %s" % (TITLE[peer], L, s, rep["error"]))
                    continue
                infos[(L, s)].setdefault(peer, rep)
                live[peer] = w
            if exes.get((L, s)) is None:
                bad[(L, s)]["attnc"] = "compile failed"

            est_ms = None
            if (L, s) not in errors:
                log("checking outputs L=%d seq=%d ..." % (L, s))
                ref = np.load(p["ref"])
                outs, errors[(L, s)] = {}, {}
                if "attnc" not in bad[(L, s)]:
                    o = p["stem"] + ".out.attnc.npy"
                    try:
                        run_attnc(exes[(L, s)], p, t, out=o)
                        outs["attnc"] = np.load(o)
                    except RunFailed as e:
                        bad[(L, s)]["attnc"] = "run failed"
                        failures.append(str(e))
                for peer, w in live.items():
                    o = p["stem"] + ".out.%s.npy" % peer
                    rep = w.call(op="run", key=key, reps=1, warmup=0, out=o)
                    if "error" in rep:
                        bad[(L, s)][peer] = "run failed: " + rep["error"][:300]
                        failures.append("%s L=%d S=%d: %s" % (TITLE[peer], L, s, rep["error"]))
                        continue
                    outs[peer] = np.load(o)
                    if peer == "torch":
                        est_ms = rep["ms"]
                for name, o in outs.items():
                    errors[(L, s)][name] = rel_err(o, ref)
                    if not errors[(L, s)][name] <= args.tol:
                        bad[(L, s)][name] = "disagrees (rel err %.2g vs PyTorch's export)" % (
                            errors[(L, s)][name])
                        failures.append("%s L=%d S=%d: output differs from PyTorch's by %.3g "
                                        "relative" % (TITLE[name], L, s, errors[(L, s)][name]))
                names = sorted(outs)
                pair_err[(L, s)] = max([rel_err(outs[a], outs[b]) for a in names for b in names
                                        if a < b] or [float("nan")])
            if args.check:
                continue

            # Timing: attnc and the live peers in rotating order.
            timed = [n for n in ["attnc"] + list(live) if n not in bad[(L, s)]]
            if est_ms is None:
                est_ms = run_attnc(exes[(L, s)], p, t, reps=1) if "attnc" in timed else 100.0
            reps = max(2, min(30, int(args.budget_ms / max(est_ms, 1e-3))))
            warm = 1 if reps < 10 else 2
            log("timing L=%d seq=%d threads=%d: %s, %d rounds x %d runs ..."
                % (L, s, t, ", ".join(TITLE[n] for n in timed), args.rounds, reps))
            res = results[(L, s, t)] = {n: [] for n in timed}
            for r in range(args.rounds):
                order = timed[r % len(timed):] + timed[:r % len(timed)] if timed else []
                for n in order:
                    if n not in res:
                        continue
                    if n == "attnc":
                        try:
                            res[n].append(run_attnc(exes[(L, s)], p, t, reps, warm))
                        except RunFailed as e:
                            failures.append(str(e))
                            del res[n]
                    else:
                        rep = live[n].call(op="run", key=key, reps=reps, warmup=warm)
                        if "error" in rep:
                            failures.append("%s: %s" % (TITLE[n], rep["error"]))
                            del res[n]
                        else:
                            res[n].append(rep["ms"])
        for w in workers.values():
            w.close()

    iree_version = "?"
    if "iree" in peers:
        v = subprocess.run([_venv_tool("iree-compile"), "--version"], capture_output=True,
                           text=True).stdout
        iree_version = " ".join(ln.split("version", 1)[1].split()[0] for ln in v.splitlines()
                                if "IREE compiler version" in ln) or "?"
    # Keep the exports (reused next time); the compiled artifacts copy the
    # weights again (about 0.45 GB each at 12 layers).
    for L, s in models:
        stem = paths(wd, L, s)["stem"]
        for suffix in (".attnc", ".attnc.safetensors", ".vmfb", ".ort.onnx", ".out.attnc.npy",
                       ".out.ort.npy", ".out.iree.npy", ".out.torch.npy"):
            if os.path.exists(stem + suffix):
                os.remove(stem + suffix)
    print_report(args, threads, models, peers, missing, blas, env_overrides, hellos, infos,
                 compile_s, errors, pair_err, bad, results, load0, t_start, ort_opt, iree_version)
    return exit_status(failures)


def print_report(args, threads, models, peers, missing, blas, env_overrides, hellos, infos,
                 compile_s, errors, pair_err, bad, results, load0, t_start, ort_opt, iree_version):
    sys.path.insert(0, HERE)
    import cpu_bench as cb
    try:
        head = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True).stdout.strip()
    except OSError:
        head = "?"
    try:
        host_cpu = [ln.split(":", 1)[1].strip() for ln in subprocess.run(
            ["/usr/lib/llvm-22/bin/llc", "--version"], capture_output=True,
            text=True).stdout.splitlines() if "Host CPU" in ln][0]
    except (OSError, IndexError):
        host_cpu = "?"
    load1 = os.getloadavg()
    first = models[0]
    print("attnc vs CPU peers on one ONNX export of HF BertModel (BERT-base: hidden 768, 12 heads, "
          "FFN 3072, f32, batch 1, opset %d, random seeded weights)" % OPSET)
    print("%s; %s, %d CPUs (LLVM host cpu %s); load average at start %.2f, at end %.2f; attnc %s"
          % (time.strftime("%Y-%m-%d %H:%M %Z"), cb.cpu_name(), os.cpu_count(), host_cpu,
             load0[0], load1[0], head))
    if max(load0[0], load1[0]) > 0.5 * os.cpu_count():
        print("WARNING: other processes kept the CPUs busy (load average above half the CPU "
              "count): read the ratios, and treat 2-thread ones with care.")
    print()
    print("Peers (kernel / version):")
    print("- attnc: `attn-compile model.onnx --target=cpu` (host CPU, native), OMP_NUM_THREADS=N, "
          "timed by the executable's --bench (inference only)")
    for peer in PEERS:
        if peer in missing:
            print("- %s: not installed (%s)" % (TITLE[peer], missing[peer]))
            continue
        if peer not in args.peers.split(","):
            print("- %s: not selected (--peers)" % TITLE[peer])
            continue
        h = hellos.get(peer)
        if h is None:
            print("- %s: worker failed to start" % TITLE[peer])
            continue
        if peer == "ort":
            ops = (infos.get(first) or {}).get("ort", {}).get("ops", {})
            fused = (ort_opt.get(first) or (None, {}))[1]
            print("- ONNX Runtime %s: CPUExecutionProvider (MLAS); the export through "
                  "onnxruntime.transformers.optimizer (model_type bert; fused: %s), then a session "
                  "with ORT_ENABLE_ALL, intra_op_num_threads=N, inter_op 1, sequential; graph the "
                  "session runs (L=%d): %s; timed around InferenceSession.run"
                  % (h["version"], ", ".join("%s %d" % kv for kv in sorted(fused.items())) or "none",
                     first[0], ", ".join("%s %d" % kv for kv in sorted(ops.items())) or "?"))
        elif peer == "iree":
            print("- IREE runtime %s, compiler %s: iree-import-onnx, iree-compile "
                  "--iree-hal-target-backends=llvm-cpu --iree-llvmcpu-target-cpu=host; "
                  "local-task driver, --task_topology_group_count=N; timed around the call "
                  "and to_host()" % (h["version"], iree_version))
        else:
            libs = ", ".join("%s (%s)" % (lib["corename"], os.path.basename(lib["path"]))
                             for lib in h["openblas"]) or "none loaded"
            print("- PyTorch %s eager (transformers %s BertModel, torch.no_grad, "
                  "torch.set_num_threads(N), OMP_WAIT_POLICY=%s): OpenBLAS core type %s, "
                  "ATen CPU capability %s%s"
                  % (h["version"], h["transformers"], h["wait_policy"], libs, h["aten_capability"],
                     "; FALLBACK KERNEL: ratios refused" if h["fallback"] else ""))
    print("- OpenBLAS check: %s%s" % (blas["note"], "" if not env_overrides else
                                      " (peer environment: %s)" % env_overrides))
    print()

    print("Outputs: relative error max|peer - ref| / max|ref| against PyTorch's output at export "
          "(tolerance %g); last column: the largest between any two peers" % args.tol)
    cols = ["attnc"] + [p for p in PEERS if p in peers]
    print("| layers | seq | " + " | ".join(TITLE[c] for c in cols) + " | max pairwise |")
    print("|---" * (len(cols) + 3) + "|")
    for m in models:
        e = errors.get(m, {})
        cells = ["%.1e" % e[c] if c in e else bad[m].get(c, "-") for c in cols]
        print("| %d | %d | %s | %.1e |" % (m[0], m[1], " | ".join(cells), pair_err.get(m, float("nan"))))
    print()

    print("Compile / load times (s): attn-compile (import, raise, lower, LLVM -O3, link); "
          "iree-import-onnx and iree-compile; ONNX Runtime's transformer optimizer and session "
          "creation (its own graph optimization), at the first thread count")
    print("| layers | seq | attnc compile | IREE import | IREE compile | ORT optimizer | "
          "ORT session |")
    print("|---|---|---|---|---|---|---|")
    for m in models:
        c = compile_s.get(m, {})
        ort_s = (infos.get(m) or {}).get("ort", {}).get("load_s")
        f = lambda v: "%.1f" % v if v is not None else "-"  # noqa: E731
        print("| %d | %d | %s | %s | %s | %s | %s |" % (
            m[0], m[1], f(c.get("attnc")), f(c.get("iree import")), f(c.get("iree")),
            f(c.get("ort optimize")), f(ort_s)))
    print()
    if args.check:
        print("--check: outputs only, nothing timed (total %.0f s)" % (time.time() - t_start))
        return

    torch_fallback = bool(hellos.get("torch", {}).get("fallback"))
    print("Latency (ms, median over %d rounds of each run's median) and attnc / peer "
          "(median over rounds, range); < 1 means attnc is faster" % args.rounds)
    print("| layers | seq | thr | attnc | " + " | ".join(TITLE[p] for p in PEERS) + " | "
          + " | ".join("attnc/" + TITLE[p] for p in PEERS) + " | attnc/fastest |")
    print("|---" * (4 + 2 * len(PEERS) + 1) + "|")
    for m in models:
        for t in threads:
            res = results.get((m[0], m[1], t), {})
            a = res.get("attnc")
            cells, ratios, fastest = [], [], None
            for peer in PEERS:
                if peer in missing:
                    cells.append("not installed")
                    ratios.append("-")
                    continue
                if peer not in peers:
                    cells.append("-")
                    ratios.append("-")
                    continue
                v = res.get(peer)
                if not v:
                    cells.append(bad[m].get(peer, "failed"))
                    ratios.append("-")
                    continue
                cells.append("%.1f" % statistics.median(v))
                if not a:
                    ratios.append("-")
                elif peer == "torch" and torch_fallback:
                    ratios.append("refused (fallback BLAS kernel)")
                else:
                    ratios.append(fmt_ratio([x / y for x, y in zip(a, v)]))
                    if fastest is None or statistics.median(v) < statistics.median(fastest[1]):
                        fastest = (peer, v)
            fr = ("%s (%s)" % (fmt_ratio([x / y for x, y in zip(a, fastest[1])]),
                               TITLE[fastest[0]]) if a and fastest else "-")
            print("| %d | %d | %d | %s | %s | %s | %s |" % (
                m[0], m[1], t, "%.1f" % statistics.median(a) if a else bad[m].get("attnc", "failed"),
                " | ".join(cells), " | ".join(ratios), fr))
    if 1 in threads and len(threads) > 1:
        print()
        print("Thread scaling: 1-thread latency / N-thread latency (medians above; the issue's "
              "goal for attnc is >= 1.8 at 2 threads)")
        multi = [t for t in threads if t != 1]
        print("| layers | seq | N | " + " | ".join(TITLE[p] for p in ("attnc",) + PEERS) + " |")
        print("|---" * (4 + len(PEERS)) + "|")
        for m in models:
            for t in multi:
                r1, rn = results.get((m[0], m[1], 1), {}), results.get((m[0], m[1], t), {})
                cells = ["%.2f" % (statistics.median(r1[p]) / statistics.median(rn[p]))
                         if r1.get(p) and rn.get(p) else "-" for p in ("attnc",) + PEERS]
                print("| %d | %d | %d | %s |" % (m[0], m[1], t, " | ".join(cells)))
    print()
    print("total benchmark time %.0f s" % (time.time() - t_start))


if __name__ == "__main__":
    if "--worker" not in sys.argv and "--export" not in sys.argv:
        _reexec_in_venv()
    try:
        sys.exit(main())
    except RunFailed as e:
        print("peers: FAILED: %s" % e, file=sys.stderr)
        sys.exit(1)
