"""peers.py's report: the host, the peers' versions and kernels, and the
Markdown tables of output errors, preparation times, latencies and ratios."""

import os
import statistics
import subprocess
import sys
import time

from peers_model import OPSET, PEERS, SETTINGS

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def host_flags():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    return set()


def fmt_ratio(vals):
    med = statistics.median(vals)
    if len(vals) == 1:
        return "%.2f" % med
    return "%.2f (%.2f-%.2f)" % (med, min(vals), max(vals))


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
        "attnc-int8": "attnc's generated code, u8 x s8 GEMMs on %s%s" % (
            "AVX512-VNNI vpdpbusd" if vnni else "scalar loops (no VNNI)",
            ", attention on AVX512-BF16 vdpbf16ps" if bf16_hw else ""),
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
