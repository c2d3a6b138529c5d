#!/usr/bin/env python3
"""Compile time and peak memory of a KV-cache step against model depth.

    bench/compile_depth.py [--families gpt2,tinyllama,llama7b]
                           [--depths 2,12,22,32] [--inlined tinyllama:22]
                           [--decode tinyllama:22] [--workdir DIR]
                           [--gen-python PY] [--attn-compile PATH]

Measures `attn-compile DIR --input-shape input_ids=1x? --kv-cache 256` (the
CPU, the host's CPU) under /usr/bin/time -v: wall clock, user and system CPU
time and peak resident set size, for Hugging Face checkpoints of three
shapes at each depth:

  gpt2       GPT2LMHeadModel, GPT-2-small shape (hidden 768, 12 heads,
             FFN 3072) with a 1000-token vocabulary, f32
  tinyllama  LlamaForCausalLM, TinyLlama-1.1B shape (hidden 2048, FFN 5632,
             32 heads, 4 KV heads, vocab 32000), bf16
  llama7b    LlamaForCausalLM, LLaMA-2-7B shape (hidden 4096, FFN 11008,
             32 heads, 32 KV heads, vocab 32000), bf16

Every build is outlined (attn-outline-layers, the default); the rows named by
--inlined are also compiled with --no-outline-layers (every layer inlined,
as every KV-cache step was compiled before outlining covered them).

The compiler reads config.json and the safetensors header only, never the
tensor data, so the compile rows use "header" checkpoints: config.json as
transformers' save_pretrained writes it, and a model.safetensors with the
header save_pretrained would write (names, dtypes, shapes and offsets of the
model's state dict, taken from the model built on PyTorch's meta device)
whose data section is a hole of the full size (a sparse file: a 7B bf16
checkpoint takes 13.5 GB of address space and no disk). The first compile
row of each family is also compiled from a real checkpoint (seeded random
parameters, save_pretrained) and both executables are compared byte for byte.

--decode FAMILY:DEPTH writes a real checkpoint of that depth (seeded random
parameters, save_pretrained), compiles it outlined and inlined, and runs each
executable's `generate` on the same random prompt (--prompt tokens, --new
new tokens, greedy, OMP_NUM_THREADS=--threads) in alternation for --rounds
rounds: the medians of decode tokens/s and prefill ms as `generate` reports
them (wall clock), of the decode CPU time per token (the process's user +
system time minus that of the same run with one new token, over the other
new tokens: steadier than wall clock on a shared machine), and whether both
builds generated the same tokens.

The checkpoints are written by --gen-python (a Python with torch and
transformers, such as the .venv-gen of scripts/setup.sh --gen); this script
itself needs only numpy. Scratch checkpoints are deleted after use.
"""

import argparse
import json
import os
import re
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

FAMILIES = ("gpt2", "tinyllama", "llama7b")
# What the LLaMA families' configs differ in; the rest is shared.
LLAMA_SIZES = {
    "tinyllama": dict(hidden_size=2048, intermediate_size=5632,
                      num_key_value_heads=4, max_position_embeddings=2048),
    "llama7b": dict(hidden_size=4096, intermediate_size=11008,
                    num_key_value_heads=32, max_position_embeddings=4096),
}
SEED = 0


# --- checkpoint writer (runs under --gen-python) ---------------------------

def build_config(family, layers):
    import transformers as T
    if family == "gpt2":
        return T.GPT2Config(vocab_size=1000, n_layer=layers, n_embd=768,
                            n_head=12, resid_pdrop=0.0, embd_pdrop=0.0,
                            attn_pdrop=0.0, bos_token_id=None,
                            eos_token_id=None), T.GPT2LMHeadModel, "float32"
    if family in LLAMA_SIZES:
        config = T.LlamaConfig(vocab_size=32000, num_hidden_layers=layers,
                               num_attention_heads=32, rms_norm_eps=1e-5,
                               rope_theta=10000.0, tie_word_embeddings=False,
                               dtype="bfloat16", **LLAMA_SIZES[family])
        return config, T.LlamaForCausalLM, "bfloat16"
    raise SystemExit(f"unknown family {family}")


ST_DTYPES = {"float32": ("F32", 4), "bfloat16": ("BF16", 2),
             "float16": ("F16", 2)}


def write_checkpoint(family, layers, kind, dest):
    """kind "random": seeded random parameters, save_pretrained.
    kind "header": save_pretrained's config.json and safetensors header, the
    data section a hole."""
    import torch
    cfg, cls, dtype = build_config(family, layers)
    torch.manual_seed(SEED)
    shutil.rmtree(dest, ignore_errors=True)
    if kind == "random":
        model = cls(cfg).to(getattr(torch, dtype)).eval()
        model.save_pretrained(dest)
        return
    with torch.device("meta"):
        model = cls(cfg).to(getattr(torch, dtype))
    os.makedirs(dest)
    cfg.architectures = [cls.__name__]
    cfg.dtype = dtype
    cfg.save_pretrained(dest)
    # save_pretrained saves one name per tied group: the source of each tie.
    tied = set(getattr(model, "all_tied_weights_keys", {}) or {})
    tensors = {name: t for name, t in model.state_dict().items()
               if name not in tied}
    header, offset = {}, 0
    for name in sorted(tensors):
        t = tensors[name]
        code, size = ST_DTYPES[str(t.dtype).replace("torch.", "")]
        nbytes = t.numel() * size
        header[name] = {"dtype": code, "shape": list(t.shape),
                        "data_offsets": [offset, offset + nbytes]}
        offset += nbytes
    header["__metadata__"] = {"format": "pt"}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(os.path.join(dest, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        f.truncate(8 + len(text) + offset)


def header_of(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        h = json.loads(f.read(n))
    h.pop("__metadata__", None)
    return {k: (v["dtype"], tuple(v["shape"])) for k, v in h.items()}


# --- measuring (runs under any Python 3 with numpy) ------------------------

def gen(args, family, layers, kind, dest):
    subprocess.run([args.gen_python, os.path.abspath(__file__), "--gen",
                    family, str(layers), kind, dest], check=True)


def dir_bytes(d):
    """(apparent, on-disk) bytes of a checkpoint directory."""
    apparent = disk = 0
    for f in os.listdir(d):
        st = os.stat(os.path.join(d, f))
        apparent += st.st_size
        disk += st.st_blocks * 512
    return apparent, disk


def timed_compile(args, ckpt, out, inlined):
    cmd = [args.attn_compile, "-q", ckpt, "--input-shape", "input_ids=1x?",
           "--kv-cache", str(args.kv_cache), "-o", out]
    if inlined:
        cmd.append("--no-outline-layers")
    r = subprocess.run(["/usr/bin/time", "-v"] + cmd, capture_output=True,
                       text=True)
    if r.returncode != 0:
        sys.stderr.write(r.stdout + r.stderr)
        raise SystemExit(f"attn-compile failed: {' '.join(cmd)}")

    def field(label):
        return re.search(re.escape(label) + r": (.*)", r.stderr).group(1)

    wall = field("Elapsed (wall clock) time (h:mm:ss or m:ss)").split(":")
    wall_s = sum(float(x) * 60 ** i for i, x in enumerate(reversed(wall)))
    return {"wall_s": wall_s,
            "user_s": float(field("User time (seconds)")),
            "sys_s": float(field("System time (seconds)")),
            "rss_mib": int(field("Maximum resident set size (kbytes)")) / 1024,
            "cmd": " ".join(cmd)}


def loadavg():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def fmt_row(family, layers, mode, m):
    return (f"| {family} | {layers} | {mode} | {m['wall_s']:.1f} s | "
            f"{m['user_s']:.1f} s | {m['sys_s']:.1f} s | "
            f"{m['rss_mib']:.0f} MiB | {m['load']} |")


def compile_rows(args, work):
    rows = []
    inlined = {tuple(x.split(":")) for x in args.inlined.split(",") if x}
    for family in args.families.split(","):
        checked = False
        for layers in [int(d) for d in args.depths.split(",")]:
            ckpt = os.path.join(work, f"{family}-{layers}")
            gen(args, family, layers, "header", ckpt)
            apparent, disk = dir_bytes(ckpt)
            print(f"# {family} {layers} layers: checkpoint {apparent / 2**30:.2f}"
                  f" GiB apparent, {disk / 2**20:.1f} MiB on disk", flush=True)
            modes = [False] + ([True] if (family, str(layers)) in inlined
                               else [])
            for inl in modes:
                exe = os.path.join(work, "step")
                m = dict(timed_compile(args, ckpt, exe, inl), load=loadavg())
                row = fmt_row(family, layers,
                              "inlined" if inl else "outlined", m)
                print(row, flush=True)
                rows.append(row)
                if not checked and not inl:
                    # The same compile from a real checkpoint: the same
                    # executable (the compiler reads no tensor data).
                    real = ckpt + "-random"
                    gen(args, family, layers, "random", real)
                    if header_of(os.path.join(real, "model.safetensors")) != \
                            header_of(os.path.join(ckpt, "model.safetensors")):
                        raise SystemExit(f"{family}: header checkpoint's "
                                         "tensors differ from save_pretrained's")
                    with open(os.path.join(real, "config.json")) as f1, \
                            open(os.path.join(ckpt, "config.json")) as f2:
                        if json.load(f1) != json.load(f2):
                            raise SystemExit(f"{family}: config.json differs")
                    m2 = dict(timed_compile(args, real, exe + "-real", False),
                              load=loadavg())
                    same = subprocess.run(["cmp", "-s", exe, exe + "-real"]
                                          ).returncode == 0
                    print(f"# from the real checkpoint: wall "
                          f"{m2['wall_s']:.1f} s, user {m2['user_s']:.1f} s, "
                          f"peak RSS {m2['rss_mib']:.0f} MiB; executable "
                          f"{'identical' if same else 'DIFFERENT'}",
                          flush=True)
                    if not same:
                        raise SystemExit("header and real checkpoints gave "
                                         "different executables")
                    shutil.rmtree(real)
                    checked = True
                for f in os.listdir(work):
                    if f.startswith("step"):
                        os.remove(os.path.join(work, f))
            shutil.rmtree(ckpt)
    return rows


def generate(exe, weights, prompt_path, new, threads):
    """One `generate` run: its tokens, the prefill ms and decode tokens/s it
    reports (wall clock), and the CPU seconds (user + system) it used."""
    out = prompt_path + ".out.npy"
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    with tempfile.TemporaryFile("w+") as log:
        p = subprocess.Popen([exe, "generate", "--weights", weights,
                              "--prompt", prompt_path, "--max-new-tokens",
                              str(new), "--output", out, "-q"], stdout=log,
                             stderr=subprocess.STDOUT, env=env)
        _, status, usage = os.wait4(p.pid, 0)
        log.seek(0)
        text = log.read()
    if status != 0:
        raise SystemExit(f"{exe} generate failed:\n{text}")
    import numpy as np
    rate = re.search(r"([0-9.e+]+) tokens/s", text)
    return {"tokens": np.load(out)[0].tolist(),
            "prefill_ms": float(re.search(r"prefill: ([0-9.e+]+) ms",
                                          text).group(1)),
            "tokens_per_s": float(rate.group(1)) if rate else None,
            "cpu_s": usage.ru_utime + usage.ru_stime}


def decode(args, work):
    import numpy as np
    family, layers = args.decode.split(":")
    ckpt = os.path.join(work, f"{family}-{layers}-random")
    gen(args, family, int(layers), "random", ckpt)
    builds = {}
    for name, inl in (("outlined", False), ("inlined", True)):
        exe = os.path.join(work, f"decode-{name}")
        m = timed_compile(args, ckpt, exe, inl)
        print(f"# decode build {name}: wall {m['wall_s']:.1f} s, user "
              f"{m['user_s']:.1f} s, peak RSS {m['rss_mib']:.0f} MiB, load "
              f"{loadavg()}", flush=True)
        builds[name] = exe
    prompt = os.path.join(work, "prompt.npy")
    vocab = {"gpt2": 1000}.get(family, 32000)
    np.save(prompt, np.random.default_rng(1).integers(
        0, vocab, size=(1, args.prompt), dtype=np.int64))
    weights = os.path.join(ckpt, "model.safetensors")
    runs = {name: [] for name in builds}
    for rnd in range(args.rounds):
        order = list(builds) if rnd % 2 == 0 else list(reversed(builds))
        for name in order:
            r = generate(builds[name], weights, prompt, args.new,
                         args.threads)
            # The same run with one new token: what the process spends
            # besides decoding (start, binding the weights, prefill).
            r1 = generate(builds[name], weights, prompt, 1, args.threads)
            r["cpu_per_token_ms"] = (r["cpu_s"] - r1["cpu_s"]) / (
                args.new - 1) * 1e3
            r["tokens1"] = r1["tokens"]
            runs[name].append(r)
            print(f"# round {rnd + 1} {name}: {r['tokens_per_s']:.2f} "
                  f"tokens/s, prefill {r['prefill_ms']:.1f} ms, decode CPU "
                  f"{r['cpu_per_token_ms']:.1f} ms/token, load {loadavg()}",
                  flush=True)
    first = runs["outlined"][0]["tokens"]
    same = all(r["tokens"] == first and r["tokens1"] == first[:1]
               for rs in runs.values() for r in rs)
    med = {name: {k: statistics.median(r[k] for r in rs)
                  for k in ("tokens_per_s", "prefill_ms", "cpu_per_token_ms")}
           for name, rs in runs.items()}
    print(f"decode {family} {layers} layers, prompt {args.prompt}, "
          f"{args.new} new tokens, OMP_NUM_THREADS={args.threads}, medians "
          f"of {args.rounds} alternating rounds:")
    for name, m in med.items():
        print(f"  {name}: {m['tokens_per_s']:.2f} tokens/s (wall), prefill "
              f"{m['prefill_ms']:.1f} ms, decode CPU time "
              f"{m['cpu_per_token_ms']:.1f} ms/token "
              f"({1e3 / m['cpu_per_token_ms']:.2f} tokens per CPU second)")
    o, i = med["outlined"], med["inlined"]
    print(f"  outlined / inlined: tokens/s {o['tokens_per_s'] / i['tokens_per_s']:.4f}"
          f", CPU ms/token {o['cpu_per_token_ms'] / i['cpu_per_token_ms']:.4f}"
          f"; same greedy tokens in every run: {'yes' if same else 'NO'}")
    shutil.rmtree(ckpt)
    return same


def main():
    if len(sys.argv) == 6 and sys.argv[1] == "--gen":
        write_checkpoint(sys.argv[2], int(sys.argv[3]), sys.argv[4],
                         sys.argv[5])
        return 0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--families", default=",".join(FAMILIES))
    ap.add_argument("--depths", default="2,12,22,32")
    ap.add_argument("--inlined", default="tinyllama:22",
                    help="FAMILY:DEPTH,... also compiled --no-outline-layers")
    ap.add_argument("--decode", default="",
                    help="FAMILY:DEPTH: outlined against inlined decode")
    ap.add_argument("--prompt", type=int, default=32)
    ap.add_argument("--new", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--kv-cache", type=int, default=256)
    ap.add_argument("--workdir")
    ap.add_argument("--gen-python",
                    default=os.path.join(ROOT, ".venv-gen", "bin", "python"))
    ap.add_argument("--attn-compile",
                    default=os.path.join(ROOT, "build", "bin", "attn-compile"))
    args = ap.parse_args()
    work = args.workdir or tempfile.mkdtemp(prefix="compile-depth-")
    os.makedirs(work, exist_ok=True)
    print(f"# {args.attn_compile}; load average {loadavg()}", flush=True)
    ok = True
    if args.families:
        print("| model | layers | build | wall | user | sys | peak RSS | "
              "load |\n| --- | --- | --- | --- | --- | --- | --- | --- |")
        compile_rows(args, work)
    if args.decode:
        ok = decode(args, work)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
