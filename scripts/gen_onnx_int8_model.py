#!/usr/bin/env python3
"""Exports bert_wide-op18.onnx: scripts/gen_onnx_models.py's BertLike at a
width whose projections take attn-compile --quantize=int8's AVX-512 VNNI
kernels (K = 128 and 256, whole 64-byte steps), with its inputs and
PyTorch's output, into OUTDIR (default test/ONNX/Models).

    gen_onnx_int8_model.py [OUTDIR]      (torch and onnx needed)
"""

import os
import re
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        HERE, "..", "test", "ONNX", "Models")
    src = open(os.path.join(HERE, "gen_onnx_models.py")).read()
    for name, value in (("D_MODEL", "128"), ("D_FF", "256"), ("SEQ", "12"),
                        ("OPSETS", "(17,)")):
        src = re.sub(r"^%s = .*$" % name, "%s = %s" % (name, value), src,
                     count=1, flags=re.M)
    namespace = {"__name__": "gen_onnx_int8", "__file__": os.path.join(HERE, "gen_onnx_models.py")}
    exec(compile(src, "gen_onnx_models.py", "exec"), namespace)
    with tempfile.TemporaryDirectory() as tmp:
        sys.argv = ["gen_onnx_models.py", tmp, "bert_like"]
        namespace["main"]()
        for f in os.listdir(tmp):
            shutil.copy(os.path.join(tmp, f),
                        os.path.join(outdir, f.replace("bert_like", "bert_wide")))
            print(os.path.join(outdir, f.replace("bert_like", "bert_wide")))


if __name__ == "__main__":
    main()
