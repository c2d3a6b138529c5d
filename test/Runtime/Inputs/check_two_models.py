"""Not a test: checker for two-models.test.

    check_two_models.py exports LIB PREFIX
        every dynamic symbol LIB defines is attnrt_* or PREFIX_attnrt_*, and
        every function attnrt.h declares is there under both names
    check_two_models.py run DIR CMD...
        writes DIR/a.safetensors (Tools/Inputs/two-ops.mlir: relu(x + bias))
        and DIR/b.safetensors (Integration/CPU/Inputs/linear-relu.mlir:
        relu(x W^T + b)), runs CMD (two_models.c), and compares the two
        output lines with numpy.
"""

import os
import re
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "reference"))
import tensorio  # noqa: E402


def exports(lib, prefix):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], check=True,
                         capture_output=True, text=True).stdout
    names = [line.split()[-1] for line in out.splitlines() if line.strip()]
    pattern = re.compile(r"(%s_)?attnrt_\w+$" % re.escape(prefix))
    stray = [n for n in names if not pattern.match(n)]
    if stray:
        sys.exit("%s exports more than the C API: %s" % (lib, " ".join(stray[:20])))
    header = os.path.join(HERE, "..", "..", "..", "include", "attnc",
                          "Runtime", "attnrt.h")
    with open(header) as f:
        api = sorted(set(re.findall(r"^[\w ]*?\**\b(attnrt_\w+)\(", f.read(),
                                    re.MULTILINE)))
    missing = [n for fn in api for n in (fn, prefix + "_" + fn)
               if n not in names]
    if len(api) < 50 or missing:
        sys.exit("%s does not export %s" % (lib, " ".join(missing) or
                                            "the API (attnrt.h not parsed?)"))
    print("%s: %d symbols, all attnrt_* or %s_attnrt_*" % (os.path.basename(lib),
                                                          len(names), prefix))


def run(workdir, cmd):
    x = ((np.arange(8) % 7) * 0.5 - 1.5).astype(np.float32).reshape(2, 4)
    rng = np.random.default_rng(9)
    bias = rng.standard_normal((2, 4)).astype(np.float32)
    w = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal(3).astype(np.float32)
    tensorio.write_safetensors(os.path.join(workdir, "a.safetensors"), {"bias": bias})
    tensorio.write_safetensors(os.path.join(workdir, "b.safetensors"),
                               {"proj.weight": w, "proj.bias": b})
    expected = {"a": np.maximum(x + bias, 0).ravel(),
                "b": np.maximum(x @ w.T + b, 0).ravel()}
    proc = subprocess.run(cmd, capture_output=True, text=True)
    sys.stderr.write(proc.stderr)
    if proc.returncode != 0:
        sys.exit("%s exited with %d" % (cmd[0], proc.returncode))
    got = {}
    for line in proc.stdout.splitlines():
        m = re.match(r"model (\w): (.*)", line)
        if m:
            got[m.group(1)] = np.array([float(v) for v in m.group(2).split()],
                                       dtype=np.float32)
    for name in ("a", "b"):
        if name not in got:
            sys.exit("no output of model %s" % name)
        if got[name].shape != expected[name].shape:
            sys.exit("model %s: %d values, expected %d" % (
                name, got[name].size, expected[name].size))
        err = float(np.max(np.abs(got[name] - expected[name])))
        if err > 1e-5:
            sys.exit("model %s: max error %g against numpy" % (name, err))
        print("model %s: %d values match numpy" % (name, got[name].size))


def main():
    if sys.argv[1] == "exports":
        exports(sys.argv[2], sys.argv[3])
    else:
        run(sys.argv[2], sys.argv[3:])


if __name__ == "__main__":
    main()
