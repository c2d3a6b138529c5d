#!/usr/bin/python3
"""CPU benchmarks: attnc against OpenBLAS and PyTorch eager on this machine.

    /usr/bin/python3 bench/cpu_bench.py [--threads 1,2] [--rounds N]
                                        [--no-breakdown] [--workdir DIR]

1. FMA peak: bench/fma_peak.c (cc -O3 -march=native -fopenmp), f32 zmm FMAs,
   16 independent accumulators, 1 and 2 threads.
2. GEMM y = x W^T (W [N,K], PyTorch Linear layout) at the BERT-base layer
   shapes, M = 128 and 512: attnc (`attn.linear`, compiled by attn-compile)
   against OpenBLAS sgemm (numpy matmul, whose loaded BLAS is checked to be
   OpenBLAS; ctypes cblas_sgemm otherwise).
3. One BERT-base layer (post-LN, batch 1, f32) at seq 128 and 512: attnc
   against the same layer written with PyTorch eager ops, same weights, same
   threads; outputs must agree to 1e-4 relative.
4. (unless --no-breakdown) the layer's ops compiled alone (attn.linear,
   attn.mha, attn.sdpa, attn.ffn, attn.layer_norm) against their PyTorch
   equivalents, to show where attnc's time goes.

Other processes may share the machine, so every attnc figure is paired with
its peer measured right before or after it (the order alternates per round);
the table reports the median over rounds of each side's per-round median and
the range of the per-round ratios. Exits non-zero if a run fails or an output
check fails.
"""

import argparse
import ctypes
import os
import platform
import re
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, os.path.join(ROOT, "test", "reference"))
import openblas_kernel  # noqa: E402
from workers import RunFailed, WorkerProcess, exit_status, median_ms, serve  # noqa: E402
import tensorio  # noqa: E402

GEMM_KN = ((768, 768), (768, 3072), (3072, 768))
GEMM_M = (128, 512)
SEQS = (128, 512)
TOL = 1e-4
PEER_IDLE_S = 0.25  # let a worker's BLAS / OpenMP threads stop spinning before the next run

LAT_RE = re.compile(r"latency: mean ([0-9.eE+-]+) ms, median ([0-9.eE+-]+) ms")




# ---------------------------------------------------------------------------
# Peer workers (one process per library and thread count; JSON lines on stdio)
# ---------------------------------------------------------------------------

def _loaded_blas():
    libs = []
    with open("/proc/self/maps") as f:
        for line in f:
            p = line.split()[-1]
            if ("blas" in p or "mkl" in p) and p not in libs:
                libs.append(p)
    return libs


def _openblas_info(libs):
    for p in libs:
        if "openblas" in os.path.basename(p):
            lib = ctypes.CDLL(p)
            lib.openblas_get_config.restype = ctypes.c_char_p
            return p, lib.openblas_get_num_threads(), lib.openblas_get_config().decode()
    return None, None, None


def worker_blas(workdir, threads):
    """numpy (OpenBLAS) sgemm: y = x @ w.T with w [N,K]."""
    a = np.ones((64, 64), np.float32)
    a @ a.T
    libs = _loaded_blas()
    path, nthreads, config = _openblas_info(libs)
    via = "numpy.matmul"
    sgemm = None
    if path is None:  # numpy is not on OpenBLAS: call cblas_sgemm from libopenblas directly
        for cand in ("libopenblas.so.0", "libopenblas.so"):
            try:
                ob = ctypes.CDLL(cand)
                break
            except OSError:
                ob = None
        if ob is None:
            raise SystemExit("no OpenBLAS found: numpy is not built on it and "
                             "libopenblas.so.0 is not installed (scripts/setup.sh "
                             "--bench installs libopenblas0-pthread)")
        ob.openblas_set_num_threads(threads)
        path, nthreads, config = _openblas_info(_loaded_blas())
        sgemm = ob.cblas_sgemm
        via = "ctypes cblas_sgemm"
    cache = {}

    def handle(req):
        m, k, n = req["m"], req["k"], req["n"]
        if (m, k, n) not in cache:
            x = np.load(os.path.join(workdir, f"gemm_x_{m}x{k}.npy"))
            w = tensorio.read_safetensors(os.path.join(workdir, f"gemm_w_{n}x{k}.safetensors"))["w"]
            cache[(m, k, n)] = (np.ascontiguousarray(x), np.ascontiguousarray(w),
                                np.empty((m, n), np.float32))
        x, w, y = cache[(m, k, n)]
        if sgemm is None:
            wt = w.T
            fn = lambda: np.matmul(x, wt, out=y)  # noqa: E731
        else:
            P = ctypes.c_void_p
            args = (101, 111, 112, m, n, k, ctypes.c_float(1.0), P(x.ctypes.data), k,
                    P(w.ctypes.data), k, ctypes.c_float(0.0), P(y.ctypes.data), n)
            fn = lambda: sgemm(*args)  # noqa: E731
        ms = median_ms(fn, req["reps"], req["warmup"])
        if req.get("out"):
            np.save(req["out"], y)
        return {"ms": ms}

    hello = {"blas": path, "blas_threads": nthreads, "blas_config": config, "via": via,
             "libs": libs, "openblas": openblas_kernel.loaded_openblas()}
    return hello, handle


def worker_torch(workdir, threads):
    import torch
    import torch.nn.functional as F

    torch.set_num_threads(threads)
    W = {k: torch.from_numpy(v) for k, v in
         tensorio.read_safetensors(os.path.join(workdir, "bert1.safetensors")).items()}
    p = "encoder.layer.0."
    g = lambda name: W[p + name]  # noqa: E731
    H, DH = 12, 64

    def attention(x):
        B, S, D = x.shape

        def heads(t):
            return t.view(B, S, H, DH).transpose(1, 2)
        q = heads(F.linear(x, g("attention.self.query.weight"), g("attention.self.query.bias")))
        k = heads(F.linear(x, g("attention.self.key.weight"), g("attention.self.key.bias")))
        v = heads(F.linear(x, g("attention.self.value.weight"), g("attention.self.value.bias")))
        o = sdpa(q, k, v).transpose(1, 2).reshape(B, S, D)
        return F.linear(o, g("attention.output.dense.weight"), g("attention.output.dense.bias"))

    def sdpa(q, k, v):
        return torch.matmul(torch.softmax(torch.matmul(q, k.transpose(-1, -2)) / 8.0, dim=-1), v)

    def ffn(x):
        h = F.gelu(F.linear(x, g("intermediate.dense.weight"), g("intermediate.dense.bias")))
        return F.linear(h, g("output.dense.weight"), g("output.dense.bias"))

    def ln(x, which):
        return F.layer_norm(x, (x.shape[-1],), g(which + ".weight"), g(which + ".bias"), 1e-12)

    def layer(x):
        h = ln(x + attention(x), "attention.output.LayerNorm")
        return ln(h + ffn(h), "output.LayerNorm")

    fns = {
        "bert": layer,
        "linear 768x768+b": lambda x: F.linear(x, g("attention.self.query.weight"),
                                               g("attention.self.query.bias")),
        "mha (q/k/v/o+sdpa)": attention,
        "sdpa 12x64": sdpa,
        "ffn 768-3072-768": ffn,
        "layer_norm": lambda x: ln(x, "attention.output.LayerNorm"),
    }

    def handle(req):
        args = [torch.from_numpy(np.load(f)) for f in req["inputs"]]
        fn = fns[req["fn"]]
        with torch.no_grad():
            ms = median_ms(lambda: fn(*args), req["reps"], req["warmup"])
            if req.get("out"):
                np.save(req["out"], fn(*args).numpy())
        return {"ms": ms}

    a = torch.ones(64, 64)
    a @ a  # load the BLAS before asking which kernels it chose
    hello = {"torch": torch.__version__, "torch_threads": torch.get_num_threads(),
             "libs": _loaded_blas(), "openblas": openblas_kernel.loaded_openblas()}
    return hello, handle


def worker_main(kind, workdir, threads):
    hello, handle = (worker_blas if kind == "blas" else worker_torch)(workdir, threads)

    def handle_and_idle(req):
        try:
            return handle(req)
        finally:
            time.sleep(PEER_IDLE_S)

    serve(hello, handle_and_idle)


class Worker(WorkerProcess):
    def __init__(self, kind, workdir, threads, env_overrides=None):
        super().__init__(__file__, ["--worker", kind, "--workdir", workdir,
                                    "--threads", str(threads)],
                         threads, torch=(kind == "torch"), env_overrides=env_overrides)

    def call(self, **req):
        rep = self.request(**req)
        if "error" in rep:
            raise RunFailed("peer: " + rep["error"])
        return rep["ms"]

    def close(self):
        super().close(timeout=30)


# ---------------------------------------------------------------------------
# attnc side
# ---------------------------------------------------------------------------

def compile_model(compiler, mlir_text, path):
    src = path + ".mlir"
    with open(src, "w") as f:
        f.write(mlir_text)
    r = subprocess.run([compiler, src, "--target=cpu", "-q", "-o", path],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RunFailed("attn-compile %s failed (rc %d):\n%s" % (src, r.returncode, r.stderr))


def run_attnc(exe, weights, inputs, threads, reps=0, warmup=1, out=None, timeout=600):
    cmd = [exe, "--weights", weights]
    for i in inputs:
        cmd += ["--input", i]
    if out:
        cmd += ["--output", out]
    if reps:
        cmd += ["--bench", str(reps), "--warmup", str(warmup)]
    cmd.append("-q")
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    if r.returncode != 0:
        raise RunFailed("%s failed (rc %d):\n%s%s" % (" ".join(cmd), r.returncode,
                                                      r.stdout[-2000:], r.stderr[-2000:]))
    if not reps:
        return None
    m = LAT_RE.search(r.stdout)
    if not m:
        raise RunFailed("no latency line from %s:\n%s" % (exe, r.stdout[-2000:]))
    return float(m.group(2))


def rel_err(a, ref):
    err = float(np.max(np.abs(a.astype(np.float64) - ref.astype(np.float64))))
    return err, err / max(float(np.max(np.abs(ref))), 1e-30)


# ---------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------

def fma_peak(workdir):
    exe = os.path.join(workdir, "fma_peak")
    cc = os.environ.get("CC", "cc")
    subprocess.run([cc, "-O3", "-march=native", "-fopenmp", os.path.join(HERE, "fma_peak.c"),
                    "-o", exe], check=True)
    out = subprocess.run([exe, "1", "2"], check=True, capture_output=True, text=True).stdout
    found = re.findall(r"fma threads=(\d+) gflops=([0-9.]+) cpu_gflops=([0-9.]+)", out)
    if len(found) != 2:
        raise RunFailed("fma_peak printed:\n" + out)
    return {int(t): (float(g), float(c)) for t, g, c in found}


def cpu_name():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds for the GEMMs")
    ap.add_argument("--layer-rounds", type=int, default=3,
                    help="interleaved rounds for the BERT layer and the op breakdown")
    ap.add_argument("--no-breakdown", action="store_true", help="skip the per-op breakdown")
    ap.add_argument("--workdir", default=os.path.join(ROOT, "build", "bench-cpu"))
    ap.add_argument("--attn-compile", default=os.path.join(ROOT, "build", "bin", "attn-compile"))
    ap.add_argument("--worker", choices=("blas", "torch"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    threads = [int(t) for t in args.threads.split(",")]
    wd = os.path.abspath(args.workdir)
    if args.worker:
        return worker_main(args.worker, wd, threads[0])

    import bench_models as bm
    import make_weights as mw

    t_start = time.time()
    os.makedirs(wd, exist_ok=True)
    load0 = os.getloadavg()
    log = lambda *a: print(*a, file=sys.stderr, flush=True)  # noqa: E731
    failures = []
    rows = []  # (section, case, thr, attnc, peer, ratio, ratio_range, unit, extra)

    # 1. FMA peak ----------------------------------------------------------
    log("FMA peak ...")
    peak = fma_peak(wd)
    # The FMA units' rate per core: FLOPs per second of thread CPU time, which
    # preemption by other processes does not lower (wall-clock figures do).
    nominal = lambda t: t * max(peak[1])  # noqa: E731

    # Inputs and weights ---------------------------------------------------
    log("writing inputs and weights ...")
    rng = np.random.default_rng(1234)
    for k, n in GEMM_KN:
        tensorio.write_safetensors(os.path.join(wd, f"gemm_w_{n}x{k}.safetensors"),
                                   {"w": (0.05 * rng.standard_normal((n, k))).astype(np.float32)})
    for m in GEMM_M:
        for k in sorted({k for k, _ in GEMM_KN}):
            np.save(os.path.join(wd, f"gemm_x_{m}x{k}.npy"),
                    rng.standard_normal((m, k)).astype(np.float32))
    W, _ = mw.make_weights("bert", 0, layers=1)
    bert_w = os.path.join(wd, "bert1.safetensors")
    tensorio.write_safetensors(bert_w, W)
    for s in SEQS:
        np.save(os.path.join(wd, f"x_{s}.npy"), rng.standard_normal((1, s, 768)).astype(np.float32))
        for n in "qkv":
            np.save(os.path.join(wd, f"{n}_{s}.npy"),
                    rng.standard_normal((1, 12, s, 64)).astype(np.float32))

    # attnc models ---------------------------------------------------------
    log("compiling attnc models ...")
    exes = {}
    for m in GEMM_M:
        for k, n in GEMM_KN:
            exes[("gemm", m, k, n)] = os.path.join(wd, f"gemm_{m}x{k}x{n}")
            compile_model(args.attn_compile, bm.gemm(m, k, n), exes[("gemm", m, k, n)])
    for s in SEQS:
        exes[("bert", s)] = os.path.join(wd, f"bert_layer_{s}")
        compile_model(args.attn_compile, bm.bert_layer(s), exes[("bert", s)])
        if not args.no_breakdown:
            for name, (gen, _) in bm.OPS.items():
                exes[(name, s)] = os.path.join(wd, "op_%s_%d" % (gen.__name__[3:], s))
                compile_model(args.attn_compile, gen(s), exes[(name, s)])

    # Peers on the host's best OpenBLAS kernels, or their ratios are refused.
    log("checking OpenBLAS's core type ...")
    blas_env, blas_report = openblas_kernel.peer_environment(log=log)
    log(blas_report["note"])
    log("starting peer workers ...")
    blas = {t: Worker("blas", wd, t, blas_env) for t in threads}
    torch_w = {t: Worker("torch", wd, t, blas_env) for t in threads}
    fallback = {kind: any(openblas_kernel.is_fallback(lib["corename"])
                          for w in ws.values() for lib in w.hello["openblas"])
                for kind, ws in (("blas", blas), ("torch", torch_w))}
    for t in threads:
        h = blas[t].hello
        if not h["blas"] or "openblas" not in h["blas"]:
            raise SystemExit("numpy's BLAS is not OpenBLAS: %s" % h)
        if h["blas_threads"] != t:
            raise SystemExit("OpenBLAS runs %s threads, wanted %d" % (h["blas_threads"], t))
        if torch_w[t].hello["torch_threads"] != t:
            raise SystemExit("torch runs %s threads, wanted %d" % (torch_w[t].hello, t))

    # Output checks (attnc vs peer on the same data) -----------------------
    log("checking outputs ...")
    checks = {}
    t0 = threads[-1]
    for m in GEMM_M:
        for k, n in GEMM_KN:
            key = ("gemm", m, k, n)
            a_out, p_out = os.path.join(wd, "check_a.npy"), os.path.join(wd, "check_p.npy")
            try:
                run_attnc(exes[key], os.path.join(wd, f"gemm_w_{n}x{k}.safetensors"),
                          [os.path.join(wd, f"gemm_x_{m}x{k}.npy")], t0, out=a_out)
                blas[t0].call(m=m, k=k, n=n, reps=1, warmup=0, out=p_out)
                checks[key] = rel_err(np.load(a_out), np.load(p_out))
            except (RunFailed, subprocess.TimeoutExpired) as e:
                failures.append(str(e))
    torch_cases = [(("bert", s), "bert", [os.path.join(wd, f"x_{s}.npy")]) for s in SEQS]
    if not args.no_breakdown:
        for s in SEQS:
            for name in bm.OPS:
                ins = ([os.path.join(wd, f"{n}_{s}.npy") for n in "qkv"] if name.startswith("sdpa")
                       else [os.path.join(wd, f"x_{s}.npy")])
                torch_cases.append(((name, s), name, ins))
    for key, fn, ins in torch_cases:
        a_out, p_out = os.path.join(wd, "check_a.npy"), os.path.join(wd, "check_p.npy")
        try:
            run_attnc(exes[key], bert_w, ins, t0, out=a_out)
            torch_w[t0].call(fn=fn, inputs=ins, reps=1, warmup=0, out=p_out)
            checks[key] = rel_err(np.load(a_out), np.load(p_out))
        except (RunFailed, subprocess.TimeoutExpired) as e:
            failures.append(str(e))
    for key, (err, rel) in checks.items():
        if not rel <= TOL:
            failures.append("output mismatch %s: max abs err %.3g, relative %.3g > %g"
                            % (key, err, rel, TOL))

    # Timing ----------------------------------------------------------------
    def measure(rounds, attnc_fn, peer_fn):
        a, p = [], []
        for r in range(rounds):
            if r % 2 == 0:
                a.append(attnc_fn())
                p.append(peer_fn())
            else:
                p.append(peer_fn())
                a.append(attnc_fn())
        return a, p

    def reps_for(est_ms, budget_ms, lo, hi):
        return max(lo, min(hi, int(budget_ms / max(est_ms, 1e-3))))

    for t in threads:
        for m in GEMM_M:
            for k, n in GEMM_KN:
                key = ("gemm", m, k, n)
                flop = 2.0 * m * n * k
                reps = reps_for(flop / (nominal(t) * 0.5e6), 150, 5, 100)
                log(f"GEMM M={m} K={k} N={n} threads={t} ({args.rounds} rounds x {reps}) ...")
                wfile = os.path.join(wd, f"gemm_w_{n}x{k}.safetensors")
                xfile = os.path.join(wd, f"gemm_x_{m}x{k}.npy")
                case = f"GEMM M={m} K={k} N={n}"
                try:
                    a, p = measure(args.rounds,
                                   lambda: run_attnc(exes[key], wfile, [xfile], t, reps, 3),
                                   lambda: blas[t].call(m=m, k=k, n=n, reps=reps, warmup=3))
                except (RunFailed, subprocess.TimeoutExpired) as e:
                    failures.append(str(e))
                    rows.append(("gemm", case, t, None, None, None, None, "GFLOP/s", "FAILED"))
                    continue
                ga = flop / statistics.median(a) / 1e6
                gp = flop / statistics.median(p) / 1e6
                rr = [pi / ai for ai, pi in zip(a, p)]  # GFLOP/s ratio per round
                err = checks.get(key)
                extra = "%3.0f%% / %3.0f%% of peak; err %.1e" % (
                    100 * ga / nominal(t), 100 * gp / nominal(t), err[1] if err else float("nan"))
                rows.append(("gemm", case, t, ga, gp, ga / gp, (min(rr), max(rr)), "GFLOP/s", extra))

    layer_cases = [("bert", s, 1, "BERT layer seq %d" % s) for s in SEQS]
    if not args.no_breakdown:
        for s in SEQS:
            for name, (_, count) in bm.OPS.items():
                part = "in mha" if name.startswith(("linear", "sdpa")) else "x%d" % count
                layer_cases.append((name, s, count, "  op %s seq %d (%s)" % (name, s, part)))
    for t in threads:
        for fn, s, count, case in layer_cases:
            key = (fn, s)
            ins = ([os.path.join(wd, f"{n}_{s}.npy") for n in "qkv"] if fn.startswith("sdpa")
                   else [os.path.join(wd, f"x_{s}.npy")])
            reps, warm = (3, 1) if s >= 512 else (10, 2)
            if fn.startswith("layer_norm") or fn.startswith("linear"):
                reps, warm = 30, 3
            log(f"{case.strip()} threads={t} ({args.layer_rounds} rounds x {reps}) ...")
            try:
                a, p = measure(args.layer_rounds,
                               lambda: run_attnc(exes[key], bert_w, ins, t, reps, warm),
                               lambda: torch_w[t].call(fn=fn, inputs=ins, reps=reps, warmup=warm))
            except (RunFailed, subprocess.TimeoutExpired) as e:
                failures.append(str(e))
                rows.append(("layer", case, t, None, None, None, None, "ms", "FAILED"))
                continue
            ma, mp = statistics.median(a), statistics.median(p)
            rr = [ai / pi for ai, pi in zip(a, p)]
            err = checks.get(key)
            extra = "max err %.1e (rel %.1e)" % err if err else ""
            rows.append(("layer", case, t, ma, mp, ma / mp, (min(rr), max(rr)), "ms", extra))

    for w in list(blas.values()) + list(torch_w.values()):
        w.close()

    # Table -----------------------------------------------------------------
    try:
        head = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True).stdout.strip()
    except OSError:
        head = "?"
    h = blas[threads[0]].hello
    th = torch_w[threads[0]].hello
    print(f"CPU benchmarks: {cpu_name()}, {os.cpu_count()} CPUs; attnc {head} (working tree); "
          f"load average at start {load0[0]:.1f}, at end {os.getloadavg()[0]:.1f}")
    print(f"peers: OpenBLAS {h['blas']} ({h['blas_config']}) via {h['via']}; "
          f"PyTorch {th['torch']} eager, torch.no_grad(), BLAS loaded: "
          f"{', '.join(os.path.basename(x) for x in th['libs']) or 'none'}; "
          f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', 'PASSIVE')} for PyTorch")
    print("OpenBLAS kernels: %s; numpy runs %s, PyTorch %s" % (
        blas_report["note"] + (" (peer environment: %s)" % blas_env if blas_env else ""),
        ", ".join(lib["corename"] for lib in h["openblas"]) or "no OpenBLAS",
        ", ".join(lib["corename"] for lib in th["openblas"]) or "no OpenBLAS"))
    for kind, what in (("blas", "GEMM"), ("torch", "layer and op")):
        if fallback[kind]:
            print("REFUSED: the %s peer runs a fallback OpenBLAS kernel (narrower vectors than "
                  "this CPU has); its %s ratios are not printed." % (kind, what))
    if max(load0[0], os.getloadavg()[0]) > 0.5 * os.cpu_count():
        print("WARNING: other processes kept the CPUs busy (load average above); absolute "
              "figures are low and multi-thread runs suffer most (a descheduled thread stalls "
              "every barrier), so read the ratios, and treat multi-thread ones with care.")
    print("attnc and its peer are timed in alternation; each figure is the median over rounds "
          "of a run's median; 'range' is the min..max of the per-round ratios.")
    print("GEMM ratio = attnc GFLOP/s / OpenBLAS GFLOP/s (higher is better); layer and op ratio "
          "= attnc ms / PyTorch ms (lower is better, target <= 1.0).")
    print("%% of peak is attnc's / OpenBLAS's GFLOP/s against threads x %.1f GFLOP/s, the "
          "measured 1-thread FMA peak." % nominal(1))
    w = 44
    print()
    print(f"{'benchmark':<{w}} {'thr':>3} {'unit':>8} {'attnc':>9} {'peer':>9} {'ratio':>6} "
          f"{'range':>13}  notes")
    print("-" * (w + 90))
    for t in sorted(peak):
        wall, cpu = peak[t]
        note = "per thread CPU time %.1f GFLOP/s (wall-clock figure left; best of 40)" % cpu
        if t > 1 and wall < 1.8 * peak[1][0]:
            note += "; wall < 2x 1 thread: the cores were busy"
        print(f"{'FMA peak f32 (fma_peak.c, 16 zmm acc.)':<{w}} {t:>3} {'GFLOP/s':>8} "
              f"{wall:9.1f} {'':>9} {'':>6} {'':>13}  {note}")
    last = None
    for sec, case, t, a, p, ratio, rr, unit, extra in rows:
        if last is not None and sec != last:
            print()
        last = sec
        if a is None:
            print(f"{case:<{w}} {t:>3} {unit:>8} {'FAILED':>9}")
            continue
        fmt = (lambda v: f"{v:9.1f}") if unit == "GFLOP/s" or v_big(a, p) else (lambda v: f"{v:9.3f}")
        if fallback["blas" if sec == "gemm" else "torch"]:
            print(f"{case:<{w}} {t:>3} {unit:>8} {fmt(a)} {fmt(p)} {'refused (fallback kernel)':>20} "
                  f"{extra}")
            continue
        print(f"{case:<{w}} {t:>3} {unit:>8} {fmt(a)} {fmt(p)} {ratio:6.2f} "
              f"{rr[0]:6.2f}..{rr[1]:<6.2f} {extra}")
    print("-" * (w + 90))
    print("total benchmark time %.0f s" % (time.time() - t_start))
    return exit_status(failures)


def v_big(a, p):
    return min(a, p) >= 100


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (RunFailed, subprocess.CalledProcessError, subprocess.TimeoutExpired) as e:
        print("cpu_bench: FAILED: %s" % e, file=sys.stderr)
        sys.exit(1)
