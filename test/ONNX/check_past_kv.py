#!/usr/bin/env python3
"""Checks a decoder exported to ONNX with past key/values
(scripts/gen_onnx_past_kv.py: <name>_past-op17.onnx from the checkpoint
test/Frontend/HF/Inputs/<name>, GPT-2 or LLaMA; the references are
Models/past/<name>_past.*):

- as exported (no --input-shape, no --kv-cache): compiled once, it runs at
  every committed (batch, past, new tokens) shape and matches onnxruntime's
  logits and present keys/values (Models/past, 1e-5 relative);
- bound to a KV cache (--input-shape input_ids=2x? --kv-cache 16): the past
  inputs become model state and the step takes `positions`. Against the
  full-sequence model compiled from the checkpoint by the HF importer (and
  transformers' logits, expected.npy, for the first row):
  one 16-token step from position 0; rows of 5 and 9 tokens (padded), then
  4 tokens from each row's own length; one-token decode steps after a
  9-token prefill (all 1e-5 relative); Model.generate on the checkpoint's
  two prompts gives transformers' greedy tokens (generate_expected.npy).
  Inputs the step no longer has (LLaMA's position_ids, replaced by
  `positions[b] + t`) are not fed.
"""

import glob
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reference"))
import checkutil  # noqa: E402


def main():
    ap = checkutil.attnc_parser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--checkpoint", required=True)
    ap.add_argument("--stateless-only", action="store_true",
                    help="check only the model as exported")
    args = ap.parse_args()
    attnc = checkutil.import_attnc(args.src, args.bin)
    ok = True

    # 1. The exported function of the past, at three shapes.
    lib = attnc.compile(args.model, os.path.join(args.workdir, "libpast.so"))
    stateless = attnc.load(lib)
    refdir = os.path.join(os.path.dirname(args.model), "past")
    name = os.path.basename(args.model).split("-op")[0]
    shapes = sorted({os.path.basename(p).split(".")[1] for p in
                     glob.glob(os.path.join(refdir, f"{name}.*.input_ids.npy"))})
    err_stateless = 0.0
    for shape in shapes:
        stem = os.path.join(refdir, f"{name}.{shape}")
        inputs = {os.path.basename(p)[len(f"{name}.{shape}."):-len(".npy")]:
                  np.load(p) for p in glob.glob(stem + ".*.npy")
                  if not p.endswith(".ref.npy")}
        outputs = stateless.run(**inputs)
        for output, value in outputs.items():
            ref = np.load(f"{stem}.{output}.ref.npy")
            ok &= value.shape == ref.shape
            err_stateless = max(err_stateless, checkutil.rel_err(value, ref))
    ok &= len(shapes) == 3 and err_stateless <= 1e-5
    print(f"as exported: {len(shapes)} shapes ({', '.join(shapes)}), "
          f"logits and presents vs onnxruntime {err_stateless:.2e}")
    if args.stateless_only:
        return checkutil.verdict(ok, "as exported")

    # 2. Bound to a KV cache of 16 positions.
    row = np.load(os.path.join(args.checkpoint, "input_ids.npy"))[0]
    ids = np.stack([row, row[::-1]]).astype(np.int64)
    batch, seq = ids.shape
    step_lib = attnc.compile(args.model, os.path.join(args.workdir, "libstep.so"),
                             input_shape={"input_ids": (batch, None)},
                             kv_cache=seq)
    step_model = attnc.load(step_lib)
    print("step inputs:", [i.name for i in step_model.inputs],
          "states:", [s.name for s in step_model.states])
    full = attnc.load(attnc.compile(
        args.checkpoint, os.path.join(args.workdir, "libfull.so"),
        input_shape={"input_ids": (batch, seq)}),
        weights=os.path.join(args.checkpoint, "model.safetensors"))
    ref = full.run(input_ids=ids)["logits"].astype(np.float64)
    expected = np.load(os.path.join(args.checkpoint, "expected.npy"))

    def step(tokens, positions):
        return step_model.run(input_ids=np.ascontiguousarray(tokens),
                              positions=np.asarray(positions, np.int64)
                              )["logits"].astype(np.float64)

    step_model.reset_state()
    whole = step(ids, [0, 0])
    err_whole = max(checkutil.rel_err(whole, ref),
                    checkutil.rel_err(whole[:1], expected))
    lengths = [5, 9]
    step_model.reset_state()
    padded = np.zeros((batch, max(lengths)), np.int64)
    for b, n in enumerate(lengths):
        padded[b, :n] = ids[b, :n]
    first = step(padded, [0, 0])
    errs = [checkutil.rel_err(first[b, :n], ref[b, :n])
            for b, n in enumerate(lengths)]
    second = step(np.stack([ids[b, n:n + 4] for b, n in enumerate(lengths)]),
                  lengths)
    errs += [checkutil.rel_err(second[b], ref[b, n:n + 4])
             for b, n in enumerate(lengths)]
    err_ragged = max(errs)
    step_model.reset_state()
    step(ids[:, :9], [0, 0])
    err_decode = max(checkutil.rel_err(step(ids[:, t:t + 1], [t, t])[:, 0],
                                       ref[:, t]) for t in range(9, seq))
    ok &= max(err_whole, err_ragged, err_decode) <= 1e-5

    prompts = np.load(os.path.join(args.checkpoint, "generate_prompt.npy"))
    prompt_lengths = np.load(os.path.join(args.checkpoint,
                                          "generate_lengths.npy"))
    new = seq - int(prompt_lengths.max())
    want = np.load(os.path.join(args.checkpoint,
                                "generate_expected.npy"))[:, :new]
    same = bool(np.array_equal(step_model.generate(prompts, new,
                                                   lengths=prompt_lengths),
                               want))
    ok &= same
    return checkutil.verdict(
        ok,
        f"KV-cache step: 16 tokens vs full sequence and transformers "
        f"{err_whole:.2e}; rows of 5 and 9 tokens then 4 from each row's "
        f"length {err_ragged:.2e}; decode after prefill {err_decode:.2e} "
        f"(tol 1e-5); generate: {new} greedy tokens "
        f"{'equal to' if same else 'DIFFER from'} transformers'")


if __name__ == "__main__":
    sys.exit(main())
