"""attnc.compile: attn-compile run as a subprocess."""

import os
import shutil
import subprocess
import tempfile

from ._errors import AttncError


def _find_compiler():
    candidates = []
    if os.environ.get("ATTNC_BIN_DIR"):
        candidates.append(os.path.join(os.environ["ATTNC_BIN_DIR"],
                                       "attn-compile"))
    # Used from the source tree: python/attnc -> build/bin.
    here = os.path.dirname(os.path.abspath(__file__))
    candidates.append(os.path.join(here, "..", "..", "build", "bin",
                                   "attn-compile"))
    for path in candidates:
        if os.access(path, os.X_OK):
            return os.path.abspath(path)
    found = shutil.which("attn-compile")
    if found:
        return found
    raise AttncError("attn-compile not found: set ATTNC_BIN_DIR to the "
                     "directory holding it (e.g. build/bin) or put it on PATH")


def _option_args(options):
    """attn-compile flags from keyword options: chip="sm_90a" ->
    --chip=sm_90a, raise_=False or no_raise=True -> --no-raise,
    input_shape={"x": (1, 8)} -> --input-shape x=1x8 (None -> ?, a size
    chosen at run time: {"input_ids": (2, None)} -> input_ids=2x?), lists
    repeat."""
    args = []
    for key, value in options.items():
        flag = "--" + key.rstrip("_").replace("_", "-")
        if key == "input_shape":
            for name, dims in dict(value).items():
                args += ["--input-shape",
                         "%s=%s" % (name, "x".join(
                             "?" if d is None else str(int(d))
                             for d in dims))]
        elif value is True:
            args.append(flag)
        elif value is False:
            args.append("--" + flag[5:] if flag.startswith("--no-")
                        else "--no-" + flag[2:])
        elif value is None:
            continue
        elif isinstance(value, (list, tuple)):
            args += ["%s=%s" % (flag, v) for v in value]
        else:
            args.append("%s=%s" % (flag, value))
    return args


def compile(path, output=None, *, target="cpu", **options):
    """Compiles `path` (.mlir, .onnx or a Hugging Face checkpoint directory)
    into a shared library and returns its path. `output` defaults to
    lib<stem>.so in a new temporary directory; an imported model's weights
    are written beside it (<output>.safetensors), where `load` finds them.
    Other keyword options become attn-compile flags (see _option_args)."""
    if output is None:
        stem = os.path.basename(os.path.normpath(str(path)))
        stem = stem.split(".")[0] or "model"
        output = os.path.join(tempfile.mkdtemp(prefix="attnc-"),
                              "lib%s.so" % stem)
    cmd = [_find_compiler(), "-q", str(path), "--target=%s" % target,
           "--shared", "-o", str(output)] + _option_args(options)
    result = subprocess.run(cmd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    if result.returncode != 0:
        raise AttncError(result.stderr.strip() or
                         "attn-compile failed with status %d"
                         % result.returncode)
    return str(output)
