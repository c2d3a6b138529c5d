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
import json
import os
import re
import selectors
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from workers import RunFailed, WorkerProcess, exit_status, median_ms, serve  # noqa: E402
ROOT = os.path.dirname(HERE)
DEFAULT_VENV = os.path.join(ROOT, ".venv-peers")
MODEL_TAG = "hfbert-ts-v2"  # bump when the model, its parameters or the export change
SEED = 1234
OPSET = 17
D, HEADS, DFF, VOCAB = 768, 12, 3072, 30522
PEER_IDLE_S = 0.25  # let a worker's threads stop spinning before the next peer runs


class Setting(collections.namedtuple("Setting", "name kind title precision")):
    @property
    def low(self):
        return self.precision != "f32"


SETTINGS = collections.OrderedDict((s.name, s) for s in [
    Setting("attnc", "attnc", "attnc", "f32"),
    Setting("attnc-bf16", "attnc", "attnc --precision=bf16", "bf16"),
    Setting("attnc-int8", "attnc", "attnc --quantize=int8", "int8 dynamic"),
    Setting("ort", "ort", "ONNX Runtime (session optimizations only)", "f32"),
    Setting("ort-opt", "ort", "ONNX Runtime + transformers optimizer", "f32"),
    Setting("ort-int8", "ort", "ONNX Runtime + optimizer + quantize_dynamic", "int8 dynamic"),
    Setting("iree", "iree", "IREE llvm-cpu", "f32"),
    Setting("torch-eager", "torch", "PyTorch eager", "f32"),
    Setting("torch-sdpa", "torch", "PyTorch SDPA", "f32"),
    Setting("torch-compile", "torch", "PyTorch SDPA + torch.compile", "f32"),
    Setting("torch-bf16", "torch", "PyTorch SDPA, bf16 autocast", "bf16 autocast"),
])
PEERS = [n for n in SETTINGS if n != "attnc"]
MODULES = {"attnc": (), "ort": ("onnxruntime", "onnx"), "iree": ("iree.compiler", "iree.runtime"),
           "torch": ("torch", "transformers")}


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
# The model: HF BertModel, seeded
# ---------------------------------------------------------------------------

def build_bert(layers, attn="eager"):
    import torch
    from transformers import BertConfig, BertModel

    cfg = BertConfig(vocab_size=VOCAB, hidden_size=D, num_hidden_layers=layers,
                     num_attention_heads=HEADS, intermediate_size=DFF, hidden_act="gelu",
                     layer_norm_eps=1e-12, attn_implementation=attn)
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

    class Encoder(torch.nn.Module):
        # transformers 5's forward takes its options as keywords; the
        # TorchScript exporter passes positional arguments.
        def __init__(self, bert):
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask):
            return self.bert(input_ids=input_ids,
                             attention_mask=attention_mask).last_hidden_state

    p = paths(wd, layers, seq)
    ids, mask = model_inputs(seq)
    np.save(p["ids"], ids)
    np.save(p["mask"], mask)
    model = Encoder(build_bert(layers))
    args = (torch.from_numpy(ids), torch.from_numpy(mask))
    with torch.no_grad():
        ref = model(*args).numpy()
        tmp = p["onnx"] + ".tmp"
        torch.onnx.export(model, args, tmp, input_names=["input_ids", "attention_mask"],
                          output_names=["last_hidden_state"], opset_version=OPSET,
                          do_constant_folding=True, dynamo=False)
    np.save(p["ref"], ref)
    os.replace(tmp, p["onnx"])


# ---------------------------------------------------------------------------
# Peer workers: one process per setting and thread count, JSON lines on stdio
# ---------------------------------------------------------------------------

def _ort_worker(setting, threads):
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
            # What ORT's session made of the graph: its operators, counted.
            so = options()
            so.optimized_model_filepath = req["stem"] + ".%s-session.onnx" % setting
            ort.InferenceSession(req["onnx"], so, providers=["CPUExecutionProvider"])
            g = onnx.load(so.optimized_model_filepath, load_external_data=False).graph
            info["ops"] = dict(collections.Counter(n.op_type for n in g.node))
            for f in os.listdir(os.path.dirname(so.optimized_model_filepath)):
                if f.startswith(os.path.basename(so.optimized_model_filepath)):
                    os.remove(os.path.join(os.path.dirname(so.optimized_model_filepath), f))
        return (lambda: sess.run(None, feeds)[0]), info

    hello = {"version": ort.__version__, "providers": ort.get_available_providers()}
    return hello, load


def _iree_worker(setting, threads):
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


def _torch_worker(setting, threads):
    import numpy as np
    import torch
    import transformers

    sys.path.insert(0, HERE)
    import openblas_kernel as ok

    torch.set_num_threads(threads)
    a = torch.ones(64, 64)
    a @ a  # load the BLAS before asking which kernels it chose
    cfg = torch.__config__.show()
    cap = ""
    for line in cfg.splitlines():
        if "CPU capability usage" in line:
            cap = line.split(":", 1)[1].strip()
    m = re.search(r"BLAS_INFO=(\w+)", cfg)
    attn = "eager" if setting == "torch-eager" else "sdpa"
    models, compiled = {}, {}

    def load(req):
        t0 = time.perf_counter()
        if req["layers"] not in models:
            models[req["layers"]] = build_bert(req["layers"], attn)
        model = models[req["layers"]]
        ids = torch.from_numpy(_npload(req["ids"]))
        mask = torch.from_numpy(_npload(req["mask"]))
        info = {}
        if setting == "torch-compile":
            # One compiled module per shape (static), compiled by its first call.
            fwd = compiled[req["key"]] = torch.compile(model)
            with torch.no_grad():
                fwd(input_ids=ids, attention_mask=mask)
            info["compile_s"] = time.perf_counter() - t0
        else:
            fwd = model

        def run():
            with torch.no_grad():
                if setting == "torch-bf16":
                    with torch.autocast("cpu", dtype=torch.bfloat16):
                        y = fwd(input_ids=ids, attention_mask=mask).last_hidden_state
                    return y.float().numpy()
                return fwd(input_ids=ids, attention_mask=mask).last_hidden_state.numpy()
        info["load_s"] = time.perf_counter() - t0
        return run, info

    libs = ok.loaded_openblas()
    hello = {"version": torch.__version__, "transformers": transformers.__version__,
             "threads": torch.get_num_threads(), "aten_capability": cap, "openblas": libs,
             "blas": m.group(1) if m else "?", "mkldnn": torch.backends.mkldnn.is_available(),
             "fallback": (m is None or m.group(1) != "mkl") and any(
                 ok.is_fallback(lib["corename"]) for lib in libs),
             "numpy": np.__version__, "wait_policy": os.environ.get("OMP_WAIT_POLICY")}
    return hello, load


def _npload(path):
    import numpy as np
    return np.load(path)


def worker_main(setting, threads):
    import numpy as np
    kind = SETTINGS[setting].kind
    hello, load = {"ort": _ort_worker, "iree": _iree_worker,
                   "torch": _torch_worker}[kind](setting, threads)
    runs = {}

    def handle(req):
        if req["op"] == "load":
            runs[req["key"]], rep = load(req)
            return rep
        if req["op"] == "drop":
            runs.pop(req["key"], None)
            return {}
        fn = runs[req["key"]]
        rep = {"ms": median_ms(fn, req["reps"], req["warmup"])}
        if req.get("out"):
            np.save(req["out"], np.asarray(fn()))
        time.sleep(PEER_IDLE_S)
        return rep

    serve(hello, handle)


class Worker(WorkerProcess):
    def __init__(self, setting, threads, env_overrides, passive_torch):
        # OMP_WAIT_POLICY=PASSIVE only for a torch whose GEMMs run on
        # OpenBLAS's own threads (Debian's); torch on MKL keeps its default.
        super().__init__(__file__, ["--worker", setting, "--threads", str(threads)], threads,
                         torch=(SETTINGS[setting].kind == "torch" and passive_torch),
                         env_overrides=env_overrides)
        if "error" in self.hello:
            raise RunFailed(self.hello["error"])

    def call(self, timeout=None, **req):
        """The worker's reply, or {"error": ...} after `timeout` seconds (the
        worker is then killed: a torch.compile that does not finish)."""
        if timeout is None:
            return self.request(**req)
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stdout, selectors.EVENT_READ)
        if not sel.select(timeout):
            self.proc.kill()
            self.proc.wait()
            self.dead = True
            return {"error": "no reply in %d s (stopped)" % timeout}
        return self.read()

    def close(self, timeout=60):
        if getattr(self, "dead", False):
            return
        super().close(timeout)


def kernel_probe():
    """Which kernels PyTorch's f32 and bf16 Linear layers run: MKL's and
    oneDNN's verbose lines, read in a child process (their output goes to
    stdout, which the workers use for replies)."""
    code = r"""
import torch
torch.set_num_threads(1)
x, w = torch.randn(128, 768), torch.randn(3072, 768)
torch.nn.functional.linear(x, w)
with torch.autocast("cpu", dtype=torch.bfloat16):
    torch.nn.functional.linear(x, w)
"""
    env = dict(os.environ, MKL_VERBOSE="1", ONEDNN_VERBOSE="1", DNNL_VERBOSE="1")
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             env=env, timeout=120).stdout
    except (OSError, subprocess.TimeoutExpired) as e:
        return {"error": str(e)}
    rep = {"mkl": None, "mkl_f32": None, "onednn": None, "onednn_isa": None,
           "onednn_bf16": None}
    for ln in out.splitlines():
        if ln.startswith("MKL_VERBOSE") and "Intel(R)" in ln and rep["mkl"] is None:
            rep["mkl"] = ln[len("MKL_VERBOSE"):].strip()
        elif ln.startswith("MKL_VERBOSE") and "GEMM" in ln and rep["mkl_f32"] is None:
            rep["mkl_f32"] = ln.split()[1].split("(")[0]
        elif ln.startswith("onednn_verbose"):
            f = ln.split(",")
            if "oneDNN" in ln and rep["onednn"] is None:
                rep["onednn"] = ln.split("oneDNN", 1)[1].split(",")[0].strip()
            elif "isa:" in ln and rep["onednn_isa"] is None:
                rep["onednn_isa"] = ln.split("isa:", 1)[1].strip()
            elif len(f) > 6 and f[-1] and ("exec" in f and "matmul" in f or "inner_product" in f):
                impl = [x for x in f if ":" in x and ("avx" in x or "amx" in x or "ref" in x)]
                if impl and rep["onednn_bf16"] is None:
                    rep["onednn_bf16"] = impl[0]
    return rep


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


def host_flags():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    return set()


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


def md_row(cells):
    """One row of a Markdown table."""
    print("| " + " | ".join(cells) + " |")


def md_head(cells):
    """A Markdown table's header row and its rule."""
    md_row(cells)
    print("|" + "---|" * len(cells))


def lscpu_model():
    try:
        for ln in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
            if ln.startswith("Model name:"):
                return ln.split(":", 1)[1].strip()
    except OSError:
        pass
    return "?"


def print_report(args, threads, models, run_names, missing, blas, env_overrides, hellos, infos,
                 compile_s, errors, pair_err, bad, results, load0, t_start, fused, iree_version,
                 kernels):
    try:
        head = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True).stdout.strip()
    except OSError:
        head = "?"
    flags = host_flags()
    load1 = os.getloadavg()
    first = models[0]
    th = hellos.get(next((n for n in run_names if SETTINGS[n].kind == "torch"), ""), {})
    ort_v = next((h["version"] for n, h in hellos.items() if SETTINGS[n].kind == "ort"), "?")
    bf16_hw = "avx512_bf16" in flags
    vnni = "avx512_vnni" in flags
    mkl_gemm = kernels.get("mkl_f32")
    lib = {
        "attnc": "attnc's generated code (MLIR -> LLVM, AVX-512 GEMM microkernels), OpenMP",
        "attnc-bf16": "attnc's generated code, bf16 GEMMs on %s" % (
            "AVX512-BF16 vdpbf16ps" if bf16_hw else "AVX-512 (bf16 widened in registers)"),
        "attnc-int8": "attnc's generated code, u8 x s8 GEMMs on %s" % (
            "AVX512-VNNI vpdpbusd" if vnni else "scalar loops (no VNNI)"),
        "ort": "MLAS (ORT's own), ORT_ENABLE_ALL fusions",
        "ort-opt": "MLAS + ORT contrib ops (fused Attention, SkipLayerNorm, BiasGelu)",
        "ort-int8": "MLAS int8 U8S8 GEMM%s" % (" (host has AVX512-VNNI)" if vnni else ""),
        "iree": "IREE-generated code (llvm-cpu, host CPU)",
        "torch-eager": "MKL %s (Linear), ATen" % (mkl_gemm or "?"),
        "torch-sdpa": "MKL %s (Linear), ATen SDPA" % (mkl_gemm or "?"),
        "torch-compile": "inductor C++/OpenMP kernels + MKL %s" % (mkl_gemm or "?"),
        "torch-bf16": "oneDNN %s (Linear)" % (kernels.get("onednn_bf16") or "?"),
    }
    if th and th.get("blas") != "mkl":
        for n in ("torch-eager", "torch-sdpa", "torch-compile"):
            lib[n] = "%s (Linear), ATen" % th.get("blas", "?")

    def in_ratios(n):
        if SETTINGS[n].kind != "torch":
            return True
        h = hellos.get(n, {})
        return (h.get("version", "0").split(".")[0] not in ("0", "1")
                and not h.get("fallback"))

    print("attnc vs CPU peers on one ONNX export of HF BertModel (BERT-base: hidden 768, 12 heads, "
          "FFN 3072, batch 1, opset %d TorchScript export, random seeded weights)" % OPSET)
    print("%s; %s, %d CPUs (%s); load average at start %.2f, at end %.2f; attnc %s; "
          "Python environment %s"
          % (time.strftime("%Y-%m-%d %H:%M %Z"), lscpu_model(), os.cpu_count(),
             " ".join(f for f in ("avx512f", "avx512_bf16", "avx512_vnni", "amx_bf16")
                      if f in flags), load0[0], load1[0], head, sys.prefix))
    if max(load0[0], load1[0]) > 0.5 * os.cpu_count():
        print("WARNING: other processes kept the CPUs busy (load average above half the CPU "
              "count): read the ratios, and treat 2-thread ones with care.")
    print()
    print("Peers (versions, kernel libraries):")
    print("- attnc: `attn-compile model.onnx --target=cpu` (host CPU) and with `--precision=bf16`; "
          "OMP_NUM_THREADS=N; timed by the executable's --bench (inference only)")
    for n in PEERS:
        if n in missing:
            print("- %s: not installed (%s)" % (n, missing[n]))
        elif n not in run_names:
            print("- %s: not selected (--peers)" % n)
        elif n not in hellos and SETTINGS[n].kind != "attnc":
            print("- %s: worker failed to start" % n)
    if any(SETTINGS[n].kind == "ort" for n in hellos):
        print("- ONNX Runtime %s, CPUExecutionProvider (MLAS), sessions ORT_ENABLE_ALL, "
              "intra_op_num_threads=N, inter_op 1, sequential; timed around "
              "InferenceSession.run" % ort_v)
        f = fused.get(first)
        if f is not None:
            print("  - transformers optimizer (model_type bert) fused (L=%d): %s"
                  % (first[0], ", ".join("%s %d" % kv for kv in sorted(f.items())) or "none"))
        for n in ("ort", "ort-opt", "ort-int8"):
            ops = infos.get(first + (threads[0],), {}).get(n, {}).get("ops")
            if ops:
                print("  - graph the %s session runs (L=%d): %s"
                      % (n, first[0], ", ".join("%s %d" % kv for kv in sorted(ops.items()))))
    if "iree" in hellos:
        print("- IREE runtime %s, compiler %s: iree-import-onnx, iree-compile "
              "--iree-hal-target-backends=llvm-cpu --iree-llvmcpu-target-cpu=host; local-task "
              "driver, --task_topology_group_count=N; timed around the call and to_host()"
              % (hellos["iree"]["version"], iree_version))
    if th:
        print("- PyTorch %s (transformers %s, BertModel, torch.no_grad, torch.set_num_threads(N), "
              "OMP_WAIT_POLICY=%s): BLAS %s%s; oneDNN %s (%s); ATen CPU capability %s%s"
              % (th["version"], th["transformers"], th["wait_policy"], th["blas"],
                 " (%s)" % kernels["mkl"] if kernels.get("mkl") else "",
                 kernels.get("onednn") or "?", kernels.get("onednn_isa") or "?",
                 th["aten_capability"],
                 "" if in_ratios(next(n for n in hellos if SETTINGS[n].kind == "torch"))
                 else "; NOT IN THE RATIOS (torch 1.x or an OpenBLAS fallback kernel)"))
        print("  - probed kernels: f32 Linear -> %s; bf16 autocast Linear -> oneDNN %s"
              % ("MKL " + mkl_gemm if mkl_gemm else "?", kernels.get("onednn_bf16") or "?"))
        tc = [infos.get(m + (threads[0],), {}).get("torch-compile", {}).get("compile_s")
              for m in models]
        if any(tc):
            print("  - torch.compile (inductor, default mode) compile time at the first call: %s"
                  % ", ".join("L=%d S=%d %.0f s" % (m + (c,)) for m, c in zip(models, tc) if c))
    print("- OpenBLAS check (numpy, and torch if it loads OpenBLAS): %s%s"
          % (blas["note"], "" if not env_overrides else " (peer environment: %s)" % env_overrides))
    print()

    names = [n for n in run_names]
    print("Outputs against PyTorch's f32 output at export: relative error max|y - ref| / "
          "max|ref| and cosine similarity (f32 settings must be within %g); last row: the "
          "largest relative error between two f32 settings" % args.tol)
    md_head(["setting", "precision"] + [
        c for m in models for c in ("L%d S%d rel err" % m, "cosine")])
    for n in names:
        cells = []
        for m in models:
            e = errors.get(m, {}).get(n)
            cells += (["%.1e" % e[0], "%.6f" % e[1]] if e else [bad[m].get(n, "-"), "-"])
        md_row([n, SETTINGS[n].precision] + cells)
    print("| max pairwise (f32) | | %s |" % " | ".join(
        x for m in models for x in ("%.1e" % pair_err[m] if m in pair_err else "-", "")))
    print()

    print("Preparation (s, at the first thread count): attn-compile (import to linked "
          "executable); ORT's transformer optimizer (+ quantize_dynamic) and session creation; "
          "iree-import-onnx + iree-compile; torch.compile's first call (tracing, inductor, C++ "
          "compilation); PyTorch's model build (once per layer count: 0.0 at the second shape)")
    md_head(["setting"] + ["L%d S%d" % m for m in models])
    for n in names:
        cells = []
        for m in models:
            v = compile_s.get(m, {}).get(n, 0.0)
            rep = infos.get(m + (threads[0],), {}).get(n, {})
            v += rep.get("load_s", 0.0)
            cells.append("%.1f" % v if v else bad[m].get(n, "-"))
        md_row([n] + cells)
    print()
    if args.check:
        print("--check: outputs only, nothing timed (total %.0f s)" % (time.time() - t_start))
        return

    cfgs = [m + (t,) for m in models for t in threads]
    print("Latency: ms (median over %d rounds of each run's median) and ratio = attnc / this "
          "row (attnc f32 for f32 rows, attnc bf16 for bf16/int8 rows; median over rounds, "
          "range); < 1 means attnc is faster" % args.rounds)
    md_head(["setting", "precision", "kernels"] + [
        x for c in cfgs for x in ("L%d S%d T%d ms" % c, "ratio")])
    fastest = {}   # (cfg, low) -> (name, runs)
    for n in names:
        cells = []
        for c in cfgs:
            res = results.get(c, {})
            v = res.get(n)
            if not v:
                cells += [bad[c[:2]].get(n, "failed"), "-"]
                continue
            base = res.get("attnc-bf16" if SETTINGS[n].low else "attnc")
            if SETTINGS[n].kind == "attnc":
                ratio = "-"
            elif not in_ratios(n):
                ratio = "not in ratios"
            elif not base:
                ratio = "-"
            else:
                ratio = fmt_ratio([x / y for x, y in zip(base, v)])
            if SETTINGS[n].kind != "attnc" and in_ratios(n):
                k = (c, SETTINGS[n].low)
                if k not in fastest or statistics.median(v) < statistics.median(fastest[k][1]):
                    fastest[k] = (n, v)
            cells += ["%.1f" % statistics.median(v), ratio]
        md_row([n, SETTINGS[n].precision, lib[n]] + cells)

    def summary(label, num, den_of):
        cells = []
        for c in cfgs:
            a = results.get(c, {}).get(num)
            d = den_of(c)
            if a and d:
                cells += ["", "%s%s" % (fmt_ratio([x / y for x, y in zip(a, d[1])]),
                                        " (%s)" % d[0] if d[0] else "")]
            else:
                cells += ["", "-"]
        print("| **%s** | | | %s |" % (label, " | ".join(cells)))

    summary("attnc f32 / fastest f32 peer", "attnc", lambda c: fastest.get((c, False)))
    if "attnc-bf16" in names:
        summary("attnc bf16 / fastest bf16-int8 peer", "attnc-bf16",
                lambda c: fastest.get((c, True)))
        summary("attnc bf16 speed-up: attnc f32 / attnc bf16", "attnc",
                lambda c: (("", results[c]["attnc-bf16"])
                           if results.get(c, {}).get("attnc-bf16") else None))
    if "attnc-int8" in names and "ort-int8" in names:
        summary("attnc int8 / ORT int8", "attnc-int8",
                lambda c: (("", results[c]["ort-int8"])
                           if results.get(c, {}).get("ort-int8") else None))
    if 1 in threads and len(threads) > 1:
        print()
        print("Thread scaling: 1-thread latency / N-thread latency (medians above)")
        multi = [m + (t,) for m in models for t in threads if t != 1]
        md_head(["setting"] + ["L%d S%d N=%d" % c for c in multi])
        for n in names:
            cells = []
            for c in multi:
                r1, rn = results.get(c[:2] + (1,), {}).get(n), results.get(c, {}).get(n)
                cells.append("%.2f" % (statistics.median(r1) / statistics.median(rn))
                             if r1 and rn else "-")
            md_row([n] + cells)
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
