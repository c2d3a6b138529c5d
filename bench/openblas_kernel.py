"""Which OpenBLAS kernels a peer really runs, and how to give it the right ones.

Debian's OpenBLAS (0.3.21, DYNAMIC_ARCH) picks its kernels from CPUID at load
time. On a CPU it does not know (the Intel Xeon these machines sometimes are)
it falls back to its Prescott (SSE3) kernels, about 5x slower than SkylakeX:
a benchmark that does not look measures a crippled peer. This module

  * reads the core type from the OpenBLAS library a process actually loaded
    (`/proc/self/maps`, then `openblas_get_corename` through ctypes),
  * ranks it against the host's vector ISA (/proc/cpuinfo flags),
  * probes numpy (and PyTorch, when importable) in a child process, first
    as the environment has it and, on a fallback, with OPENBLAS_CORETYPE set
    to the host's best supported type, checking an sgemm result each time.

Benchmarks pass the returned environment to their peer processes and refuse
to print a ratio against a peer whose core type is still a fallback.
"""

import ctypes
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "test", "reference"))
from hostcpu import host_flags  # noqa: E402

# The vector ISA each OpenBLAS x86-64 core type's kernels use (lower-case
# names as openblas_get_corename returns them, in any case).
_ISA_RANK = {"sse": 0, "avx": 1, "avx2": 2, "avx512": 3}
_CORE_ISA = {
    "skylakex": "avx512", "cooperlake": "avx512", "sapphirerapids": "avx512",
    "haswell": "avx2", "zen": "avx2", "excavator": "avx2", "steamroller": "avx2",
    "sandybridge": "avx", "bulldozer": "avx", "piledriver": "avx",
}


def host_isa(flags=None):
    flags = host_flags() if flags is None else flags
    if {"avx512f", "avx512bw", "avx512dq", "avx512vl"} <= flags:
        return "avx512"
    if {"avx2", "fma"} <= flags:
        return "avx2"
    if "avx" in flags:
        return "avx"
    return "sse"


def best_coretype(flags=None):
    """The OPENBLAS_CORETYPE whose kernels use the host's widest vectors."""
    flags = host_flags() if flags is None else flags
    isa = host_isa(flags)
    if isa == "avx512":
        return "SkylakeX"
    if isa == "avx2":
        return "Haswell"
    if isa == "avx":
        return "Sandybridge"
    return None


def core_isa(corename):
    return _CORE_ISA.get((corename or "").lower(), "sse")


def is_fallback(corename, flags=None):
    """True when `corename`'s kernels use narrower vectors than the host has."""
    return _ISA_RANK[core_isa(corename)] < _ISA_RANK[host_isa(flags)]


def loaded_openblas():
    """[{path, corename, config}] for every OpenBLAS this process has loaded."""
    found = []
    seen = set()
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1]
            name = os.path.basename(path)
            if "openblas" not in name or ".so" not in name or path in seen:
                continue
            seen.add(path)
            lib = ctypes.CDLL(path)
            info = {"path": path, "corename": None, "config": None}
            # numpy's wheels rename the symbols (suffix 64_ for ILP64, prefix scipy_).
            for prefix in ("", "scipy_"):
                for suffix in ("", "64_"):
                    fn = getattr(lib, prefix + "openblas_get_corename" + suffix, None)
                    cfg = getattr(lib, prefix + "openblas_get_config" + suffix, None)
                    if fn is not None and info["corename"] is None:
                        fn.restype = ctypes.c_char_p
                        info["corename"] = fn().decode()
                    if cfg is not None and info["config"] is None:
                        cfg.restype = ctypes.c_char_p
                        info["config"] = cfg().decode()
            found.append(info)
    return found


def _probe_main():
    """Child process: load numpy's (and torch's) BLAS, report and check it."""
    import numpy as np
    rng = np.random.default_rng(0)
    a = rng.standard_normal((256, 384)).astype(np.float32)
    b = rng.standard_normal((384, 320)).astype(np.float32)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    errs = {"numpy": float(np.max(np.abs(a @ b - ref)) / np.max(np.abs(ref)))}
    try:
        import torch
        t = torch.from_numpy(a) @ torch.from_numpy(b)
        errs["torch"] = float(np.max(np.abs(t.numpy() - ref)) / np.max(np.abs(ref)))
    except ImportError:
        pass
    print(json.dumps({"libs": loaded_openblas(), "sgemm_rel_err": errs}))


def probe(python=None, env=None):
    """Loads numpy (and torch) in a child process with `env`; returns its report."""
    r = subprocess.run([python or sys.executable, os.path.abspath(__file__), "--probe"],
                       capture_output=True, text=True, env=env, timeout=300)
    if r.returncode != 0:
        return {"error": r.stderr.strip()[-500:], "libs": [], "sgemm_rel_err": {}}
    return json.loads(r.stdout.strip().splitlines()[-1])


def _summary(report):
    libs = report.get("libs") or []
    return ", ".join("%s (%s)" % (lib["corename"], os.path.basename(lib["path"])) for lib in libs)


def peer_environment(python=None, log=None, keep=False):
    """The environment for peer processes, with OpenBLAS on the host's kernels.

    Returns (env overrides, report) where report has `corenames`, `fallback`
    (still a fallback after the fix: ratios must be refused), `note` (one
    line for the table) and the sgemm errors checked against float64.
    """
    log = log or (lambda *a: None)
    flags = host_flags()
    base = dict(os.environ)
    first = probe(python, base)
    names = [lib["corename"] for lib in first["libs"]]
    host = host_isa(flags)
    overrides = {}
    rep = first
    note = "OpenBLAS core type %s on a host with %s" % (_summary(first) or "none loaded", host)
    if any(is_fallback(n, flags) for n in names) and not keep:
        best = best_coretype(flags)
        log("OpenBLAS runs %s, a fallback on this host with %s: retrying with OPENBLAS_CORETYPE=%s"
            % (_summary(first), host, best))
        overrides = {"OPENBLAS_CORETYPE": best}
        rep = probe(python, dict(base, **overrides))
        note = ("OpenBLAS chose %s (a fallback on a host with %s); peers run with OPENBLAS_CORETYPE=%s: %s"
                % (_summary(first), host, best, _summary(rep) or "none loaded"))
    elif any(is_fallback(n, flags) for n in names):
        note += " (a fallback, kept: ratios against it are refused)"
    names = [lib["corename"] for lib in rep["libs"]]
    bad_err = {k: v for k, v in rep.get("sgemm_rel_err", {}).items() if not v < 1e-5}
    if bad_err:
        note += "; sgemm check FAILED %s" % bad_err
    elif rep.get("sgemm_rel_err"):
        note += "; sgemm vs float64 ok (%s)" % ", ".join(
            "%s %.1e" % kv for kv in sorted(rep["sgemm_rel_err"].items()))
    if "error" in rep:
        note += "; probe failed: " + rep["error"]
    report = {"corenames": names, "fallback": any(is_fallback(n, flags) for n in names),
              "sgemm_ok": not bad_err and "error" not in rep, "note": note, "host_isa": host,
              "libs": rep["libs"]}
    return overrides, report


if __name__ == "__main__":
    if sys.argv[1:] == ["--probe"]:
        _probe_main()
    else:
        env, rep = peer_environment(log=lambda *a: print(*a, file=sys.stderr))
        print(json.dumps({"env": env, "report": rep}, indent=1))
