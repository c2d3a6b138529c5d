#!/usr/bin/env python3
"""Builds the GPU check's bundle (see docs/gpu.md): every CUDA executable
and library the check runs, compiled here for sm_90a, with their small
weights, inputs and reference outputs, any non-system shared library they need, and
cases.json, which tells scripts/gpu/run.py what to run and compare.

Needs attn-compile (built) and the CUDA toolkit's ptxas; no GPU, no torch.
Large weights (BERT-base, GPT-2-small) are not carried: run.py makes them
on the GPU machine (seeded, as the reference does) and computes their
reference there (numpy, or torch on the GPU).

Incremental: a target is rebuilt only when its command, its sources or
attn-compile changed (a stamp beside it). Parallel: --jobs compiles at once.
"""

import argparse
import concurrent.futures
import glob
import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, os.path.join(ROOT, "test", "reference"))
sys.path.insert(0, HERE)
import carry  # noqa: E402

CHIP = "sm_90a"
# The tolerances of the emulation tests (test/Integration/GPU/Inputs/
# model_emulation.py; models.test for BERT-base at f32; check_output.py and
# onnx_check.py for the HF and ONNX references): max|y - ref| <= tol *
# max(1, max|ref|).
TOL = {"f32": 1e-5, "f16": 4e-3, "bf16": 3e-2}
TOL_BERT_F32 = 1e-4
TOL_FRAMEWORK_F32 = 1e-4  # against transformers' / PyTorch's own outputs
PRECISIONS = ("f32", "f16", "bf16")
# Attention-only timing grid (f16, batch 4, 16 heads).
ATTN_SEQS = (512, 1024, 2048, 4096, 8192)
# BERT-base timing shapes (batch, seq).
BERT_SHAPES = ((1, 128), (32, 128), (1, 512), (32, 512))
# GPT-2-small decode: prompt, new tokens, KV-cache capacity.
GPT2_PROMPT, GPT2_NEW, GPT2_CACHE = 32, 128, 256
GPT2_SMALL = {"n_embd": 768, "n_head": 12, "n_layer": 12, "n_positions": 1024,
              "vocab_size": 50257}


class Bundle:
    def __init__(self, out, work, attn_compile, jobs, quiet):
        self.out = out
        self.work = work  # compile inputs that are not carried
        self.attn_compile = attn_compile
        self.jobs = jobs
        self.quiet = quiet
        self.cases = []
        self.targets = []  # (relative output, command, source files)
        st = os.stat(attn_compile)
        self.tool_stamp = f"{st.st_size}:{st.st_mtime_ns}"

    def path(self, *rel):
        return os.path.join(self.out, *rel)

    def data(self, rel, src=None, array=None):
        """Copies `src` (or saves `array`) to data/REL; returns REL's path
        inside the bundle."""
        import numpy as np
        dst = self.path("data", rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if src is not None:
            if not os.path.exists(dst) or open(src, "rb").read() != \
                    open(dst, "rb").read():
                shutil.copyfile(src, dst)
        else:
            np.save(dst, array)
        return os.path.join("data", rel)

    def compile(self, rel, source, flags, extra_deps=()):
        """Schedules `attn-compile SOURCE --target=cuda ... -o REL`."""
        cmd = [self.attn_compile, source, "--target=cuda", f"--chip={CHIP}",
               "-q", *flags, "-o", self.path(rel)]
        deps = [source] if os.path.isfile(source) else sorted(
            glob.glob(os.path.join(source, "*")))
        self.targets.append((rel, cmd, deps + list(extra_deps)))
        return rel

    def case(self, **c):
        c.setdefault("kind", "run")
        self.cases.append(c)

    # ---- building ----------------------------------------------------------

    def stamp(self, cmd, deps):
        h = hashlib.sha256()
        h.update(self.tool_stamp.encode())
        h.update("\0".join(cmd).encode())
        for d in deps:
            with open(d, "rb") as f:
                # A large file (a header-only checkpoint, mostly a hole):
                # its size and header.
                big = os.path.getsize(d) > 16 << 20
                h.update(hashlib.sha256(f.read(1 << 20) if big else
                                        f.read()).digest())
                h.update(str(os.path.getsize(d)).encode())
        return h.hexdigest()

    def build_targets(self):
        todo = []
        for rel, cmd, deps in self.targets:
            out = self.path(rel)
            stamp = self.stamp(cmd, deps)
            stamp_path = out + ".stamp"
            if os.path.exists(out) and os.path.exists(stamp_path) and \
                    open(stamp_path).read() == stamp:
                continue
            todo.append((rel, cmd, stamp, stamp_path))
        print(f"bundle: {len(self.targets)} targets, {len(todo)} to compile "
              f"({self.jobs} at once)", flush=True)
        failed = []

        def one(job):
            rel, cmd, stamp, stamp_path = job
            os.makedirs(os.path.dirname(self.path(rel)), exist_ok=True)
            t0 = time.time()
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                return rel, False, r.stderr.strip()[-2000:]
            # The symbol table is not needed to run (the dynamic symbols
            # stay): a third of the size.
            if shutil.which("strip"):
                subprocess.run(["strip", "--strip-unneeded", self.path(rel)],
                               check=True)
            with open(stamp_path, "w") as f:
                f.write(stamp)
            return rel, True, f"{time.time() - t0:.1f} s"

        with concurrent.futures.ThreadPoolExecutor(self.jobs) as pool:
            for rel, ok, msg in pool.map(one, todo):
                if not ok:
                    failed.append(rel)
                    print(f"bundle: FAILED {rel}:\n{msg}", flush=True)
                elif not self.quiet:
                    print(f"bundle: built {rel} ({msg})", flush=True)
        return failed


def f32(x):
    import numpy as np
    return np.asarray(x, np.float32)


def add_examples(b):
    """The example models at f32, f16 and bf16, static and dynamic."""
    import numpy as np
    import make_weights as mw
    import tensorio
    src = b.work
    # small_encoder: the committed weights and ids; the dynamic build
    # (?x?x) at 3x7.
    W = tensorio.read_safetensors(os.path.join(ROOT, "examples",
                                               "small_encoder.safetensors"))
    cfg = dict(mw.DEFAULTS["small_encoder"])
    ids = np.load(os.path.join(ROOT, "examples", "small_encoder.ids.npy"))
    w = b.data("small_encoder/weights.safetensors",
               src=os.path.join(ROOT, "examples", "small_encoder.safetensors"))
    x = b.data("small_encoder/ids.npy", array=ids)
    ref = b.data("small_encoder/ref.npy", array=f32(mw.run_reference(
        "small_encoder", W, {"ids": ids}, cfg)))
    rows = [mw.make_inputs("small_encoder", cfg, s)["ids"][:, :7]
            for s in range(3)]
    ids37 = np.concatenate(rows)
    xd = b.data("small_encoder/ids_3x7.npy", array=ids37)
    refd = b.data("small_encoder/ref_3x7.npy", array=f32(np.concatenate([
        mw.run_reference("small_encoder", W, {"ids": r}, cfg)
        for r in rows])))
    add_example(
        b, src, "small_encoder", "1x16x", "?x?x",
        lambda p: dict(name=f"small_encoder {p}", weights=w, inputs=[x],
                       ref=ref, tol=TOL[p], graphs=True,
                       emulate=p == "f32",
                       source="examples/small_encoder.mlir", precision=p,
                       sanitize=p == "f16"),
        lambda p: dict(name=f"small_encoder ?x? {p} at 3x7", weights=w,
                       inputs=[xd], ref=refd, tol=TOL[p], graphs=True))

    # decoder_block: seeded weights; the dynamic build (1x?x) at 1x37.
    W, res = mw.make_weights("decoder_block", 0)
    cfg = dict(mw.DEFAULTS["decoder_block"], **res)
    wpath = b.path("data", "decoder_block", "weights.safetensors")
    os.makedirs(os.path.dirname(wpath), exist_ok=True)
    tensorio.write_safetensors(wpath, W)
    w = os.path.join("data", "decoder_block", "weights.safetensors")
    inp = mw.make_inputs("decoder_block", cfg, 0)
    x = b.data("decoder_block/x.npy", array=inp["x"])
    ref = b.data("decoder_block/ref.npy", array=f32(mw.run_reference(
        "decoder_block", W, inp, cfg)))
    inp37 = {"x": inp["x"][:, :37]}
    x37 = b.data("decoder_block/x_1x37.npy", array=inp37["x"])
    ref37 = b.data("decoder_block/ref_1x37.npy", array=f32(mw.run_reference(
        "decoder_block", W, inp37, cfg)))
    add_example(
        b, src, "decoder_block", "1x64x", "1x?x",
        lambda p: dict(name=f"decoder_block {p}", weights=w, inputs=[x],
                       ref=ref, tol=TOL[p], graphs=True),
        lambda p: dict(name=f"decoder_block 1x? {p} at 1x37", weights=w,
                       inputs=[x37], ref=ref37, tol=TOL[p], graphs=True))

    # BERT-base (examples/bert_base.mlir): weights and reference made on
    # the GPU machine (340 MB); the dynamic build (?x?x) at 2x77.
    def bert_tol(p):
        return TOL_BERT_F32 if p == "f32" else TOL[p]

    add_example(
        b, src, "bert_base", "1x128x", "?x?x",
        lambda p: dict(name=f"bert_base {p}", weights="make:bert",
                       inputs=["make:bert:1x128"], ref="make:bert:1x128",
                       tol=bert_tol(p), graphs=p == "f16"),
        lambda p: dict(name=f"bert_base ?x? {p} at 2x77",
                       weights="make:bert", inputs=["make:bert:2x77"],
                       ref="make:bert:2x77", tol=bert_tol(p)))


def add_example(b, src, name, static_dims, dynamic_dims, static_case,
                dynamic_case):
    """Builds examples/<name>.mlir at each precision, and a copy of it whose
    `static_dims` become `dynamic_dims`; `static_case(p)` and
    `dynamic_case(p)` give the case arguments of each build."""
    path = os.path.join(ROOT, "examples", name + ".mlir")
    dyn = os.path.join(src, name + "_dyn.mlir")
    with open(path) as f, open(dyn, "w") as out:
        out.write(f.read().replace(static_dims, dynamic_dims))
    for p in PRECISIONS:
        flags = [] if p == "f32" else [f"--precision={p}"]
        b.case(exe=b.compile(f"bin/{name}_{p}", path, flags),
               **static_case(p))
        b.case(exe=b.compile(f"bin/{name}_dyn_{p}", dyn, flags),
               **dynamic_case(p))


def onnx_inputs(stem):
    """The committed inputs of an ONNX test model, by input name."""
    import numpy as np
    out = {}
    for path in sorted(glob.glob(glob.escape(stem) + ".*.npy")):
        key = path[len(stem) + 1:-len(".npy")]
        if key != "ref":
            out[key] = np.load(path)
    return out


def add_onnx(b):
    """The exported ONNX test models, on their committed inputs, against
    PyTorch's committed outputs."""
    models = os.path.join(ROOT, "test", "ONNX", "Models")
    for model in ("encoder_postln_relu", "encoder_preln_gelu", "bert_like",
                  "causal_decoder", "gpt2_like", "misc_ops"):
        stem = os.path.join(models, model)
        onnx = stem + "-op17.onnx"
        inputs = onnx_inputs(stem)
        shapes = []
        for key, x in inputs.items():
            shapes += ["--input-shape", key + "=" + "x".join(map(str,
                                                                 x.shape))]
        ins = [b.data(f"onnx/{model}.{k}.npy", src=f"{stem}.{k}.npy")
               for k in inputs]
        ref = b.data(f"onnx/{model}.ref.npy", src=stem + ".ref.npy")
        for p in (PRECISIONS if model == "gpt2_like" else ("f32",)):
            flags = shapes + ([] if p == "f32" else [f"--precision={p}"])
            exe = b.compile(f"bin/onnx_{model}_{p}", onnx, flags)
            b.case(name=f"onnx {model} {p}", exe=exe, weights=exe +
                   ".safetensors", inputs=ins, input_names=list(inputs),
                   ref=ref, tol=TOL_FRAMEWORK_F32 if p == "f32" else TOL[p],
                   graphs=True)
    # Dynamic: compiled once without --input-shape, run at 2x37.
    dyn = os.path.join(models, "dynamic")
    for model in ("encoder_preln_gelu", "causal_decoder"):
        stem = os.path.join(dyn, model + ".2x37")
        keys = [os.path.basename(p)[len(model) + 6:-4] for p in
                sorted(glob.glob(glob.escape(stem) + ".*.npy"))]
        keys = [k for k in keys if k != "ref"]
        ins = [b.data(f"onnx/{model}.2x37.{k}.npy", src=f"{stem}.{k}.npy")
               for k in keys]
        ref = b.data(f"onnx/{model}.2x37.ref.npy", src=stem + ".ref.npy")
        exe = b.compile(f"bin/onnx_{model}_dyn_f32",
                        os.path.join(models, model + "-op17.onnx"), [])
        b.case(name=f"onnx {model} ?x? f32 at 2x37", exe=exe,
               weights=exe + ".safetensors", inputs=ins, input_names=keys,
               ref=ref, tol=TOL_FRAMEWORK_F32, graphs=True)


def hf_data(b, checkpoint, file):
    """The checkpoint directory's FILE, carried as data/hf/<its name>/FILE."""
    name = os.path.basename(checkpoint)
    return b.data(f"hf/{name}/{file}", src=os.path.join(checkpoint, file))


def add_hf(b):
    """The tiny Hugging Face checkpoints: full sequences against
    transformers' logits, and greedy generation through KV-cache steps
    against transformers' tokens."""
    hf = os.path.join(ROOT, "test", "Frontend", "HF", "Inputs")
    onnx = os.path.join(ROOT, "test", "ONNX", "Models")
    for name in ("bert", "gpt2", "llama"):
        d = os.path.join(hf, name)
        w = hf_data(b, d, "model.safetensors")
        ids = hf_data(b, d, "input_ids.npy")
        ref = hf_data(b, d, "expected.npy")
        for p in ("f32", "f16"):
            flags = ["--input-shape", "input_ids=1x16"] + (
                [] if p == "f32" else [f"--precision={p}"])
            exe = b.compile(f"bin/hf_{name}_{p}", d, flags)
            b.case(name=f"hf {name} {p}", exe=exe, weights=w, inputs=[ids],
                   input_names=["input_ids"], ref=ref,
                   tol=TOL_FRAMEWORK_F32 if p == "f32" else TOL[p],
                   graphs=True)
        if name == "bert":
            ins = [hf_data(b, d, f"masked_{k}.npy")
                   for k in ("input_ids", "attention_mask", "token_type_ids")]
            ref = hf_data(b, d, "masked_expected.npy")
            exe = b.compile("bin/hf_bert_masked_f32", d, [
                "--input-shape", "input_ids=2x16",
                "--input-shape", "attention_mask=2x16",
                "--input-shape", "token_type_ids=2x16"])
            b.case(name="hf bert masked f32", exe=exe, weights=w, inputs=ins,
                   input_names=["input_ids", "attention_mask",
                                "token_type_ids"], ref=ref,
                   tol=TOL_FRAMEWORK_F32, graphs=True)
            continue
        prompt = hf_data(b, d, "generate_prompt.npy")
        lengths = hf_data(b, d, "generate_lengths.npy")
        expected = hf_data(b, d, "generate_expected.npy")
        # KV-cache steps: one token per run (2x1) and a run-time token
        # count (2x?: the prompt in one run).
        for shape in ("2x1", "2x?"):
            tag = shape.replace("?", "q")
            exe = b.compile(f"bin/hf_{name}_step_{tag}", d, [
                "--input-shape", f"input_ids={shape}", "--kv-cache", "40"])
            b.case(kind="generate", name=f"hf {name} kv-cache step {shape} "
                   "generate", exe=exe, weights=w, prompt=prompt,
                   lengths=lengths, expected=expected, new_tokens=24,
                   graphs=True, sanitize=name == "gpt2" and shape == "2x?")
        # The same checkpoint exported to ONNX with past key/values.
        src = os.path.join(onnx, f"{name}_past-op17.onnx")
        exe = b.compile(f"bin/onnx_{name}_past_step", src, [
            "--input-shape", "input_ids=2x?", "--kv-cache", "40"])
        b.case(kind="generate", name=f"onnx {name}_past kv-cache step 2x? "
               "generate", exe=exe, weights=exe + ".safetensors",
               prompt=prompt, lengths=lengths, expected=expected,
               new_tokens=24, graphs=True)


def add_attention(b):
    """Attention-only libraries for timing against PyTorch's SDPA
    (bench/gpu_attention.py's models and loader)."""
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import gpu_attention as ga
    src = os.path.join(b.work, "attention")
    os.makedirs(src, exist_ok=True)
    configs = []
    for c in ga.configs(False, ATTN_SEQS):
        path = os.path.join(src, c["name"] + ".mlir")
        text = ga.model_ir(c)
        if not os.path.exists(path) or open(path).read() != text:
            with open(path, "w") as f:
                f.write(text)
        c["lib"] = b.compile(f"attention/{c['name']}.so", path, ["--shared"])
        configs.append(c)
    b.case(kind="attention", name="attention vs torch sdpa", configs=configs)


def write_sparse_safetensors(path, tensors):
    """A safetensors file of zeros, its data a hole (no disk used):
    attn-compile reads only the header of a checkpoint."""
    header, off = {}, 0
    for name, shape in tensors:
        n = 4
        for s in shape:
            n *= s
        header[name] = {"dtype": "F32", "shape": list(shape),
                        "data_offsets": [off, off + n]}
        off += n
    blob = json.dumps(header, separators=(",", ":")).encode()
    blob += b" " * (-len(blob) % 8)
    head = struct.pack("<Q", len(blob)) + blob
    if os.path.exists(path) and os.path.getsize(path) == len(head) + off:
        with open(path, "rb") as f:
            if f.read(len(head)) == head:
                return  # unchanged: keep its time stamp
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(blob)))
        f.write(blob)
        f.truncate(8 + len(blob) + off)


def gpt2_tensors(cfg):
    """(name, shape) of a GPT2LMHeadModel checkpoint as transformers saves
    it (the LM head tied to the embedding, so not saved)."""
    d, L = cfg["n_embd"], cfg["n_layer"]
    V, P = cfg["vocab_size"], cfg["n_positions"]
    ff = cfg.get("n_inner") or 4 * d
    tensors = [("transformer.wte.weight", (V, d)),
               ("transformer.wpe.weight", (P, d))]
    for i in range(L):
        h = f"transformer.h.{i}."
        tensors += [(h + "ln_1.weight", (d,)), (h + "ln_1.bias", (d,)),
                    (h + "attn.c_attn.weight", (d, 3 * d)),
                    (h + "attn.c_attn.bias", (3 * d,)),
                    (h + "attn.c_proj.weight", (d, d)),
                    (h + "attn.c_proj.bias", (d,)),
                    (h + "ln_2.weight", (d,)), (h + "ln_2.bias", (d,)),
                    (h + "mlp.c_fc.weight", (d, ff)),
                    (h + "mlp.c_fc.bias", (ff,)),
                    (h + "mlp.c_proj.weight", (ff, d)),
                    (h + "mlp.c_proj.bias", (d,))]
    return tensors + [("transformer.ln_f.weight", (d,)),
                      ("transformer.ln_f.bias", (d,))]


def add_large(b):
    """BERT-base at the timing shapes and GPT-2-small's decode step."""
    src = b.work
    text = open(os.path.join(ROOT, "examples", "bert_base.mlir")).read()
    for batch, seq in BERT_SHAPES:
        path = os.path.join(src, f"bert_base_{batch}x{seq}.mlir")
        t = text.replace("1x128x", f"{batch}x{seq}x")
        if not os.path.exists(path) or open(path).read() != t:
            with open(path, "w") as f:
                f.write(t)
        b.compile(f"bin/bert_base_f16_{batch}x{seq}", path,
                  ["--precision=f16"])
    b.case(kind="bert_bench", name="bert-base f16 vs torch",
           shapes=[list(s) for s in BERT_SHAPES],
           exes={f"{bb}x{s}": f"bin/bert_base_f16_{bb}x{s}"
                 for bb, s in BERT_SHAPES})

    # GPT-2-small: a checkpoint directory with the config and a header-only
    # (sparse) weights file, so that the step compiles here; the GPU machine
    # makes the weights with transformers' seeded init.
    ck = os.path.join(b.work, "gpt2-small")
    os.makedirs(ck, exist_ok=True)
    cfg = json.load(open(os.path.join(ROOT, "test", "Frontend", "HF",
                                      "Inputs", "gpt2", "config.json")))
    cfg.update(GPT2_SMALL)
    with open(os.path.join(ck, "config.json"), "w") as f:
        json.dump(cfg, f, indent=1)
    st = os.path.join(ck, "model.safetensors")
    write_sparse_safetensors(st, gpt2_tensors(cfg))
    exes = {}
    for p in ("f32", "f16"):
        flags = ["--input-shape", "input_ids=1x?", "--kv-cache",
                 str(GPT2_CACHE)] + ([] if p == "f32" else
                                     [f"--precision={p}"])
        exes[p] = b.compile(f"bin/gpt2_small_step_{p}", ck, flags)
    b.case(kind="gpt2_decode", name="gpt-2-small decode vs transformers",
           exes=exes, config=b.data("gpt2-small/config.json",
                                    src=os.path.join(ck, "config.json")),
           prompt=GPT2_PROMPT, new_tokens=GPT2_NEW)


def carry_libraries(b):
    """Copies the shared libraries the binaries need that a bare GPU
    machine lacks (any but glibc and the GCC runtime; e.g. LLVM's libomp,
    were it linked), into lib/, which run.sh puts on LD_LIBRARY_PATH."""
    system = ("libc.so", "libm.so", "libdl.so", "libpthread.so", "librt.so",
              "libstdc++.so", "libgcc_s.so", "ld-linux", "linux-vdso")
    needed = {}
    exes = [b.path(rel) for rel, _, _ in b.targets]
    for exe in exes:
        out = subprocess.run(["ldd", exe], capture_output=True,
                             text=True).stdout
        for line in out.splitlines():
            m = re.match(r"\s*(\S+) => (\S+)", line)
            if m and not m.group(1).startswith(system):
                needed[m.group(1)] = m.group(2)
    os.makedirs(b.path("lib"), exist_ok=True)
    for soname, path in sorted(needed.items()):
        shutil.copyfile(os.path.realpath(path), b.path("lib", soname))
    return sorted(needed)


def main():
    ap = argparse.ArgumentParser(
        description="Build the GPU check's bundle (docs/gpu.md).")
    ap.add_argument("--out", default=os.path.join(ROOT, "gpu-bundle"),
                    help="bundle folder (default: gpu-bundle, git-ignored; "
                    "compile inputs that are not carried go to OUT.src)")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"),
                    help="attnc build folder (default: build)")
    ap.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--verbose", "-v", action="store_true")
    args = ap.parse_args()
    attn_compile = os.path.join(args.build, "bin", "attn-compile")
    if not os.access(attn_compile, os.X_OK):
        sys.exit(f"bundle: {attn_compile} not found: build attnc first "
                 "(scripts/setup.sh)")
    t0 = time.time()
    os.makedirs(args.out, exist_ok=True)
    work = os.path.abspath(args.out) + ".src"
    os.makedirs(work, exist_ok=True)
    b = Bundle(os.path.abspath(args.out), work, attn_compile, args.jobs,
               not args.verbose)
    add_examples(b)
    add_onnx(b)
    add_hf(b)
    add_attention(b)
    add_large(b)
    failed = b.build_targets()
    if failed:
        sys.exit(f"bundle: {len(failed)} targets failed: {', '.join(failed)}")
    libs = carry_libraries(b)
    # Whatever a previous bundle had that this one does not build goes.
    keep = {b.path(rel) for rel, _, _ in b.targets}
    keep |= {p + ".stamp" for p in keep} | {p + ".safetensors" for p in keep}
    for sub in ("bin", "attention"):
        for p in glob.glob(b.path(sub, "*")):
            if p not in keep:
                os.remove(p)
    git = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                         capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain",
                            "--untracked-files=no"], capture_output=True,
                           text=True).stdout.strip()
    meta = {"chip": CHIP, "commit": git + ("+dirty" if dirty else ""),
            "built": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
            "libraries": libs, "cases": b.cases}
    with open(b.path("cases.json"), "w") as f:
        json.dump(meta, f, indent=1)
    size = bundle_bytes(b.out)
    carry.write_archive(b.out)
    fits, carried = carry.check(ROOT, b.out)
    print(f"bundle: {b.out}: {len(b.cases)} cases, {len(b.targets)} "
          f"executables and libraries, {size / 2**20:.1f} MiB; {carried}; "
          f"{time.time() - t0:.0f} s")
    if not fits:
        sys.exit("bundle: too large for one device call")
    return 0


def bundle_bytes(root):
    """Bytes the bundle takes when carried (the build stamps excepted)."""
    total = 0
    for d, _, files in os.walk(root):
        for f in files:
            p = os.path.join(d, f)
            if f.endswith(".stamp") or os.path.islink(p):
                continue
            total += os.path.getsize(p)
    return total


if __name__ == "__main__":
    sys.exit(main())
