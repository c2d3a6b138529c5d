"""peers.py's peer workers: one process per setting and thread count (peers.py
--worker), speaking JSON lines on stdio, and the probe of PyTorch's kernels."""

import collections
import json
import os
import re
import selectors
import subprocess
import sys
import time

from peers_model import SETTINGS, build_bert
from workers import RunFailed, WorkerProcess, median_ms, serve

HERE = os.path.dirname(os.path.abspath(__file__))
# The workers are peers.py itself, started with --worker.
PEERS_SCRIPT = os.path.join(HERE, "peers.py")
PEER_IDLE_S = 0.25  # let a worker's threads stop spinning before the next peer runs


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
        super().__init__(PEERS_SCRIPT, ["--worker", setting, "--threads", str(threads)], threads,
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
