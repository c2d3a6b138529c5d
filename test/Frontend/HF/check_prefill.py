#!/usr/bin/env python3
"""Checks a KV-cache step compiled with a run-time token count
(--input-shape input_ids=2x? --kv-cache 16) against the full-sequence
model compiled from the same checkpoint (f32, 1e-5 relative), on two rows
of 16 test ids (the checkpoint's input_ids.npy and its reverse):

- prefill: one T = 16 step from position 0 gives the full model's logits
  at every position, and on the first row transformers' (expected.npy,
  also 1e-5 relative: the tiny checkpoints' errors are about 5e-7);
- rows of different lengths: a padded prefill of 5 and 9 tokens (T = 9),
  then one T = 4 step that starts each row at its own length (positions
  5 and 9), gives the full model's logits at positions 0-4 / 0-8 and then
  5-8 / 9-12: queries are aligned to each row's start, and the padding
  rows the first step wrote are overwritten or never seen;
- decode: one-token steps after that batched prefill give the same
  logits as after a token-by-token prefill through a step compiled for
  T = 1 (--input-shape input_ids=2x1), and as the full model;
- Model.generate (the session: one prefill run, then decode) on the
  checkpoint's two generation prompts (5 and 9 tokens) gives transformers'
  greedy tokens (generate_expected.npy), as many as the 16 positions hold;
- a step whose positions + T pass the cache end fails before it runs.
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "reference"))
import checkutil  # noqa: E402


def main():
    args, attnc, build = checkutil.checkpoint_builder()
    row = np.load(os.path.join(args.checkpoint, "input_ids.npy"))[0]
    ids = np.stack([row, row[::-1]]).astype(np.int64)
    batch, seq = ids.shape
    full = build("prefill-full", input_shape={"input_ids": (batch, seq)})
    dyn = build("prefill-dyn", input_shape={"input_ids": (batch, None)},
                kv_cache=seq)
    one = build("prefill-one", input_shape={"input_ids": (batch, 1)},
                kv_cache=seq)
    ref = full.run(input_ids=ids)["logits"].astype(np.float64)

    def step(model, tokens, positions):
        return model.run(input_ids=np.ascontiguousarray(tokens),
                         positions=np.asarray(positions, np.int64)
                         )["logits"].astype(np.float64)

    ok = True
    # 1. The whole sequence in one step.
    dyn.reset_state()
    whole = step(dyn, ids, [0, 0])
    err_whole = checkutil.rel_err(whole, ref)
    expected = np.load(os.path.join(args.checkpoint, "expected.npy"))
    err_hf = checkutil.rel_err(whole[:1], expected)
    ok &= err_whole <= 1e-5 and err_hf <= 1e-5

    # 2. Prompts of 5 and 9 tokens, padded to 9 (pad id 0), then 4 tokens
    # per row from each row's own length.
    lengths = [5, 9]
    dyn.reset_state()
    padded = np.zeros((batch, max(lengths)), np.int64)
    for b, n in enumerate(lengths):
        padded[b, :n] = ids[b, :n]
    first = step(dyn, padded, [0, 0])
    errs = [checkutil.rel_err(first[b, :n], ref[b, :n])
            for b, n in enumerate(lengths)]
    nxt = np.stack([ids[b, n:n + 4] for b, n in enumerate(lengths)])
    second = step(dyn, nxt, lengths)
    errs += [checkutil.rel_err(second[b], ref[b, n:n + 4])
             for b, n in enumerate(lengths)]
    err_ragged = max(errs)
    ok &= err_ragged <= 1e-5

    # 3. Decode one token at a time after the batched prefill of 9 tokens
    # (both rows), and after a token-by-token prefill of the T = 1 step.
    prompt = 9
    dyn.reset_state()
    step(dyn, ids[:, :prompt], [0, 0])
    one.reset_state()
    for t in range(prompt):
        step(one, ids[:, t:t + 1], [t, t])
    err_decode = err_vs_full = 0.0
    for t in range(prompt, seq):
        a = step(dyn, ids[:, t:t + 1], [t, t])
        b = step(one, ids[:, t:t + 1], [t, t])
        err_decode = max(err_decode, checkutil.rel_err(a, b))
        err_vs_full = max(err_vs_full, checkutil.rel_err(a[:, 0], ref[:, t]))
    ok &= err_decode <= 1e-5 and err_vs_full <= 1e-5

    # 4. The runtime refuses a step that would write past the cache end
    # (positions + T > 16) before the model runs, and takes one that ends
    # exactly there.
    dyn.reset_state()
    step(dyn, ids[:, :4], [0, seq - 4])
    overflow = ""
    try:
        step(dyn, ids[:, :4], [0, seq - 3])
    except attnc.AttncError as e:
        overflow = str(e)
    print(f"overflow: {overflow}")
    ok &= "pass the end of the KV cache" in overflow

    # 5. Python's generate over the session.
    prompts = np.load(os.path.join(args.checkpoint, "generate_prompt.npy"))
    prompt_lengths = np.load(os.path.join(args.checkpoint, "generate_lengths.npy"))
    new = seq - int(prompt_lengths.max())
    want = np.load(os.path.join(args.checkpoint, "generate_expected.npy"))[:, :new]
    got = dyn.generate(prompts, new, lengths=prompt_lengths)
    same_tokens = bool(np.array_equal(got, want))
    ok &= same_tokens

    return checkutil.verdict(
        ok,
        f"prefill of {seq} tokens vs full sequence {err_whole:.2e}, vs "
        f"transformers {err_hf:.2e}; "
        f"rows of {lengths[0]} and {lengths[1]} tokens then 4 from each "
        f"row's length {err_ragged:.2e}; decode after batched vs "
        f"token-by-token prefill {err_decode:.2e}, vs full sequence "
        f"{err_vs_full:.2e} (tol 1e-5); generate: {new} greedy tokens "
        f"{'equal to' if same_tokens else 'DIFFER from'} transformers'")


if __name__ == "__main__":
    sys.exit(main())
