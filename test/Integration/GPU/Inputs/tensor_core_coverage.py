#!/usr/bin/env python3
"""Checks that every matmul and attention of an f16/bf16 model runs on the
tensor cores.

    tensor_core_coverage.py --attn-opt PATH [--pipeline-options OPTS] \\
        NAME=MODEL.mlir ...

For each model (attn IR) this runs attn-to-cuda up to bufferization with the
given options (e.g. "chip=sm_90a precision=f16"), then attn-gpu-mma-matmul,
and counts in the IR before and after that pass:

  - the matmul contractions: linalg.generics over 2-D buffers with two
    parallel and one reduction loop whose body multiplies and adds;
  - the tensor-core kernels after it (gpu.launch with nvgpu.mma.sync or
    nvvm.mma.sync: attn-gpu-flash-attention's included);
  - f32 copies of weights: extf-only generics that widen a rank-2 function
    argument (a weight matrix: activations are [B, S, D]) into f32.

and, in the same run, the attention: the attn.sdpa ops that reach
attn-gpu-flash-attention (attn.mha is decomposed before it on CUDA) and
those it leaves to the generic flash loops (SIMT kernels), printed before
and after it (--mlir-print-ir-before/after); the tensor-core flash kernels
are the gpu.launch ops it emitted that multiply with mma.sync.

Prints `NAME: M matmuls, T on tensor cores (K tensor-core kernels, W on
wgmma), A attentions, F on tensor cores (L mma.sync flash kernels), C f32
weight copies` per model, followed by one `  missed: A x B -> C` line per
contraction left and one `  missed attention: ...` line per attn.sdpa left
(its operands, masks and types); fails (status 1) unless every matmul and
every attention of every model was taken (one mma.sync kernel each) and no
weight is widened.
"""

import argparse
import re
import subprocess
import sys

GENERIC = re.compile(
    r"linalg\.generic \{[^\n]*?iterator_types = \[([^\]]*)\][^\n]*?"
    r"ins\(([^)]*)\)\s*outs\(([^)]*)\)[^\n]*\{\n(.*?)\n\s*linalg\.yield",
    re.S)


def memref_shapes(operands):
    return [t.split(",")[0] for t in re.findall(r"memref<([^>]*)>", operands)]


def matmuls(ir):
    found = []
    for m in GENERIC.finditer(ir):
        its = m.group(1)
        if its.count('"parallel"') != 2 or its.count('"reduction"') != 1:
            continue
        shapes = memref_shapes(m.group(2)) + memref_shapes(m.group(3))
        if len(shapes) != 3 or any(s.count("x") != 2 for s in shapes):
            continue
        if "arith.mulf" in m.group(4) and "arith.addf" in m.group(4):
            found.append(shapes)
    return found


def weight_copies(ir):
    copies = []
    for m in GENERIC.finditer(ir):
        body = m.group(4).strip().splitlines()
        if len(body) != 2 or "arith.extf" not in body[1]:
            continue
        src = re.match(r"\s*(%arg\d+) : memref<([^>]*)>", m.group(2))
        if src and src.group(2).split(",")[0].count("x") == 2:
            copies.append(src.group(2))
    return copies


def kernels(ir):
    """(tensor-core kernels, those on wgmma.mma_async)."""
    count = wgmma = 0
    for launch in ir.split("gpu.launch ")[1:]:
        body = launch.split("gpu.terminator", 1)[0]
        if "nvgpu.mma.sync" in body or "nvvm.mma.sync" in body or \
                "nvvm.wgmma.mma_async" in body:
            count += 1
        wgmma += "nvvm.wgmma.mma_async" in body
    return count, wgmma


def run(cmd):
    return subprocess.run(cmd, check=True, capture_output=True,
                          text=True).stdout


FLASH_PASS = "attn-gpu-flash-attention"
DUMP = re.compile(r"^// -----// IR Dump (Before|After) .*?\((\S+)\)",
                  re.M)


def flash_dumps(log):
    """The IR printed before and after attn-gpu-flash-attention (one dump
    per function each), as two strings."""
    parts = {"Before": [], "After": []}
    marks = list(DUMP.finditer(log))
    for i, m in enumerate(marks):
        if m.group(2) != FLASH_PASS:
            continue
        end = marks[i + 1].start() if i + 1 < len(marks) else len(log)
        parts[m.group(1)].append(log[m.end():end])
    return "\n".join(parts["Before"]), "\n".join(parts["After"])


def sdpa_ops(ir):
    return [line.strip() for line in ir.splitlines()
            if re.search(r"= attn\.sdpa ", line)]


def mma_launches(ir):
    return sum(any(mma in launch.split("gpu.terminator", 1)[0]
                   for mma in ("nvgpu.mma.sync", "nvvm.mma.sync"))
               for launch in ir.split("gpu.launch ")[1:])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--attn-opt", required=True)
    parser.add_argument("--pipeline-options", default="chip=sm_90a")
    parser.add_argument("models", nargs="+", metavar="NAME=MODEL")
    args = parser.parse_args()
    failed = False
    for spec in args.models:
        name, path = spec.split("=", 1)
        done = subprocess.run(
            [args.attn_opt, path, "--attn-to-cuda=" + args.pipeline_options
             + " stop-after=bufferized", "--mlir-disable-threading",
             "--mlir-print-ir-before=" + FLASH_PASS,
             "--mlir-print-ir-after=" + FLASH_PASS],
            check=True, capture_output=True, text=True)
        before = done.stdout
        pre_flash, post_flash = flash_dumps(done.stderr)
        attention = sdpa_ops(pre_flash)
        left_attention = sdpa_ops(post_flash)
        flash_kernels = mma_launches(post_flash)
        # As attn-to-cuda runs it: wgmma on sm_90a.
        wgmma = "chip=sm_90a" in args.pipeline_options and \
            "wgmma=false" not in args.pipeline_options
        after = subprocess.run(
            [args.attn_opt, "-", "--attn-gpu-mma-matmul"
             + ("=wgmma=1" if wgmma else "")], input=before,
            check=True, capture_output=True, text=True).stdout
        total, left = matmuls(before), matmuls(after)
        copies = weight_copies(after)
        taken = len(total) - len(left)
        count, on_wgmma = kernels(after)
        attention_taken = len(attention) - len(left_attention)
        print(f"{name}: {len(total)} matmuls, {taken} on tensor cores "
              f"({count} tensor-core kernels, {on_wgmma} on wgmma), "
              f"{len(attention)} attentions, {attention_taken} on tensor "
              f"cores ({flash_kernels} mma.sync flash kernels), "
              f"{len(copies)} f32 weight copies")
        for a, b, c in left:
            print(f"  missed: {a} x {b} -> {c}")
        for op in left_attention:
            print(f"  missed attention: {op}")
        for w in copies:
            print(f"  widened weight: {w}")
        if left or copies or not total or not attention or left_attention or \
                flash_kernels != len(attention):
            failed = True
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
