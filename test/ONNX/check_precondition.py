#!/usr/bin/env python3
"""A failed check of the input sizes (here: an attention mask that is not
past + sequence long, a sequence past the 64-row position table) fails the
run with the located message as an attnc.AttncError; the process goes on
and the model still runs correct inputs afterwards.

    check_precondition.py --src SRC --bin BIN --workdir DIR --model M.onnx
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reference"))
import checkutil  # noqa: E402


def main():
    ap = checkutil.attnc_parser()
    ap.add_argument("--model", required=True)
    args = ap.parse_args()
    attnc = checkutil.import_attnc(args.src, args.bin)
    model = attnc.load(attnc.compile(args.model,
                                     os.path.join(args.workdir, "libpre.so")))

    def feeds(past, new, mask):
        f = {"input_ids": np.ones((2, new), np.int64),
             "attention_mask": np.ones((2, mask), np.int64)}
        for i in range(2):
            for kv in ("key", "value"):
                f[f"past_key_values.{i}.{kv}"] = np.zeros((2, 4, past, 8),
                                                          np.float32)
        return f

    for past, new, mask in ((2, 4, 5), (60, 10, 70), (2, 4, 6)):
        try:
            out = model.run(**feeds(past, new, mask))
            print(f"past {past}, new {new}, mask {mask}: logits "
                  f"{out['logits'].shape}")
        except attnc.AttncError as e:
            print(f"past {past}, new {new}, mask {mask}: AttncError: {e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
