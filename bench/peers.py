#!/usr/bin/python3
"""attnc against the CPU peers as users install them, on one ONNX BERT export.

    bench/peers.py [--layers 12] [--seqs 128,512] [--threads 1,2] [--rounds 3]
                   [--no-layer-rows] [--peers NAME,...] [--venv DIR] [--workdir DIR]
    bench/peers.py --check        # 1 layer, seq 16, 1 thread: outputs only

Runs under a virtual environment with the peers from the Python package
index: `.venv-peers` (`scripts/setup.sh --peers`: torch 2.x with MKL and
oneDNN, transformers 5.x, onnx, onnxruntime, IREE), or the one --venv (or
ATTNC_PEERS_VENV) names; the script re-executes itself there.

The model is Hugging Face's BertModel (BERT-base: hidden 768, 12 heads, FFN
3072, erf GELU, no pooler) with seeded random parameters, batch 1, inputs
`input_ids` and `attention_mask` (all ones), exported once per sequence
length by torch.onnx.export's TorchScript exporter (dynamo=False, opset 17,
static shapes; onnxruntime.transformers' BERT optimizer fuses attention in
that graph, not in the dynamo exporter's). What runs (--peers picks; attnc
f32 always runs):

  attnc          attn-compile model.onnx --target=cpu; the executable's
                 --bench (inference only), OMP_NUM_THREADS=N
  attnc-int8     the same with --quantize=int8 (u8 activations per token,
                 s8 weights per column, VNNI GEMMs where the host has them)
  attnc-bf16     the same with --precision=bf16 (bf16 activations and
                 weights, f32 accumulation, norms and softmax statistics)
  ort            ONNX Runtime CPUExecutionProvider on the export, session
                 ORT_ENABLE_ALL (its default), intra_op_num_threads=N
  ort-opt        the export through onnxruntime.transformers.optimizer
                 (model_type bert: Attention, SkipLayerNormalization, BiasGelu)
  ort-int8       ort-opt's model through onnxruntime.quantization's
                 quantize_dynamic (int8 weights, activations quantized per run)
  iree           iree-import-onnx, iree-compile llvm-cpu (host CPU);
                 local-task driver, N workers
  torch-eager    the BertModel that was exported (attn_implementation eager),
                 torch.no_grad, torch.set_num_threads(N)
  torch-sdpa     the same with attn_implementation sdpa
  torch-compile  torch.compile of the sdpa model (inductor, default mode;
                 compiled once per shape, its compile time reported)
  torch-bf16     the sdpa model under torch.autocast("cpu", torch.bfloat16)

Before timing, every output is compared with PyTorch's output at export: f32
settings must agree to --tol (relative error max|a - ref| / max|ref|) or are
reported and not timed; the bf16/int8 settings' relative error and cosine
similarity are reported. The kernels each peer runs are probed and stated
(MKL / oneDNN verbose output for PyTorch, ORT's optimized graph, the host's
CPU flags). Peers run in worker processes (one per setting and thread count)
and are timed in alternation with attnc, rotating the order each round; the
table gives the median over rounds of each run's median and the ratio attnc /
peer (attnc f32 for f32 peers, attnc bf16 for bf16/int8 peers; lower is
better for attnc) with its range over rounds. A torch built on OpenBLAS
(Debian's 1.13) is shown but kept out of the ratios.
"""

import argparse
import collections
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from peers_model import (D, HEADS, MODULES, OPSET, PEERS, SETTINGS,  # noqa: E402
                         export_main, paths)
from peers_report import print_report  # noqa: E402
from peers_workers import Worker, kernel_probe, worker_main  # noqa: E402
from workers import RunFailed, exit_status  # noqa: E402
ROOT = os.path.dirname(HERE)
DEFAULT_VENV = os.path.join(ROOT, ".venv-peers")


def venv_dir(argv):
    for i, a in enumerate(argv):
        if a == "--venv" and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith("--venv="):
            return a.split("=", 1)[1]
    return os.environ.get("ATTNC_PEERS_VENV") or DEFAULT_VENV


def _reexec_in_venv():
    """Run under the peers' virtual environment when started with another interpreter."""
    venv = venv_dir(sys.argv[1:])
    if os.path.realpath(sys.prefix) == os.path.realpath(venv) or os.environ.get(
            "ATTNC_PEERS_NO_REEXEC"):
        return
    py = os.path.join(venv, "bin", "python")
    if not os.path.exists(py):
        raise SystemExit("peers: no Python at %s: run scripts/setup.sh --peers, or name a "
                         "virtual environment with torch, transformers, onnx, onnxruntime "
                         "and IREE by --venv DIR" % py)
    os.execv(py, [py, os.path.abspath(__file__)] + sys.argv[1:])


def log(*a):
    print(*a, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------

def availability():
    """{worker kind: None if importable, else why not}."""
    import importlib
    why = {}
    for kind, mods in MODULES.items():
        why[kind] = None
        for m in mods:
            try:
                importlib.import_module(m)
            except Exception as e:  # ImportError, or a broken install raising anything
                why[kind] = "%s: %s" % (type(e).__name__, str(e).splitlines()[0][:120])
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


def quantize_for_ort(src, p):
    """ONNX Runtime's dynamic int8 quantization (signed int8 weights, uint8
    activations quantized per run: MLAS's U8S8 kernels)."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic
    out = p["stem"] + ".ort-int8.onnx"
    # Shape inference does not type the outputs of the optimizer's contrib
    # ops (Attention, SkipLayerNormalization); they are float.
    quantize_dynamic(src, out, weight_type=QuantType.QInt8,
                     extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
    return out


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


def cosine(a, ref):
    import numpy as np
    if a.shape != ref.shape:
        return float("nan")
    a, b = a.astype(np.float64).ravel(), ref.astype(np.float64).ravel()
    return float(a @ b / max(np.linalg.norm(a) * np.linalg.norm(b), 1e-300))


def run_attnc(exe, p, threads, reps=0, warmup=0, out=None):
    sys.path.insert(0, HERE)
    import cpu_bench as cb
    try:
        return cb.run_attnc(exe, exe + ".safetensors",
                            ["input_ids=" + p["ids"], "attention_mask=" + p["mask"]],
                            threads, reps, warmup, out, timeout=1800)
    except (cb.RunFailed, subprocess.TimeoutExpired) as e:
        raise RunFailed(str(e))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--seqs", default="128,512")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--budget-ms", type=float, default=1500,
                    help="aim for about this much time per measurement (reps = budget / run)")
    ap.add_argument("--peers", default=",".join(PEERS), help="subset of " + ",".join(PEERS))
    ap.add_argument("--venv", default=None,
                    help="virtual environment with the peers (default .venv-peers, or "
                    "$ATTNC_PEERS_VENV)")
    ap.add_argument("--no-layer-rows", action="store_true",
                    help="skip the 1-layer row set (only timed when --layers > 1)")
    ap.add_argument("--tol", type=float, default=1e-4,
                    help="largest relative error max|a-b|/max|b| of an f32 peer's output")
    ap.add_argument("--compile-timeout", type=int, default=900,
                    help="seconds torch.compile may take per shape before it is dropped")
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

    # Which peers exist, and which kernels PyTorch gets ---------------------
    wanted = [p for p in args.peers.split(",") if p and p != "attnc"]
    for p in wanted:
        if p not in PEERS:
            raise SystemExit("unknown peer %r (%s)" % (p, ", ".join(PEERS)))
    why = availability()
    if why["torch"]:
        raise SystemExit("PyTorch and transformers are needed for the export: %s "
                         "(run scripts/setup.sh --peers, or --venv)" % why["torch"])
    missing = {p: why[SETTINGS[p].kind] for p in wanted if why[SETTINGS[p].kind]}
    run_names = ["attnc"] + [p for p in wanted if p not in missing]
    peers = [n for n in run_names if n != "attnc"]
    for p, w in missing.items():
        log("peer %s not installed: %s" % (p, w))
    log("checking OpenBLAS's core type ...")
    env_overrides, blas = ok.peer_environment(log=log, keep=args.keep_coretype)
    log(blas["note"])
    log("probing PyTorch's kernels (MKL / oneDNN verbose) ...")
    kernels = kernel_probe()

    models = [(args.layers, s) for s in seqs]
    if not args.no_layer_rows and args.layers > 1:
        models += [(1, s) for s in seqs]

    # Export, compile -------------------------------------------------------
    compile_s = collections.defaultdict(dict)   # (L, s) -> {setting: s}
    exes = collections.defaultdict(dict)        # (L, s) -> {attnc setting: executable}
    files, fused = collections.defaultdict(dict), {}
    bad = collections.defaultdict(dict)  # (L, s) -> {setting: why not timed}
    for L, s in models:
        p = paths(wd, L, s)
        if not (os.path.exists(p["onnx"]) and os.path.exists(p["ref"])):
            log("exporting BERT-base L=%d seq=%d (opset %d) ..." % (L, s, OPSET))
            timed_run([sys.executable, os.path.abspath(__file__), "--workdir", wd,
                       "--export", str(L), str(s)], "export")
        for n in [x for x in run_names if SETTINGS[x].kind == "attnc"]:
            log("attn-compile L=%d seq=%d (%s) ..." % (L, s, n))
            exe = p["stem"] + "." + n
            flags = {"attnc-bf16": ["--precision=bf16"],
                     "attnc-int8": ["--quantize=int8"]}.get(n, [])
            try:
                compile_s[(L, s)][n] = timed_run(
                    [args.attn_compile, p["onnx"], "--target=cpu", "-q", "-o", exe] + flags,
                    "attn-compile")
                exes[(L, s)][n] = exe
            except RunFailed as e:
                failures.append(str(e))
                bad[(L, s)][n] = "compile failed"
        files[(L, s)]["ort"] = p["onnx"]
        if "ort-opt" in peers or "ort-int8" in peers:
            # ONNX Runtime's transformer optimizer (what its docs prescribe for
            # BERT on CPU) fuses Attention, SkipLayerNormalization and BiasGelu,
            # which the session's ORT_ENABLE_ALL alone does not.
            log("onnxruntime.transformers optimizer L=%d seq=%d ..." % (L, s))
            try:
                t0 = time.perf_counter()
                files[(L, s)]["ort-opt"], fused[(L, s)] = optimize_for_ort(p)
                compile_s[(L, s)]["ort-opt"] = time.perf_counter() - t0
            except Exception as e:  # the optimizer raises anything on a model it cannot read
                failures.append("ORT transformer optimizer L=%d S=%d: %s: %s"
                                % (L, s, type(e).__name__, e))
                bad[(L, s)]["ort-opt"] = bad[(L, s)]["ort-int8"] = "optimizer failed"
        if "ort-int8" in peers and "ort-opt" in files[(L, s)]:
            log("onnxruntime.quantization.quantize_dynamic L=%d seq=%d ..." % (L, s))
            try:
                t0 = time.perf_counter()
                files[(L, s)]["ort-int8"] = quantize_for_ort(files[(L, s)]["ort-opt"], p)
                compile_s[(L, s)]["ort-int8"] = (time.perf_counter() - t0
                                                 + compile_s[(L, s)]["ort-opt"])
            except Exception as e:  # the quantizer raises anything it meets
                failures.append("ORT quantize_dynamic L=%d S=%d: %s: %s"
                                % (L, s, type(e).__name__, e))
                bad[(L, s)]["ort-int8"] = "quantization failed"
        if "iree" in peers:
            log("iree-import-onnx + iree-compile L=%d seq=%d ..." % (L, s))
            mlir, vmfb = p["stem"] + ".iree.mlir", p["stem"] + ".vmfb"
            try:
                t_imp = timed_run([_venv_tool("iree-import-onnx"), p["onnx"], "-o", mlir],
                                  "iree-import-onnx")
                compile_s[(L, s)]["iree"] = t_imp + timed_run(
                    [_venv_tool("iree-compile"), mlir, "--iree-hal-target-backends=llvm-cpu",
                     "--iree-llvmcpu-target-cpu=host", "-o", vmfb], "iree-compile")
                files[(L, s)]["iree"] = vmfb
            except RunFailed as e:
                failures.append(str(e))
                bad[(L, s)]["iree"] = "compile failed"
            if os.path.exists(mlir):
                os.remove(mlir)  # the weights as hex text: ~2.7x the .onnx

    # Per thread count: load, check outputs (first time), time -------------
    errors = collections.defaultdict(dict)   # (L, s) -> {setting: (rel err, cosine)}
    pair_err = {}     # (L, s) -> largest relative error between two f32 settings
    hellos, infos = {}, collections.defaultdict(dict)
    results = {}      # (L, s, t) -> {setting: [ms per round]}
    for t in threads:
        workers = {}
        for n in [x for x in peers if SETTINGS[x].kind != "attnc"]:
            log("starting %s worker, %d thread(s) ..." % (n, t))
            try:
                workers[n] = Worker(n, t, env_overrides, not kernels.get("mkl_f32"))
                hellos.setdefault(n, workers[n].hello)
            except RunFailed as e:
                failures.append("%s worker: %s" % (n, e))
                for m in models:
                    bad[m].setdefault(n, "worker failed")
        for n, w in workers.items():
            if SETTINGS[n].kind == "torch" and w.hello["threads"] != t:
                failures.append("%s runs %s threads, wanted %d" % (n, w.hello["threads"], t))
        for L, s in models:
            key = "L%d_S%d" % (L, s)
            p = paths(wd, L, s)
            live = {}
            for n, w in workers.items():
                if n in bad[(L, s)] or getattr(w, "dead", False):
                    continue
                log("loading %s L=%d seq=%d ..." % (n, L, s))
                rep = w.call(op="load", key=key, vmfb=files[(L, s)].get("iree"),
                             onnx=files[(L, s)].get(n), ids=p["ids"], mask=p["mask"],
                             stem=p["stem"], layers=L, seq=s, describe=(t == threads[0]),
                             timeout=args.compile_timeout if n == "torch-compile" else None)
                if "error" in rep:
                    bad[(L, s)][n] = "load failed: " + rep["error"][:300]
                    failures.append("%s L=%d S=%d: %s" % (n, L, s, rep["error"]))
                    continue
                infos[(L, s, t)][n] = rep
                live[n] = w

            est = {}
            log("checking outputs L=%d seq=%d ..." % (L, s))
            ref = np.load(p["ref"])
            outs = {}
            for n in [x for x in run_names if SETTINGS[x].kind == "attnc"]:
                if n in bad[(L, s)]:
                    continue
                o = p["stem"] + ".out.%s.npy" % n
                try:
                    t0 = time.perf_counter()
                    run_attnc(exes[(L, s)][n], p, t, out=o)
                    est[n] = (time.perf_counter() - t0) * 1e3
                    outs[n] = np.load(o)
                    os.remove(o)
                except RunFailed as e:
                    bad[(L, s)][n] = "run failed"
                    failures.append(str(e))
            for n, w in live.items():
                o = p["stem"] + ".out.%s.npy" % n
                rep = w.call(op="run", key=key, reps=1, warmup=1, out=o)
                if "error" in rep:
                    bad[(L, s)][n] = "run failed: " + rep["error"][:300]
                    failures.append("%s L=%d S=%d: %s" % (n, L, s, rep["error"]))
                    continue
                outs[n] = np.load(o)
                os.remove(o)
                est[n] = rep["ms"]
            for n, o in outs.items():
                e = (rel_err(o, ref), cosine(o, ref))
                if t == threads[0]:
                    errors[(L, s)][n] = e
                if SETTINGS[n].low:
                    ok_out = np.isfinite(o).all() and e[1] > 0.9
                else:
                    ok_out = e[0] <= args.tol
                if not ok_out:
                    bad[(L, s)][n] = "disagrees (rel err %.2g, cosine %.4f)" % e
                    failures.append("%s L=%d S=%d threads %d: output differs from PyTorch's: "
                                    "relative error %.3g, cosine %.5f" % ((n, L, s, t) + e))
            f32 = sorted(n for n in outs if not SETTINGS[n].low)
            pairs = [rel_err(outs[a], outs[b]) for a in f32 for b in f32 if a < b]
            if (L, s) in pair_err:
                pairs.append(pair_err[(L, s)])
            if pairs:
                pair_err[(L, s)] = max(pairs)
            if args.check:
                continue

            # Timing: attnc and the live peers in rotating order.
            timed = [n for n in run_names if n not in bad[(L, s)] and n in est]
            reps = {n: max(2, min(30, int(args.budget_ms / max(est[n], 1e-3)))) for n in timed}
            log("timing L=%d seq=%d threads=%d: %s, %d rounds ..."
                % (L, s, t, ", ".join("%s x%d" % (n, reps[n]) for n in timed), args.rounds))
            res = results[(L, s, t)] = {n: [] for n in timed}
            for r in range(args.rounds):
                order = timed[r % len(timed):] + timed[:r % len(timed)] if timed else []
                for n in order:
                    if n not in res:
                        continue
                    warm = 1 if reps[n] < 10 else 2
                    if SETTINGS[n].kind == "attnc":
                        try:
                            res[n].append(run_attnc(exes[(L, s)][n], p, t, reps[n], warm))
                        except RunFailed as e:
                            failures.append(str(e))
                            del res[n]
                    else:
                        rep = live[n].call(op="run", key=key, reps=reps[n], warmup=warm)
                        if "error" in rep:
                            failures.append("%s: %s" % (n, rep["error"]))
                            del res[n]
                        else:
                            res[n].append(rep["ms"])
            for n, w in live.items():
                if not getattr(w, "dead", False):
                    w.call(op="drop", key=key)
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
        for suffix in (".attnc", ".attnc.safetensors", ".attnc-bf16", ".attnc-bf16.safetensors",
                       ".attnc-int8", ".attnc-int8.safetensors",
                       ".vmfb", ".ort.onnx", ".ort-int8.onnx"):
            if os.path.exists(stem + suffix):
                os.remove(stem + suffix)
    print_report(args, threads, models, run_names, missing, blas, env_overrides, hellos, infos,
                 compile_s, errors, pair_err, bad, results, load0, t_start, fused, iree_version,
                 kernels)
    return exit_status(failures)


if __name__ == "__main__":
    if "--worker" not in sys.argv and "--export" not in sys.argv:
        _reexec_in_venv()
    try:
        sys.exit(main())
    except RunFailed as e:
        print("peers: FAILED: %s" % e, file=sys.stderr)
        sys.exit(1)
