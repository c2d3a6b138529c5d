#!/usr/bin/env python3
"""Compiles attn ops with attn-compile, runs them on seeded random data and
compares every output with the independent numpy reference
(test/reference/attn_ref.py).

A *group* of cases becomes one model: each case adds its inputs, weights and
one output to a single `func.func @main`, so one compile covers many ops.

    opcheck.py GROUP --attn-compile PATH --workdir DIR [--target cpu]

Prints one line per case with its error and exits non-zero if any case is
outside its tolerance. The tolerance check is
    max|y - ref| <= tol * max(1, max|ref|)
i.e. relative to the output's magnitude.
"""

import argparse
import os
import re
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "reference"))
import attn_ref as ref  # noqa: E402
import tensorio  # noqa: E402

F32_TOL = 1e-5


def ttype(shape, dtype):
    name = {"f32": "f32", "f16": "f16", "bf16": "bf16", "i32": "i32", "i64": "i64"}[dtype]
    return "tensor<" + "".join(f"{d}x" for d in shape) + name + ">"


def round_to(x, dtype):
    """Rounds float64 data to what `dtype` can hold, returned as float64."""
    if dtype == "f32":
        return x.astype(np.float32).astype(np.float64)
    if dtype == "f16":
        return x.astype(np.float16).astype(np.float64)
    if dtype == "bf16":
        bits = tensorio.f32_to_bf16_bits(x.astype(np.float32))
        return tensorio.bf16_bits_to_f32(bits).astype(np.float64)
    return x


def storage(x, dtype):
    """The array as stored in .npy / safetensors for `dtype`."""
    if dtype == "f32":
        return x.astype(np.float32)
    if dtype == "f16":
        return x.astype(np.float16)
    if dtype == "bf16":
        return tensorio.f32_to_bf16_bits(x.astype(np.float32))
    if dtype == "i32":
        return x.astype(np.int32)
    if dtype == "i64":
        return x.astype(np.int64)
    raise ValueError(dtype)


class Case:
    """One op under test: named tensors (inputs or weights), the op text
    using them as %name, the result type, and the reference."""

    def __init__(self, name, tensors, op, result_shape, reference, dtype="f32",
                 tol=None):
        self.name = name
        self.tensors = tensors  # list of (name, shape, kind, dtype, generator)
        self.op = op
        self.result_shape = result_shape
        self.reference = reference
        self.dtype = dtype
        self.tol = tol if tol is not None else {"f32": F32_TOL, "f16": 2e-2, "bf16": 6e-2}[dtype]


def T(name, shape, kind="input", dtype="f32", gen="normal", scale=1.0):
    return (name, tuple(shape), kind, dtype, (gen, scale))


def make_data(rng, shape, dtype, gen):
    kind, scale = gen
    if kind == "normal":
        return round_to(rng.standard_normal(shape) * scale, dtype)
    if kind == "ones":
        return round_to(1.0 + 0.1 * rng.standard_normal(shape), dtype)
    if kind == "ints":  # scale = exclusive upper bound, or (lo, hi)
        lo, hi = (0, scale) if not isinstance(scale, tuple) else scale
        return rng.integers(lo, hi, size=shape).astype(np.int64)
    raise ValueError(kind)


def build(cases, rng):
    args, body, results, inputs, weights, expected = [], [], [], [], {}, []
    for ci, case in enumerate(cases):
        env = {}
        op = re.sub(r"\$(\w+)", lambda m, ci=ci: f"%c{ci}_{m.group(1)}", case.op)
        for (name, shape, kind, dtype, gen) in case.tensors:
            data = make_data(rng, shape, dtype, gen)
            env[name] = data
            ssa = f"c{ci}_{name}"
            if kind == "input":
                args.append(f"%{ssa}: {ttype(shape, dtype)}")
                inputs.append(storage(data, dtype))
            else:
                wname = f"case{ci}.{name}"
                body.append(f'  %{ssa} = attn.weight "{wname}" : {ttype(shape, dtype)}')
                weights[wname] = storage(data, dtype)
        rtype = ttype(case.result_shape, case.dtype)
        body.append(f"  %r{ci} = {op}")
        results.append((f"%r{ci}", rtype))
        expected.append(case.reference(env))
    mlir = ("func.func @main(" + ", ".join(args) + ") -> (" +
            ", ".join(t for _, t in results) + ") {\n" + "\n".join(body) +
            "\n  return " + ", ".join(v for v, _ in results) + " : " +
            ", ".join(t for _, t in results) + "\n}\n")
    return mlir, inputs, weights, expected


def load_output(path, dtype):
    raw = np.load(path)
    if dtype == "bf16":
        return tensorio.bf16_bits_to_f32(raw.view(np.uint16)).astype(np.float64)
    return raw.astype(np.float64)


def run_group(name, cases, compiler, workdir, target, seed=0):
    os.makedirs(workdir, exist_ok=True)
    rng = np.random.default_rng(seed)
    mlir, inputs, weights, expected = build(cases, rng)
    model_path = os.path.join(workdir, name + ".mlir")
    with open(model_path, "w") as f:
        f.write(mlir)
    exe = os.path.join(workdir, name + ".bin")
    subprocess.run([compiler, model_path, "--target=" + target, "-q", "-o", exe], check=True)
    cmd = [exe, "-q"]
    if weights:
        wpath = os.path.join(workdir, name + ".safetensors")
        tensorio.write_safetensors(wpath, weights,
                                   dtypes={k: "BF16" for k, v in weights.items() if v.dtype == np.uint16})
        cmd += ["--weights", wpath]
    for i, x in enumerate(inputs):
        p = os.path.join(workdir, f"{name}.in{i}.npy")
        np.save(p, x)
        cmd += ["--input", p]
    outs = [os.path.join(workdir, f"{name}.out{i}.npy") for i in range(len(cases))]
    for p in outs:
        cmd += ["--output", p]
    subprocess.run(cmd, check=True)
    failures = 0
    for case, out, exp in zip(cases, outs, expected):
        y = load_output(out, case.dtype)
        exp = np.asarray(exp, dtype=np.float64)
        if y.shape != exp.shape:
            print(f"FAIL {case.name}: shape {y.shape} vs reference {exp.shape}")
            failures += 1
            continue
        err = float(np.max(np.abs(y - exp))) if y.size else 0.0
        mag = max(1.0, float(np.max(np.abs(exp))) if exp.size else 1.0)
        ok = np.all(np.isfinite(y)) and err <= case.tol * mag
        print(f"{'PASS' if ok else 'FAIL'} {case.name}: max abs err {err:.3e} "
              f"(tolerance {case.tol * mag:.1e}, |ref| max {mag:.3g})")
        failures += 0 if ok else 1
    return failures


def main():
    sys.path.insert(0, HERE)
    import opcases  # noqa: E402
    parser = argparse.ArgumentParser()
    parser.add_argument("group")
    parser.add_argument("--attn-compile", required=True)
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--target", default="cpu")
    args = parser.parse_args()
    groups = opcases.groups()
    if args.group not in groups:
        sys.exit(f"unknown group {args.group}; have {sorted(groups)}")
    failures = run_group(args.group, groups[args.group], args.attn_compile,
                         args.workdir, args.target)
    print(f"{len(groups[args.group]) - failures} passed, {failures} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
