#!/usr/bin/env python3
"""Runs the GPU check's bundle (scripts/gpu/bundle.sh) and reports: every
case against its reference, CUDA graphs on and off, compute-sanitizer, and
timings against PyTorch. Called by scripts/gpu/run.sh (see its --help and
docs/gpu.md), which sets up the environment.

Every case runs in a child process under a timeout; a case that fails,
crashes or hangs is recorded and the run goes on. The JSON report is
rewritten after every case, so it exists whatever happens later.

--dry (no GPU): the executables run against the dry fake driver (a
libcuda.so.1 that loads the real cubins and validates every launch without
running it), so exit status, output shapes and launch checks are verified,
not values; the values of the cases marked `emulate` are computed by the
whole-model emulator instead and compared with the bundle's reference by
the same comparison as on the GPU.
"""

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, os.path.join(ROOT, "test", "reference"))

import numpy as np  # noqa: E402

sys.path.insert(0, HERE)
import carry  # noqa: E402

# Libraries every Linux GPU machine has (glibc, the GCC runtime).
SYSTEM_LIBS = ("libc.so", "libm.so", "libdl.so", "libpthread.so",
               "librt.so", "libstdc++.so", "libgcc_s.so", "ld-linux")


class Report:
    def __init__(self, path, header):
        self.path = path
        self.data = dict(header, results=[])
        self.write()

    def add(self, result):
        self.data["results"].append(result)
        self.write()
        status = result["status"]
        print(f"[{time.strftime('%H:%M:%S')}] {status:<7} {result['name']}: "
              f"{result.get('detail', '')} ({result.get('seconds', 0):.1f} s)",
              flush=True)

    def write(self):
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.data, f, indent=1, default=str)
        os.replace(tmp, self.path)


def run_proc(cmd, timeout, env=None, cwd=None):
    """(returncode or 'TIMEOUT', stdout, stderr, seconds); the child's whole
    process group is killed on timeout."""
    t0 = time.time()
    try:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=env,
                             cwd=cwd, start_new_session=True)
    except OSError as e:
        return "CRASH", "", str(e), 0.0
    try:
        out, err = p.communicate(timeout=timeout)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = p.communicate()
        rc = "TIMEOUT"
    return rc, out, err, time.time() - t0


def tail(text, n=600):
    text = (text or "").strip()
    return text if len(text) <= n else "..." + text[-n:]


def proc_failure(rc, err, out=""):
    """A result status and detail for a child that did not exit 0."""
    if rc == "TIMEOUT":
        return "TIMEOUT", "timed out"
    if rc == "CRASH" or (isinstance(rc, int) and rc < 0):
        sig = f"signal {-rc}" if isinstance(rc, int) else "could not start"
        return "CRASH", f"{sig}: {tail(err or out)}"
    return "FAIL", f"exit {rc}: {tail(err or out)}"


def compare(y, ref, tol):
    """max|y - ref| <= tol * max(1, max|ref|), the check of the offline
    tests (modelcheck.py, model_emulation.py, check_output.py)."""
    y = np.asarray(y, np.float64)
    ref = np.asarray(ref, np.float64)
    if y.shape != ref.shape:
        return False, f"shape {y.shape} vs reference {ref.shape}", None
    mag = max(1.0, float(np.max(np.abs(ref)))) if ref.size else 1.0
    if not np.all(np.isfinite(y)):
        return False, "non-finite output", float("inf")
    err = float(np.max(np.abs(y - ref))) if y.size else 0.0
    ok = err <= tol * mag
    return ok, f"max abs err {err:.2e} (tol {tol * mag:.1e})", err


class Check:
    def __init__(self, args):
        self.args = args
        self.bundle = os.path.abspath(args.bundle)
        self.dry = args.dry
        self.work = tempfile.mkdtemp(prefix="attnc-gpucheck-")
        self.t0 = time.time()
        with open(os.path.join(self.bundle, "cases.json")) as f:
            self.meta = json.load(f)
        self.env = dict(os.environ)
        self.made = {}  # "make:..." -> path
        self.dry_logs = 0

    def b(self, rel):
        return os.path.join(self.bundle, rel)

    def left(self):
        return self.args.budget - (time.time() - self.t0)

    def timeout(self, want):
        """A case's timeout: `want` seconds, less if the budget is short."""
        return max(5.0, min(want, self.left() - 5))

    # ---- inputs made on this machine ---------------------------------------

    def prepare(self):
        """BERT-base's seeded weights (make_weights.py, as the reference
        uses), inputs and float64 numpy references."""
        import make_weights as mw
        import tensorio
        need = {x for c in self.meta["cases"]
                for x in [c.get("weights"), c.get("ref"),
                          *c.get("inputs", [])]
                if isinstance(x, str) and x.startswith("make:")}
        if not need:
            return
        t0 = time.time()
        path = os.path.join(self.work, "bert.safetensors")
        if self.dry:
            # Values are not compared: zeros (a file that is a hole) of
            # the names and shapes the reference uses, and zero references.
            sys.path.insert(0, HERE)
            import bundle
            specs, res = mw.weight_specs("bert")
            bundle.write_sparse_safetensors(path, [(n, s) for n, s, _ in
                                                   specs])
        else:
            W, res = mw.make_weights("bert", 0)
            tensorio.write_safetensors(path, W)
        cfg = dict(mw.DEFAULTS["bert"], **res)
        self.made["make:bert"] = path
        for key in sorted(need - {"make:bert"}):
            batch, seq = map(int, key.split(":")[2].split("x"))
            c = dict(cfg, seq=seq)
            rows = [mw.make_inputs("bert", c, s)["x"] for s in range(batch)]
            x = np.concatenate(rows)
            if self.dry:
                ref = np.zeros_like(x)
            else:
                ref = np.concatenate([np.asarray(mw.run_reference(
                    "bert", W, {"x": r}, c), np.float32) for r in rows])
            xp = os.path.join(self.work, f"bert_x_{batch}x{seq}.npy")
            rp = os.path.join(self.work, f"bert_ref_{batch}x{seq}.npy")
            np.save(xp, x)
            np.save(rp, ref)
            self.made[key] = (xp, rp)
        print(f"prepared BERT-base weights, inputs and references "
              f"({time.time() - t0:.1f} s)", flush=True)

    def resolve(self, x, role):
        if isinstance(x, str) and x.startswith("make:"):
            v = self.made[x]
            if isinstance(v, tuple):
                return v[0] if role == "input" else v[1]
            return v
        return self.b(x)

    # ---- running executables -----------------------------------------------

    def exe_env(self, graphs=True, extra=None):
        env = dict(self.env)
        if not graphs:
            env["ATTNRT_CUDA_GRAPHS"] = "0"
        if self.dry:
            self.dry_logs += 1
            log = os.path.join(self.work, f"dry{self.dry_logs}.log")
            env["FAKE_CUDA_DRY_LOG"] = log
        env.update(extra or {})
        return env

    def dry_summary(self, env, err):
        """The dry driver's counts for one process, or a failure string."""
        path = env.get("FAKE_CUDA_DRY_LOG")
        rejected = [l for l in (err or "").splitlines()
                    if l.startswith("fake-cuda(dry):")]
        if not path or not os.path.exists(path):
            return None, "the dry driver was not loaded (no cubin loaded)"
        with open(path) as f:
            s = json.loads(f.read().splitlines()[-1])
        if rejected or s["rejected"]:
            return s, "; ".join(rejected) or f"{s['rejected']} calls rejected"
        if s["launches"] + s["graph_launches"] == 0:
            return s, "no kernel launched"
        return s, None

    def run_exe(self, case, graphs=True, prefix=(), timeout=None):
        """Runs a `run` case; (status, detail, output array or None)."""
        out = os.path.join(self.work, re.sub(r"\W+", "_", case["name"]) +
                           ("" if graphs else "_nograph") + ".npy")
        if os.path.exists(out):
            os.remove(out)
        cmd = list(prefix) + [self.b(case["exe"]), "--weights",
                              self.resolve(case["weights"], "weights"), "-q"]
        names = case.get("input_names")
        for i, x in enumerate(case["inputs"]):
            p = self.resolve(x, "input")
            cmd += ["--input", f"{names[i]}={p}" if names else p]
        cmd += ["--output", out]
        env = self.exe_env(graphs)
        rc, so, se, _ = run_proc(cmd, timeout or self.timeout(
            self.args.case_timeout), env=env)
        if rc != 0:
            st, detail = proc_failure(rc, se, so)
            return st, detail, None, so + se
        if self.dry:
            s, why = self.dry_summary(env, se)
            if why:
                return "FAIL", "dry driver: " + why, None, so + se
            case.setdefault("_dry", s)
        if not os.path.exists(out):
            return "FAIL", "no output written", None, so + se
        return "PASS", "", np.load(out), so + se

    def as_f32(self, y):
        if y.dtype == np.uint16:  # bf16 bits, as the CLI writes bf16
            return (y.astype(np.uint32) << 16).view(np.float32)
        return y

    def case_run(self, case):
        t0 = time.time()
        r = {"name": case["name"], "kind": "run"}
        ref = np.load(self.resolve(case["ref"], "ref"))
        st, detail, y, _ = self.run_exe(case)
        if st != "PASS":
            return dict(r, status=st, detail=detail, seconds=time.time() - t0)
        y = self.as_f32(y)
        if self.dry:
            ok = y.shape == ref.shape
            s = case["_dry"]
            detail = (f"ran on the dry driver: {s['launches']} launches "
                      f"({s['graph_launches']} graph launches) of "
                      f"{s['kernels']} kernels validated, output "
                      f"{tuple(y.shape)}" + ("" if ok else
                                             f" != reference {ref.shape}"))
            r.update(launches=s["launches"], graph_launches=s["graph_launches"])
        else:
            ok, detail, err = compare(self.as_f32(y), ref, case["tol"])
            r["max_abs_err"] = err
        if ok and case.get("graphs"):
            st2, d2, y2, _ = self.run_exe(case, graphs=False)
            if st2 != "PASS":
                ok, detail = False, f"{detail}; ATTNRT_CUDA_GRAPHS=0: {d2}"
            elif not self.dry:
                y2 = self.as_f32(y2)
                same = y2.shape == y.shape and np.array_equal(y, y2)
                diff = float(np.max(np.abs(y.astype(np.float64) - y2))) \
                    if y2.shape == y.shape else float("inf")
                r["graphs_off_max_diff"] = diff
                if not same and not (diff <= case["tol"] * 1e-2 * max(
                        1.0, float(np.max(np.abs(ref))))):
                    ok = False
                    detail += f"; graphs off differs by {diff:.2e}"
                else:
                    detail += ("; graphs off: identical" if same else
                               f"; graphs off: {diff:.1e} apart")
            else:
                detail += "; graphs off: ran"
        return dict(r, status="PASS" if ok else "FAIL", detail=detail,
                    seconds=time.time() - t0)

    def case_generate(self, case, prefix=(), timeout=None):
        t0 = time.time()
        r = {"name": case["name"], "kind": "generate"}
        expected = np.load(self.b(case["expected"]))
        outs = []
        for graphs in ((True, False) if case.get("graphs") else (True,)):
            out = os.path.join(self.work, re.sub(r"\W+", "_", case["name"]) +
                               f"_{graphs}.npy")
            cmd = list(prefix) + [
                self.b(case["exe"]), "generate", "--weights",
                self.b(case["weights"]), "--prompt", self.b(case["prompt"]),
                "--prompt-lengths", self.b(case["lengths"]),
                "--max-new-tokens", str(case["new_tokens"]), "--output", out,
                "-q"]
            env = self.exe_env(graphs)
            rc, so, se, _ = run_proc(cmd, timeout or self.timeout(
                self.args.case_timeout), env=env)
            if rc != 0:
                st, detail = proc_failure(rc, se, so)
                return dict(r, status=st, detail=("" if graphs else
                                                  "ATTNRT_CUDA_GRAPHS=0: ") +
                            detail, seconds=time.time() - t0)
            if self.dry:
                s, why = self.dry_summary(env, se)
                if why:
                    return dict(r, status="FAIL", detail="dry driver: " + why,
                                seconds=time.time() - t0)
                r["launches"] = s["launches"] + s["graph_launches"]
            outs.append(np.load(out))
        got = outs[0]
        if got.shape != expected.shape:
            return dict(r, status="FAIL", detail=f"tokens {got.shape} vs "
                        f"reference {expected.shape}", seconds=time.time() - t0)
        if self.dry:
            detail = (f"ran on the dry driver ({r['launches']} launches "
                      "validated), graphs on and off; tokens not checked")
            return dict(r, status="PASS", detail=detail,
                        seconds=time.time() - t0)
        ok = np.array_equal(got, expected)
        detail = (f"{got.shape[0]} rows x {got.shape[1]} tokens "
                  + ("equal transformers'" if ok else
                     f"differ from transformers' at "
                     f"{np.argwhere(got != expected)[0].tolist()}"))
        if len(outs) > 1:
            same = np.array_equal(outs[0], outs[1])
            ok &= same
            detail += "; graphs off: " + ("same tokens" if same else
                                          "DIFFERENT tokens")
        return dict(r, status="PASS" if ok else "FAIL", detail=detail,
                    seconds=time.time() - t0)

    def case_sanitize(self, case, tool):
        t0 = time.time()
        name = f"compute-sanitizer {tool}: {case['name']}"
        r = {"name": name, "kind": "sanitizer"}
        cs = shutil.which("compute-sanitizer") or next(
            (p for p in ("/usr/local/cuda/bin/compute-sanitizer",
                         "/usr/local/cuda/compute-sanitizer/"
                         "compute-sanitizer") if os.path.exists(p)), None)
        if self.dry or not cs:
            return dict(r, status="SKIP", detail="dry run" if self.dry else
                        "compute-sanitizer not found", seconds=0.0)
        prefix = [cs, "--tool", tool, "--error-exitcode", "99",
                  "--print-limit", "20"]
        if tool == "memcheck":
            prefix += ["--leak-check", "no"]
        to = self.timeout(self.args.sanitizer_timeout)
        if case["kind"] == "generate":
            res = self.case_generate(dict(case, graphs=False), prefix, to)
        else:
            st, detail, y, log = self.run_exe(case, prefix=prefix, timeout=to)
            res = {"status": st, "detail": detail}
            if st == "PASS":
                ok, detail, _ = compare(self.as_f32(y), np.load(
                    self.resolve(case["ref"], "ref")), case["tol"])
                res = {"status": "PASS" if ok else "FAIL", "detail": detail}
            else:
                m = re.search(r"ERROR SUMMARY: (\d+) error", log)
                if m:
                    res["detail"] = (f"{m.group(1)} errors: " +
                                     tail(log, 1500))
        return dict(r, status=res["status"], detail=res["detail"],
                    seconds=time.time() - t0)

    def emulate(self, case):
        """(dry) The case's values from the whole-model emulator, compared
        with the bundle's reference by the GPU run's comparison."""
        t0 = time.time()
        name = f"emulated: {case['name']}"
        r = {"name": name, "kind": "emulation"}
        attn_opt = os.path.join(self.args.build, "bin", "attn-opt")
        sys.path.insert(0, os.path.join(ROOT, "test", "Integration", "GPU",
                                        "Inputs"))
        try:
            import model_emulation as me
            from gpu_model_emulator import Emulator
            me.PIPELINE_OPTIONS = "chip=sm_90a"
            module = me.map_stage(attn_opt, os.path.join(ROOT,
                                                         case["source"]),
                                  case["precision"])
            emu = Emulator(module, None)
            inputs = [np.load(self.resolve(x, "input"))
                      for x in case["inputs"]]
            (y,) = emu.run_model(self.resolve(case["weights"], "weights"),
                                 inputs)
            ok, detail, _ = compare(y, np.load(self.resolve(case["ref"],
                                                            "ref")),
                                    case["tol"])
            detail += f"; {emu.launches} emulated launches"
        except Exception as e:  # noqa: BLE001 - reported, the run goes on
            ok, detail = False, f"{type(e).__name__}: {tail(str(e))}"
        return dict(r, status="PASS" if ok else "FAIL", detail=detail,
                    seconds=time.time() - t0)

    # ---- timings (torch_parts.py in a child process) ------------------------

    def torch_part(self, case, part, timeout):
        t0 = time.time()
        r = {"name": case["name"], "kind": part}
        spec = os.path.join(self.work, part + ".spec.json")
        res = os.path.join(self.work, part + ".result.json")
        timeout = self.timeout(timeout)
        with open(spec, "w") as f:
            # torch.compile starts only with 70 s of the part left.
            json.dump({"case": case, "bundle": self.bundle,
                       "work": self.work, "made": self.made,
                       "dry": self.dry,
                       "compile_after_s": max(0, timeout - 70)}, f)
        cmd = [sys.executable, os.path.join(HERE, "torch_parts.py"), part,
               spec, res]
        env = self.exe_env()
        rc, so, se, _ = run_proc(cmd, timeout, env=env)
        sys.stdout.write(so)
        data = {}
        if os.path.exists(res):
            with open(res) as f:
                data = json.load(f)
        status = data.pop("status", "PASS")
        detail = data.pop("detail", "")
        if rc != 0 and status in ("PASS", "PARTIAL"):
            status, detail = proc_failure(rc, se, so)
            if data.get("rows"):
                detail += f" (after {len(data['rows'])} rows)"
        elif rc != 0 and status == "ERROR":
            detail += " " + tail(data.pop("traceback", ""), 600)
        return dict(r, **data, status=status, detail=detail,
                    seconds=time.time() - t0)

    # ---- the whole check ----------------------------------------------------

    def main(self, report):
        cases = [c for c in self.meta["cases"]
                 if not self.args.only or re.search(self.args.only,
                                                    c["name"])]
        if self.dry:
            fits, carried = carry.check(ROOT, self.bundle)
            report.add({"name": "bundle size", "kind": "bundle",
                        "status": "PASS" if fits else "FAIL",
                        "detail": carried, "seconds": 0.0})
        report.add(self.check_libraries())
        try:
            self.prepare()
        except Exception as e:  # noqa: BLE001
            report.add({"name": "prepare BERT-base weights", "kind":
                        "prepare", "status": "FAIL", "detail": repr(e),
                        "seconds": 0.0})
        runs = [c for c in cases if c["kind"] == "run"]
        gens = [c for c in cases if c["kind"] == "generate"]
        # Correctness first (cheap), then the sanitizers, then timings.
        for c in runs:
            if any(str(x).startswith("make:") and x not in self.made
                   for x in [c["weights"], c["ref"], *c["inputs"]]):
                report.add({"name": c["name"], "kind": "run",
                            "status": "SKIP", "detail": "inputs not made",
                            "seconds": 0.0})
                continue
            self.guarded(report, c, self.case_run)
        for c in gens:
            self.guarded(report, c, self.case_generate)
        if self.dry:
            for c in runs:
                if c.get("emulate"):
                    self.guarded(report, c, self.emulate)
        if not self.args.no_sanitize:
            for c in runs + gens:
                if c.get("sanitize"):
                    for tool in ("memcheck", "racecheck"):
                        self.guarded(report, c, lambda c, t=tool:
                                     self.case_sanitize(c, t))
        if not self.args.no_bench:
            for c in cases:
                if c["kind"] == "attention":
                    self.guarded(report, c, lambda c: self.torch_part(
                        c, "attention", self.args.bench_timeout * 0.9))
            for c in cases:
                if c["kind"] == "bert_bench":
                    self.guarded(report, c, lambda c: self.torch_part(
                        c, "bert", self.args.bench_timeout * 1.5))
            for c in cases:
                if c["kind"] == "gpt2_decode":
                    self.guarded(report, c, lambda c: self.torch_part(
                        c, "gpt2", self.args.bench_timeout * 0.9))

    def check_libraries(self):
        """Every shared library the executables and libraries need
        (readelf -d: NEEDED) is a system one that a bare GPU machine has, or
        is in the bundle's lib/: the rpath into this machine's LLVM does not
        exist there."""
        t0 = time.time()
        r = {"name": "bundle libraries", "kind": "bundle"}
        if not shutil.which("readelf"):
            return dict(r, status="SKIP", detail="no readelf", seconds=0.0)
        have = set(os.listdir(self.b("lib"))) if os.path.isdir(
            self.b("lib")) else set()
        missing = {}
        files = [os.path.join(d, f) for sub in ("bin", "attention")
                 for d, _, fs in os.walk(self.b(sub)) for f in fs
                 if not f.endswith((".stamp", ".safetensors"))]
        for path in files:
            rc, out, err, _ = run_proc(["readelf", "-d", path], 30)
            if rc != 0:
                missing.setdefault(f"unreadable ({tail(err, 100)})",
                                   []).append(path)
                continue
            for lib in re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]",
                                  out):
                if lib not in have and not lib.startswith(SYSTEM_LIBS):
                    missing.setdefault(lib, []).append(
                        os.path.relpath(path, self.bundle))
        if missing:
            return dict(r, status="FAIL", seconds=time.time() - t0,
                        detail="not carried: " + "; ".join(
                            f"{k} (needed by {len(v)}, e.g. {v[0]})"
                            for k, v in sorted(missing.items())))
        return dict(r, status="PASS", seconds=time.time() - t0,
                    detail=f"{len(files)} files need only system libraries "
                    f"and lib/ ({', '.join(sorted(have)) or 'empty'})")

    def guarded(self, report, case, fn):
        if self.left() < 10:
            report.add({"name": case["name"], "kind": case["kind"],
                        "status": "SKIP", "detail": "time budget spent",
                        "seconds": 0.0})
            return
        try:
            res = fn(case)
        except Exception as e:  # noqa: BLE001 - reported, the run goes on
            import traceback
            res = {"name": case["name"], "kind": case["kind"],
                   "status": "ERROR", "detail": f"{type(e).__name__}: {e} "
                   f"{tail(traceback.format_exc(), 800)}", "seconds": 0.0}
        report.add(res)


def device_info(dry):
    info = {"date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())}
    if dry:
        info["gpu"] = "none (dry run: the fake driver)"
        return info
    rc, out, err, _ = run_proc(
        ["nvidia-smi", "--query-gpu=name,driver_version,memory.total,"
         "clocks.max.sm", "--format=csv,noheader"], 20)
    if rc == 0 and out.strip():
        parts = [p.strip() for p in out.strip().splitlines()[0].split(",")]
        info.update(gpu=parts[0], driver=parts[1] if len(parts) > 1 else "",
                    memory=parts[2] if len(parts) > 2 else "",
                    max_sm_clock=parts[3] if len(parts) > 3 else "")
    else:
        info["gpu"] = f"unknown (nvidia-smi: {tail(err or str(rc), 200)})"
    rc, out, _, _ = run_proc(["nvcc", "--version"], 20)
    if rc == 0:
        m = re.search(r"release ([\d.]+)", out)
        info["cuda_toolkit"] = m.group(1) if m else out.strip()[-80:]
    rc, out, _, _ = run_proc([sys.executable, "-c",
                              "import torch; print(torch.__version__)"], 60)
    info["torch"] = out.strip() if rc == 0 else "not importable"
    return info


def print_table(report):
    res = report.data["results"]
    w = max([len(r["name"]) for r in res] + [10])
    print("\n" + "=" * (w + 60))
    print(f"{'case':<{w}}  {'status':<7} {'s':>6}  detail")
    for r in res:
        d = r.get("detail", "").replace("\n", " ")
        print(f"{r['name']:<{w}}  {r['status']:<7} {r.get('seconds', 0):6.1f}"
              f"  {d[:160]}")
        for line in r.get("table", []):
            print(f"{'':<{w}}    {line}")
    counts = {}
    for r in res:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    print("=" * (w + 60))
    print("summary: " + ", ".join(f"{n} {k}" for k, n in sorted(
        counts.items())))
    return counts


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bundle", default=os.path.join(ROOT, "gpu-bundle"))
    ap.add_argument("--out", required=True, help="report folder")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"),
                    help="(--dry) the build folder with attn-opt")
    ap.add_argument("--dry", action="store_true")
    ap.add_argument("--only", help="run the cases whose name matches")
    ap.add_argument("--budget", type=float, default=400,
                    help="seconds for the whole run; later cases are "
                    "skipped when it is spent")
    ap.add_argument("--case-timeout", type=float, default=60)
    ap.add_argument("--sanitizer-timeout", type=float, default=90)
    ap.add_argument("--bench-timeout", type=float, default=100)
    ap.add_argument("--no-bench", action="store_true")
    ap.add_argument("--no-sanitize", action="store_true")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    check = Check(args)
    header = {"mode": "dry" if args.dry else "gpu",
              "device": device_info(args.dry),
              "bundle": {k: v for k, v in check.meta.items()
                         if k != "cases"}}
    print("device: " + json.dumps(header["device"]), flush=True)
    report = Report(os.path.join(args.out, "gpu-report.json"), header)
    try:
        check.main(report)
    finally:
        report.data["seconds"] = round(time.time() - check.t0, 1)
        report.write()
        counts = print_table(report)
        shutil.rmtree(check.work, ignore_errors=True)
    bad = sum(n for k, n in counts.items() if k not in ("PASS", "SKIP"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
