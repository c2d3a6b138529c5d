#!/usr/bin/env python3
"""Drives the dry fake driver (build/lib/dry-cuda/libcuda.so.1, what
scripts/gpu/run.sh --dry runs the bundle on) with a real cubin and launches
that the CUDA driver accepts or rejects; prints one line per call: its
result, and the driver's diagnostic on stderr.

    dry_driver_check.py LIBCUDA KERNEL.cubin
"""

import ctypes
import functools
import sys

print = functools.partial(print, flush=True)  # in order with the driver's stderr


def main():
    cuda = ctypes.CDLL(sys.argv[1])
    image = open(sys.argv[2], "rb").read()
    c_u64 = ctypes.c_uint64
    assert cuda.cuInit(0) == 0
    module = ctypes.c_void_p()
    print("load cubin:", cuda.cuModuleLoadData(ctypes.byref(module), image))
    print("load garbage:", cuda.cuModuleLoadData(
        ctypes.byref(ctypes.c_void_p()), b"\x7fELF" + b"\0" * 60))
    fn = ctypes.c_void_p()
    print("get missing:", cuda.cuModuleGetFunction(ctypes.byref(fn), module,
                                                   b"nope"))
    print("get kern:", cuda.cuModuleGetFunction(ctypes.byref(fn), module,
                                                b"kern"))
    dev = c_u64()
    assert cuda.cuMemAlloc_v2(ctypes.byref(dev), ctypes.c_size_t(256)) == 0
    host = ctypes.create_string_buffer(64)
    n = ctypes.c_int32(3)
    desc = (ctypes.c_uint64 * 5)(dev.value, dev.value, 0, 16, 1)
    b = c_u64(dev.value + 64)

    def launch(what, block=128, smem=0, a=dev, grid=1):
        params = (ctypes.c_void_p * 4)(
            ctypes.cast(ctypes.byref(a), ctypes.c_void_p),
            ctypes.cast(ctypes.byref(n), ctypes.c_void_p),
            ctypes.cast(desc, ctypes.c_void_p),
            ctypes.cast(ctypes.byref(b), ctypes.c_void_p))
        r = cuda.cuLaunchKernel(fn, grid, 1, 1, block, 1, 1, smem, None,
                                params, None)
        print(f"{what}: {r}")

    launch("launch ok")
    launch("launch block 512", block=512)
    launch("launch block 2048", block=2048)
    launch("launch grid 0", grid=0)
    launch("launch 47 KiB dynamic", smem=47 * 1024)
    launch("launch 47.5 KiB dynamic", smem=47 * 1024 + 512)
    launch("launch host pointer", a=c_u64(ctypes.addressof(host)))
    attr = 8  # CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
    print("set 100 KiB:", cuda.cuFuncSetAttribute(fn, attr, 100 * 1024))
    launch("launch 100 KiB dynamic", smem=100 * 1024)
    launch("launch 101 KiB dynamic", smem=101 * 1024)
    print("set 227 KiB:", cuda.cuFuncSetAttribute(fn, attr, 227 * 1024))


if __name__ == "__main__":
    main()
