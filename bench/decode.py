#!/usr/bin/env python3
"""Text generation: attnc's KV-cache decode step against PyTorch eager.

    bench/decode.py [--prompt 64] [--new 32] [--threads 1,2] [--rounds 3]
                    [--layers 12] [--workdir DIR]

Needs torch and transformers (the .venv-bench of `scripts/setup.sh --bench`,
or any Python with both); the compiler and its tests use neither.

The model is Hugging Face's GPT2LMHeadModel at GPT-2-small size (12 layers,
hidden 768, 12 heads, vocab 50257, f32) with seeded random parameters, saved
with save_pretrained; both sides run that checkpoint, batch 1, greedy:

  attnc    attn-compile DIR --input-shape input_ids=1x? --kv-cache P+N
           (a KV-cache step of a run-time token count, KV caches as model
           state updated in place); `model generate`: prefill is one run
           over the prompt, decode one run per token, OMP_NUM_THREADS=T
  attnc T=1 the same with --input-shape input_ids=1x1 (a one-token step:
           prefill feeds the prompt one token per run), timed in the same
           alternation, so the table shows what the one-run prefill gains
           and whether the dynamic step's decode loses anything
  PyTorch  the same model object, eager, no_grad, torch.set_num_threads(T):
           one forward pass over the prompt (use_cache=True), then one per
           new token with past_key_values (its own KV cache);
           OPENBLAS_NUM_THREADS=T, OMP_WAIT_POLICY=PASSIVE

With --onnx, the same checkpoint is also exported to ONNX with past
key/values (scripts/gen_onnx_past_kv.py's wrapper; torch.onnx, opset 17) and
two more sides run it, timed in the same alternation:

  attnc-onnx   attn-compile model.onnx --input-shape input_ids=1x?
               --kv-cache P+N (attn-bind-kv-cache: the exported past inputs
               become the caches); `model generate`
  onnxruntime  the same model.onnx, CPU execution provider,
               intra_op_num_threads=T: one run over the prompt with an empty
               past, then one per token feeding the presents back as the
               past (its kernels are MLAS, not OpenBLAS)

With --scaling, one decode step (T = 1) of the attnc step is timed at cache
positions 64 to 960 (median of 9 runs each, through the Python package) for
steps compiled with caches of 256 and 1024 positions: the time grows
linearly with the position (a line is fitted) and does not depend on the
cache's capacity, as it would if a step copied its cache.

With --bf16, a further side: the same checkpoint compiled with
--precision=bf16 (weights converted once at bind time, f32 accumulation;
AVX-512 BF16 dot products where the CPU has them), timed in the same
alternation; its tokens are compared with the f32 ones (bf16 rounding may
change a greedy choice, so it is a count, not a check) and its ratios are
against PyTorch f32.

Both generate the same tokens first (checked; a mismatch is reported and no
ratio printed). Prefill latency (ms) and decode throughput (tokens/s, the
new tokens after the first) are the medians over --rounds runs, alternating
attnc and PyTorch; ratios are attnc / PyTorch for latency (lower is better)
and attnc / PyTorch for tokens/s (higher is better). PyTorch's OpenBLAS core
type is reported (bench/openblas_kernel.py) and a fallback is corrected with
OPENBLAS_CORETYPE for it, or the ratio refused.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def make_checkpoint(directory, layers):
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(0)
    cfg = GPT2Config(n_layer=layers, resid_pdrop=0.0, embd_pdrop=0.0,
                     attn_pdrop=0.0)
    GPT2LMHeadModel(cfg).eval().save_pretrained(directory,
                                                safe_serialization=True)


def torch_worker(directory, prompt_path, new, threads):
    """Prints one JSON line: tokens, prefill ms, decode tokens/s, versions."""
    import time

    import numpy as np
    import torch
    import transformers
    from transformers import GPT2LMHeadModel
    sys.path.insert(0, HERE)
    import openblas_kernel as ok

    torch.set_num_threads(threads)
    model = GPT2LMHeadModel.from_pretrained(directory).eval()
    ids = torch.from_numpy(np.load(prompt_path))
    with torch.no_grad():
        start = time.perf_counter()
        out = model(input_ids=ids, use_cache=True)
        prefill_ms = (time.perf_counter() - start) * 1e3
        past = out.past_key_values
        token = out.logits[:, -1].argmax(-1, keepdim=True)
        tokens = [int(token)]
        start = time.perf_counter()
        for _ in range(new - 1):
            out = model(input_ids=token, past_key_values=past, use_cache=True)
            past = out.past_key_values
            token = out.logits[:, -1].argmax(-1, keepdim=True)
            tokens.append(int(token))
        decode_s = time.perf_counter() - start
    print(json.dumps({
        "tokens": tokens, "prefill_ms": prefill_ms,
        "tokens_per_s": (new - 1) / decode_s,
        "version": "torch %s, transformers %s" % (torch.__version__,
                                                  transformers.__version__),
        "openblas": [lib["corename"] for lib in ok.loaded_openblas()]}))


def export_onnx(directory, path):
    """GPT-2 from `directory` as ONNX with past key/values, as the tests'
    exports are made (scripts/gen_onnx_past_kv.py)."""
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    from gen_onnx_past_kv import export
    export("gpt2", directory, path)


def ort_worker(path, prompt_path, new, threads):
    """Prints one JSON line, as torch_worker, for onnxruntime on `path`."""
    import time

    import numpy as np
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(path, options,
                                   providers=["CPUExecutionProvider"])
    pasts = [i for i in session.get_inputs() if i.name.startswith("past")]
    ids = np.load(prompt_path)
    feeds = {"input_ids": ids,
             "attention_mask": np.ones(ids.shape, np.int64)}
    for i in pasts:
        feeds[i.name] = np.zeros((1, i.shape[1], 0, i.shape[3]), np.float32)
    names = [o.name for o in session.get_outputs()]

    def run(feeds):
        out = dict(zip(names, session.run(None, feeds)))
        token = int(out["logits"][0, -1].argmax())
        nxt = {"input_ids": np.array([[token]], np.int64),
               "attention_mask": np.ones(
                   (1, feeds["attention_mask"].shape[1] + 1), np.int64)}
        for i in pasts:
            nxt[i.name] = out[i.name.replace("past_key_values", "present")]
        return token, nxt

    start = time.perf_counter()
    token, feeds = run(feeds)
    prefill_ms = (time.perf_counter() - start) * 1e3
    tokens = [token]
    start = time.perf_counter()
    for _ in range(new - 1):
        token, feeds = run(feeds)
        tokens.append(token)
    decode_s = time.perf_counter() - start
    print(json.dumps({"tokens": tokens, "prefill_ms": prefill_ms,
                      "tokens_per_s": (new - 1) / decode_s,
                      "version": "onnxruntime %s" % ort.__version__}))


def run_ort(path, prompt_path, new, threads):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    r = subprocess.run([sys.executable, os.path.abspath(__file__),
                        "--ort-worker", path, prompt_path, str(new),
                        str(threads)],
                       capture_output=True, text=True, env=env, check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


def run_attnc(model, directory, prompt_path, new, threads, weights=None):
    out_path = prompt_path + ".attnc.npy"
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    r = subprocess.run([model, "generate", "--weights",
                        weights or os.path.join(directory, "model.safetensors"),
                        "--prompt", prompt_path, "--max-new-tokens", str(new),
                        "--output", out_path, "-q"],
                       capture_output=True, text=True, env=env, check=True)
    import numpy as np
    prefill = float(re.search(r"prefill: ([0-9.e+]+) ms", r.stdout).group(1))
    rate = float(re.search(r"([0-9.e+]+) tokens/s", r.stdout).group(1))
    return {"tokens": np.load(out_path)[0].tolist(), "prefill_ms": prefill,
            "tokens_per_s": rate}


def step_scaling(attn_compile, directory, work, capacities, positions,
                 threads, repeats=9):
    """Median time of one decode step (T = 1) at each cache position, for
    steps compiled with each cache capacity: {capacity: {position: ms}}.
    A step that copied its cache would cost O(capacity) at every position;
    one that only reads the rows before its position costs O(position)."""
    import time

    import numpy as np
    sys.path.insert(0, os.path.join(ROOT, "python"))
    os.environ["ATTNC_BIN_DIR"] = os.path.dirname(attn_compile)
    os.environ["OMP_NUM_THREADS"] = str(threads)
    import attnc
    out = {}
    for capacity in capacities:
        lib = attnc.compile(directory, os.path.join(work, f"libstep{capacity}.so"),
                            input_shape={"input_ids": (1, None)},
                            kv_cache=capacity)
        model = attnc.load(lib, weights=os.path.join(directory,
                                                     "model.safetensors"))
        ids = np.array([[1]], np.int64)
        times = {}
        for p in positions:
            if p >= capacity:
                continue
            samples = []
            for _ in range(repeats):
                start = time.perf_counter()
                model.run(input_ids=ids, positions=np.array([p], np.int64))
                samples.append((time.perf_counter() - start) * 1e3)
            times[p] = statistics.median(samples)
        out[capacity] = times
        model.close()
    return out


def run_torch(directory, prompt_path, new, threads, env):
    # Debian's torch runs ATen on libgomp and its GEMMs on OpenBLAS's own
    # pthreads: both get N threads, and libgomp must not spin-wait, or the
    # two pools fight over the cores (bench/workers.py).
    env = dict(env, OMP_NUM_THREADS=str(threads),
               OPENBLAS_NUM_THREADS=str(threads))
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    r = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker",
                        directory, prompt_path, str(new), str(threads)],
                       capture_output=True, text=True, env=env, check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prompt", type=int, default=64)
    ap.add_argument("--new", type=int, default=32)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--workdir")
    ap.add_argument("--bf16", action="store_true",
                    help="also time attnc computing in bf16 (--precision=bf16)")
    ap.add_argument("--attn-compile",
                    default=os.path.join(ROOT, "build", "bin", "attn-compile"))
    ap.add_argument("--onnx", action="store_true",
                    help="also export the model to ONNX with past key/values "
                         "and time attnc's bound step against onnxruntime")
    ap.add_argument("--scaling", action="store_true",
                    help="also time one decode step at cache positions 64 "
                         "to 960 for caches of 256 and 1024 positions")
    ap.add_argument("--worker", nargs=4, help=argparse.SUPPRESS)
    ap.add_argument("--ort-worker", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        d, p, n, t = args.worker
        torch_worker(d, p, int(n), int(t))
        return 0
    if args.ort_worker:
        m, p, n, t = args.ort_worker
        ort_worker(m, p, int(n), int(t))
        return 0

    import numpy as np
    sys.path.insert(0, HERE)
    import openblas_kernel as ok

    work = args.workdir or tempfile.mkdtemp(prefix="attnc-decode-")
    directory = os.path.join(work, "gpt2")
    if not os.path.exists(os.path.join(directory, "model.safetensors")):
        make_checkpoint(directory, args.layers)
    prompt_path = os.path.join(work, "prompt.npy")
    np.save(prompt_path, np.random.default_rng(1).integers(
        0, 50257, size=(1, args.prompt), dtype=np.int64))
    model = os.path.join(work, "gpt2-step")
    static_model = os.path.join(work, "gpt2-step-t1")
    capacity = args.prompt + args.new
    import time
    start = time.perf_counter()
    subprocess.run([args.attn_compile, "-q", directory, "--input-shape",
                    "input_ids=1x?", "--kv-cache", str(capacity), "-o", model],
                   check=True)
    compile_s = time.perf_counter() - start
    subprocess.run([args.attn_compile, "-q", directory, "--input-shape",
                    "input_ids=1x1", "--kv-cache", str(capacity), "-o",
                    static_model], check=True)
    bf16_model = os.path.join(work, "gpt2-step-bf16")
    if args.bf16:
        subprocess.run([args.attn_compile, "-q", directory, "--input-shape",
                        "input_ids=1x?", "--kv-cache", str(capacity),
                        "--precision=bf16", "-o", bf16_model], check=True)

    onnx_path = os.path.join(work, "gpt2_past.onnx")
    onnx_model = os.path.join(work, "gpt2-onnx-step")
    if args.onnx:
        if not os.path.exists(onnx_path):
            export_onnx(directory, onnx_path)
        subprocess.run([args.attn_compile, "-q", onnx_path, "--input-shape",
                        "input_ids=1x?", "--kv-cache", str(capacity), "-o",
                        onnx_model], check=True)

    overrides, report = ok.peer_environment(log=lambda *a: print(*a, file=sys.stderr))
    env = dict(os.environ, **overrides)
    print(f"GPT-2-small shape, {args.layers} layers, f32, batch 1, prompt "
          f"{args.prompt}, {args.new} new tokens, greedy; attnc step compiled "
          f"with --kv-cache {capacity} in {compile_s:.1f} s")
    print(f"PyTorch BLAS: {report['note']}")
    rows, bf16_rows, static_rows, onnx_rows = [], [], [], []
    binaries = {"attnc": model, "static": static_model, "bf16": bf16_model,
                "onnx": onnx_model}
    for threads in [int(t) for t in args.threads.split(",")]:
        sides = ["attnc", "torch", "static"] + (["bf16"] if args.bf16 else []) \
            + (["onnx", "ort"] if args.onnx else [])
        samples = {who: [] for who in sides}
        for r in range(args.rounds):
            order = sides[r % len(sides):] + sides[:r % len(sides)]
            for who in order:
                if who == "torch":
                    sample = run_torch(directory, prompt_path, args.new,
                                       threads, env)
                elif who == "ort":
                    sample = run_ort(onnx_path, prompt_path, args.new, threads)
                else:
                    sample = run_attnc(
                        binaries[who], directory, prompt_path, args.new,
                        threads, weights=onnx_model + ".safetensors"
                        if who == "onnx" else None)
                samples[who].append(sample)
        a, t = samples["attnc"], samples["torch"]
        same = a[0]["tokens"] == t[0]["tokens"]
        med = lambda xs, k: statistics.median(x[k] for x in xs)
        s = samples["static"]
        static_rows.append((threads, med(s, "prefill_ms"),
                            med(s, "tokens_per_s"),
                            s[0]["tokens"] == a[0]["tokens"]))
        rows.append((threads, med(a, "prefill_ms"), med(t, "prefill_ms"),
                     med(a, "tokens_per_s"), med(t, "tokens_per_s"), same,
                     t[0]["version"]))
        if args.onnx:
            o, n = samples["onnx"], samples["ort"]
            onnx_rows.append((threads, med(o, "prefill_ms"),
                              med(n, "prefill_ms"), med(o, "tokens_per_s"),
                              med(n, "tokens_per_s"),
                              o[0]["tokens"] == a[0]["tokens"] and
                              n[0]["tokens"] == a[0]["tokens"],
                              n[0]["version"]))
        if args.bf16:
            h = samples["bf16"]
            equal = sum(x == y for x, y in zip(h[0]["tokens"], a[0]["tokens"]))
            bf16_rows.append((threads, med(h, "prefill_ms"),
                              med(h, "tokens_per_s"), equal,
                              len(a[0]["tokens"])))
    print()
    print("threads | prefill ms attnc | PyTorch | attnc/PyTorch | decode tok/s attnc "
          "| PyTorch | attnc/PyTorch | tokens equal")
    # Without OpenBLAS (Debian's torch then runs the reference BLAS) or on a
    # fallback kernel, PyTorch is crippled: no ratio.
    blas_ok = bool(report["corenames"]) and not report["fallback"]
    if not blas_ok:
        print("PyTorch runs no optimized OpenBLAS (install libopenblas0-pthread: "
              "scripts/setup.sh --bench): ratios refused")
    for (threads, pa, pt, da, dt, same, version) in rows:
        ok_ratio = same and blas_ok
        ratio = lambda x, y: f"{x / y:.2f}" if ok_ratio else "refused"
        print(f"{threads} | {pa:.1f} | {pt:.1f} | {ratio(pa, pt)} | {da:.1f} | "
              f"{dt:.1f} | {ratio(da, dt)} | {'yes' if same else 'NO'}")
    print()
    print("attnc T=1 step (--input-shape input_ids=1x1; token-by-token "
          "prefill):")
    print("threads | prefill ms | T=1/one-run prefill | decode tok/s | "
          "one-run step/T=1 decode | tokens equal")
    for (threads, ps, ds, equal), row in zip(static_rows, rows):
        print(f"{threads} | {ps:.1f} | {ps / row[1]:.2f} | {ds:.1f} | "
              f"{row[3] / ds:.2f} | {'yes' if equal else 'NO'}")
    if bf16_rows:
        print()
        print("attnc --precision=bf16 (ratios against PyTorch f32 above):")
        print("threads | prefill ms | attnc-bf16/PyTorch | decode tok/s | "
              "attnc-bf16/PyTorch | attnc-bf16/attnc-f32 | tokens equal to f32")
        for (threads, pa, da, equal, n), row in zip(bf16_rows, rows):
            ratio = lambda x, y: f"{x / y:.2f}" if blas_ok else "refused"
            print(f"{threads} | {pa:.1f} | {ratio(pa, row[2])} | {da:.1f} | "
                  f"{ratio(da, row[4])} | {da / row[3]:.2f} | {equal}/{n}")
    if onnx_rows:
        print()
        print("The model exported to ONNX with past key/values: attnc "
              "(--kv-cache binds the pasts) vs onnxruntime on the same file:")
        print("threads | prefill ms attnc | onnxruntime | attnc/ort | decode "
              "tok/s attnc | onnxruntime | attnc/ort | tokens equal (to each "
              "other and to attnc's checkpoint step)")
        for (threads, pa, po, da, do, same, version) in onnx_rows:
            ratio = lambda x, y: f"{x / y:.2f}" if same else "refused"
            print(f"{threads} | {pa:.1f} | {po:.1f} | {ratio(pa, po)} | "
                  f"{da:.1f} | {do:.1f} | {ratio(da, do)} | "
                  f"{'yes' if same else 'NO'}")
        print(f"onnxruntime: {onnx_rows[0][6]}, CPU execution provider")
    if args.scaling:
        positions = (64, 128, 192, 240, 480, 720, 960)
        threads = int(args.threads.split(",")[0])
        scaling = step_scaling(args.attn_compile, directory, work, (256, 1024),
                               positions, threads)
        print()
        print(f"One decode step (T = 1, {threads} thread(s)), median ms by "
              "cache position, for caches of 256 and 1024 positions:")
        print("position | cache 256 | cache 1024 | 1024/256")
        for p in positions:
            small, large = scaling[256].get(p), scaling[1024].get(p)
            print(f"{p} | {f'{small:.2f}' if small else '-'} | {large:.2f} | "
                  f"{f'{large / small:.2f}' if small else '-'}")
        xs = np.array([p for p in positions], np.float64)
        ys = np.array([scaling[1024][p] for p in positions])
        slope, intercept = np.polyfit(xs, ys, 1)
        resid = float(np.max(np.abs(ys - (slope * xs + intercept))))
        print(f"cache 1024: step ms = {intercept:.2f} + {slope * 1e3:.3f} us x "
              f"position (max residual {resid:.2f} ms)")
    print(f"PyTorch: {rows[0][6]}")
    return 0 if all(r[5] for r in rows) and all(r[3] for r in static_rows) \
        and all(r[5] for r in onnx_rows) else 1


if __name__ == "__main__":
    sys.exit(main())
