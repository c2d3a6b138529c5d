#!/usr/bin/python3
"""GPU benchmark: attnc's fused attention against PyTorch's SDPA, one process.

    # where attnc is built (needs attn-compile; no GPU needed):
    /usr/bin/python3 bench/gpu_attention.py build [--workdir DIR] [--quick]
    # on the GPU machine (needs torch with CUDA; no MLIR needed):
    python3 bench/gpu_attention.py run [--workdir DIR] [--iters N]

`build` compiles one attn.sdpa model per configuration for CUDA
(`attn-compile --target=cuda --shared`: a shared library exporting the
model and the attnrt runtime), f16, batch 4, 16 heads, head dim 64 and 128,
seq 1024, 2048, 4096, 8192, causal and not (the issue's grid), and writes
configs.json beside them. The attention becomes attn-gpu-flash-attention's
tensor-core kernel (mma.sync m16n8k16).

`run` loads every library with ctypes into the same Python process as
PyTorch, feeds both the same random f16 inputs, checks that attnc's output
matches torch.nn.functional.scaled_dot_product_attention (max abs error <=
2e-2 * max(1, max |ref|)), then times both: attnc by attnrt_last_run_ms
(the model's invoke plus a device synchronization, without host<->device
copies of inputs and outputs), torch by CUDA events around the call, warm
runs, median of --iters, alternating. It prints TFLOP/s (4*b*h*s^2*d,
halved for causal) and attnc / torch. Exits non-zero if a check fails or no
GPU is usable.
"""

import argparse
import ctypes
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

BATCH, HEADS = 4, 16
HEAD_DIMS = (64, 128)
SEQS = (1024, 2048, 4096, 8192)
TOL = 2e-2


def configs(quick, seqs=SEQS):
    out = []
    for d in HEAD_DIMS:
        for s in (seqs[:1] if quick else seqs):
            for causal in (False, True):
                out.append({"name": f"d{d}_s{s}{'_causal' if causal else ''}",
                            "b": BATCH, "h": HEADS, "s": s, "d": d,
                            "causal": causal})
    return out


def model_ir(c):
    t = f"tensor<{c['b']}x{c['h']}x{c['s']}x{c['d']}xf16>"
    causal = " causal" if c["causal"] else ""
    return (f"func.func @attention(%q: {t}, %k: {t}, %v: {t}) -> {t} {{\n"
            f"  %0 = attn.sdpa %q, %k, %v{causal} : {t}, {t}, {t} -> {t}\n"
            f"  return %0 : {t}\n}}\n")


def build(args):
    os.makedirs(args.workdir, exist_ok=True)
    cs = configs(args.quick)
    for c in cs:
        src = os.path.join(args.workdir, c["name"] + ".mlir")
        with open(src, "w") as f:
            f.write(model_ir(c))
        lib = os.path.join(args.workdir, c["name"] + ".so")
        cmd = [args.attn_compile, src, "--target=cuda", f"--chip={args.chip}",
               "--shared", "-q", "-o", lib]
        subprocess.run(cmd, check=True)
        ptx = subprocess.run(
            [args.attn_compile, src, "--target=cuda", f"--chip={args.chip}",
             "--emit=ptx", "-q", "-o", "-"], check=True, capture_output=True,
            text=True).stdout
        c["mma_sync_in_ptx"] = ptx.count("mma.sync.aligned.m16n8k16")
        if c["mma_sync_in_ptx"] == 0:
            sys.exit(f"{c['name']}: no mma.sync in the PTX")
        print(f"built {lib} ({c['mma_sync_in_ptx']} mma.sync in the PTX)")
    with open(os.path.join(args.workdir, "configs.json"), "w") as f:
        json.dump(cs, f, indent=1)
    return 0


class Model:
    """A compiled model library opened through its attnrt C API."""

    def __init__(self, path):
        self.lib = ctypes.CDLL(os.path.abspath(path))
        L = self.lib
        L.attnrt_open.restype = ctypes.c_void_p
        L.attnrt_open.argtypes = [ctypes.c_void_p, ctypes.c_void_p,
                                  ctypes.c_char_p, ctypes.c_size_t]
        L.attnrt_set_input.argtypes = [ctypes.c_void_p, ctypes.c_int,
                                       ctypes.c_void_p, ctypes.c_size_t]
        L.attnrt_run.argtypes = [ctypes.c_void_p]
        L.attnrt_get_output.argtypes = [ctypes.c_void_p, ctypes.c_int,
                                        ctypes.c_void_p, ctypes.c_size_t]
        L.attnrt_last_run_ms.restype = ctypes.c_double
        L.attnrt_last_run_ms.argtypes = [ctypes.c_void_p]
        L.attnrt_last_error.restype = ctypes.c_char_p
        L.attnrt_last_error.argtypes = [ctypes.c_void_p]
        L.attnrt_close.argtypes = [ctypes.c_void_p]
        err = ctypes.create_string_buffer(1024)
        # A model library exports only the attnrt_* C API (the model's own
        # symbols are local): attnrt_open_linked opens the model it holds.
        L.attnrt_open_linked.restype = ctypes.c_void_p
        L.attnrt_open_linked.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
        self.m = L.attnrt_open_linked(err, len(err))
        if not self.m:
            raise RuntimeError(err.value.decode())

    def check(self, status):
        if status != 0:
            raise RuntimeError(self.lib.attnrt_last_error(self.m).decode())

    def set_input(self, i, array):
        self.check(self.lib.attnrt_set_input(
            self.m, i, array.ctypes.data, array.nbytes))

    def run(self):
        self.check(self.lib.attnrt_run(self.m))
        return self.lib.attnrt_last_run_ms(self.m)

    def output(self, like):
        import numpy as np
        out = np.empty_like(like)
        self.check(self.lib.attnrt_get_output(self.m, 0, out.ctypes.data,
                                              out.nbytes))
        return out


def run(args):
    import numpy as np
    import torch
    import torch.nn.functional as F
    if not torch.cuda.is_available():
        sys.exit("no CUDA device visible to PyTorch")
    with open(os.path.join(args.workdir, "configs.json")) as f:
        cs = json.load(f)
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}")
    print(f"{'config':<18} {'attnc ms':>9} {'torch ms':>9} {'attnc TF/s':>10} "
          f"{'torch TF/s':>10} {'attnc/torch':>11} {'max err':>9}")
    failed = False
    gen = torch.Generator(device="cuda").manual_seed(0)
    for c in cs:
        b, h, s, d = c["b"], c["h"], c["s"], c["d"]
        q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.float16,
                               generator=gen) for _ in range(3))
        model = Model(os.path.join(args.workdir, c["name"] + ".so"))
        for i, t in enumerate((q, k, v)):
            model.set_input(i, t.cpu().numpy())
        ref = F.scaled_dot_product_attention(q, k, v, is_causal=c["causal"])
        model.run()
        got = model.output(ref.cpu().numpy())
        refn = ref.float().cpu().numpy()
        err = float(np.max(np.abs(got.astype(np.float32) - refn)))
        ok = err <= TOL * max(1.0, float(np.max(np.abs(refn))))
        failed |= not ok
        start, stop = torch.cuda.Event(True), torch.cuda.Event(True)
        ours, theirs = [], []
        for it in range(args.warmup + args.iters):
            def torch_once():
                start.record()
                F.scaled_dot_product_attention(q, k, v, is_causal=c["causal"])
                stop.record()
                torch.cuda.synchronize()
                return start.elapsed_time(stop)
            order = (model.run, torch_once) if it % 2 else (torch_once,
                                                           model.run)
            times = {f: f() for f in order}
            if it >= args.warmup:
                ours.append(times[model.run])
                theirs.append(times[torch_once])
        a, t = statistics.median(ours), statistics.median(theirs)
        flops = 4 * b * h * s * s * d / (2 if c["causal"] else 1)
        print(f"{c['name']:<18} {a:9.3f} {t:9.3f} {flops / a / 1e9:10.1f} "
              f"{flops / t / 1e9:10.1f} {t / a:10.2f}x {err:9.2e}"
              f"{'' if ok else '  FAIL'}")
        sys.stdout.flush()
    print("attnc/torch is torch's latency over attnc's: the fraction of torch "
          "SDPA's speed that attnc reaches (above 1: faster)")
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mode", choices=("build", "run"))
    ap.add_argument("--workdir", default=os.path.join(ROOT, "build",
                                                      "bench-gpu"))
    ap.add_argument("--attn-compile",
                    default=os.path.join(ROOT, "build", "bin", "attn-compile"))
    ap.add_argument("--chip", default="sm_90a")
    ap.add_argument("--quick", action="store_true",
                    help="build: seq 1024 only")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    args = ap.parse_args()
    return build(args) if args.mode == "build" else run(args)


if __name__ == "__main__":
    sys.exit(main())
