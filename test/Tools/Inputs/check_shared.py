"""Loads a library written by `attn-compile --shared` for Inputs/two-ops.mlir
with ctypes and drives it through the attnrt C API: open the linked model,
check its manifest, bind weights, run, and compare with numpy.

    check_shared.py LIB.so WORKDIR

Prints one line per check; exits non-zero on the first mismatch.
"""

import ctypes
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "reference"))
import tensorio  # noqa: E402


def main():
    lib_path, workdir = sys.argv[1], sys.argv[2]
    os.makedirs(workdir, exist_ok=True)
    lib = ctypes.CDLL(os.path.abspath(lib_path))
    P, I, S = ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t
    lib.attnrt_open_linked.restype = P
    lib.attnrt_open_linked.argtypes = [ctypes.c_char_p, S]
    for fn in ("attnrt_num_weights", "attnrt_num_inputs", "attnrt_num_outputs"):
        getattr(lib, fn).restype = I
        getattr(lib, fn).argtypes = [P]
    lib.attnrt_target.restype = ctypes.c_char_p
    lib.attnrt_target.argtypes = [P]
    for fn in ("attnrt_input_name", "attnrt_output_name"):
        getattr(lib, fn).restype = ctypes.c_char_p
        getattr(lib, fn).argtypes = [P, I]
    # attnrt_dtype is a C enum: an int.
    lib.attnrt_input_dtype.restype = I
    lib.attnrt_input_dtype.argtypes = [P, I]
    lib.attnrt_dtype_name.restype = ctypes.c_char_p
    lib.attnrt_dtype_name.argtypes = [I]
    lib.attnrt_input_rank.restype = I
    lib.attnrt_input_rank.argtypes = [P, I]
    lib.attnrt_input_dim.restype = ctypes.c_int64
    lib.attnrt_input_dim.argtypes = [P, I, I]
    lib.attnrt_last_error.restype = ctypes.c_char_p
    lib.attnrt_last_error.argtypes = [P]
    lib.attnrt_bind_weights.restype = I
    lib.attnrt_bind_weights.argtypes = [P, ctypes.c_char_p]
    lib.attnrt_set_input.restype = I
    lib.attnrt_set_input.argtypes = [P, I, P, S]
    lib.attnrt_run.restype = I
    lib.attnrt_run.argtypes = [P]
    lib.attnrt_get_output.restype = I
    lib.attnrt_get_output.argtypes = [P, I, P, S]
    lib.attnrt_close.restype = None
    lib.attnrt_close.argtypes = [P]

    err = ctypes.create_string_buffer(1024)
    m = lib.attnrt_open_linked(err, len(err))
    if not m:
        sys.exit("attnrt_open_linked failed: " + err.value.decode())
    print("opened: target", lib.attnrt_target(m).decode())
    print("weights", lib.attnrt_num_weights(m), "inputs", lib.attnrt_num_inputs(m),
          "outputs", lib.attnrt_num_outputs(m))
    shape = tuple(lib.attnrt_input_dim(m, 0, a) for a in range(lib.attnrt_input_rank(m, 0)))
    print("input 0", lib.attnrt_input_name(m, 0).decode(),
          lib.attnrt_dtype_name(lib.attnrt_input_dtype(m, 0)).decode(), shape)
    print("output 0", lib.attnrt_output_name(m, 0).decode())

    rng = np.random.default_rng(0)
    bias = rng.standard_normal((2, 4)).astype(np.float32)
    x = rng.standard_normal((2, 4)).astype(np.float32)
    wpath = os.path.join(workdir, "two-ops.safetensors")
    tensorio.write_safetensors(wpath, {"bias": bias})

    def check(rc, what):
        if rc:
            sys.exit(what + " failed: " + lib.attnrt_last_error(m).decode())

    check(lib.attnrt_bind_weights(m, wpath.encode()), "attnrt_bind_weights")
    check(lib.attnrt_set_input(m, 0, x.ctypes.data, x.nbytes), "attnrt_set_input")
    check(lib.attnrt_run(m), "attnrt_run")
    y = np.empty((2, 4), np.float32)
    check(lib.attnrt_get_output(m, 0, y.ctypes.data, y.nbytes), "attnrt_get_output")
    expected = np.maximum(x + bias, 0)
    err_max = float(np.max(np.abs(y - expected)))
    print("max abs err %.3g" % err_max)
    lib.attnrt_close(m)
    if err_max > 1e-6:
        sys.exit("FAIL: output differs from relu(x + bias)")
    print("PASS")


if __name__ == "__main__":
    main()
