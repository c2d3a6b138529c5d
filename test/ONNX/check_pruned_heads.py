#!/usr/bin/python3
"""Head pruning on an imported model, checked without trusting the pruner.

    check_pruned_heads.py MODEL.onnx --attn-compile BIN --workdir DIR
        --layer L --heads 1,3 --out-proj NAME --head-dim DH [--axis A]

Dropping head h of a layer is the same as zeroing the rows of its output
projection that read head h (rows [h * DH, (h + 1) * DH) along axis A of the
stored tensor NAME; A = 0 for Conv1D's [in, out] and for nn.Linear's
[out, in] transposed, 1 for nn.Linear's [out, in]). So the model compiled
with --prune (kept heads only, attn.mha raised from the export) must match
the unpruned model (checked against PyTorch by <model>.test) run on weights
with the dropped heads' rows zeroed. Inputs are Models/<name>.<input>.npy.
"""

import json
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reference"))
import checkutil  # noqa: E402
import tensorio  # noqa: E402


def main():
    p = checkutil.onnx_model_parser()
    p.add_argument("--layer", type=int, required=True)
    p.add_argument("--heads", required=True, help="kept heads, e.g. 1,3")
    p.add_argument("--num-heads", type=int, required=True)
    p.add_argument("--out-proj", required=True)
    p.add_argument("--head-dim", type=int, required=True)
    p.add_argument("--axis", type=int, default=0)
    args = p.parse_args()

    base, inputs = checkutil.model_inputs(args.model)
    name = os.path.basename(base)
    shapes = checkutil.input_shape_flags(inputs)
    run_inputs = []
    for key, f in inputs.items():
        run_inputs += ["--input", "%s=%s" % (key, f)]

    kept = [int(h) for h in args.heads.split(",")]
    spec = os.path.join(args.workdir, name + ".prune.json")
    with open(spec, "w") as f:
        json.dump({"layers": {str(args.layer): {"heads": kept}}}, f)

    full = os.path.join(args.workdir, name + "-full")
    pruned = os.path.join(args.workdir, name + "-pruned")
    subprocess.run([args.attn_compile, "-q", args.model, "-o", full] + shapes, check=True)
    r = subprocess.run([args.attn_compile, args.model, "--prune=" + spec, "-o", pruned] + shapes,
                       capture_output=True, text=True)
    sys.stdout.write(r.stderr)
    if r.returncode != 0:
        sys.exit("FAIL: pruned compile failed")

    weights = tensorio.read_safetensors(full + ".safetensors")
    w = weights[args.out_proj].copy()
    for h in range(args.num_heads):
        if h not in kept:
            index = [slice(None)] * w.ndim
            index[args.axis] = slice(h * args.head_dim, (h + 1) * args.head_dim)
            w[tuple(index)] = 0
    weights[args.out_proj] = w
    zeroed = os.path.join(args.workdir, name + "-zeroed.safetensors")
    tensorio.write_safetensors(zeroed, weights)

    y_ref = os.path.join(args.workdir, name + "-zeroed.npy")
    y = os.path.join(args.workdir, name + "-pruned.npy")
    subprocess.run([full, "--weights", zeroed, "--output", y_ref, "-q"] + run_inputs, check=True)
    subprocess.run([pruned, "--output", y, "-q"] + run_inputs, check=True)
    a, ref = np.load(y), np.load(y_ref)
    err = float(np.max(np.abs(a.astype(np.float64) - ref)))
    scale = max(1.0, float(np.max(np.abs(ref))))
    full_out = os.path.join(args.workdir, name + "-full.npy")
    subprocess.run([full, "--output", full_out, "-q"] + run_inputs, check=True)
    changed = float(np.max(np.abs(np.load(full_out).astype(np.float64) - ref)))
    return checkutil.verdict(
        err <= 1e-5 * scale and changed > 1e-3,
        "%s pruned to heads %s of layer %d: max abs err %.2e against zeroed heads "
        "(pruning changes the output by %.2e)" % (name, args.heads, args.layer, err, changed))


if __name__ == "__main__":
    sys.exit(main())
