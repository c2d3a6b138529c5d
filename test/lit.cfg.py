# -*- Python -*-
# lit configuration for the attnc test suite.

import os
import sys

import lit.formats
from lit.llvm import llvm_config

config.name = "ATTNC"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.attnc_obj_root, "test")
config.excludes = ["lit.cfg.py", "lit.site.cfg.py", "CMakeLists.txt",
                   "reference", "unit", "Inputs"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%attnc_src", config.attnc_src_root))
config.substitutions.append(("%attnc_bin", config.attnc_tools_dir))
# The interpreter of the Python scripts: the one running lit (Debian's
# python3, with numpy), or --param python=PATH (e.g. a virtual environment's,
# with numpy and the Python package's optional dependencies).
_python = lit_config.params.get("python", sys.executable)
config.substitutions.append(("%python", _python))


def _python_imports(module):
    """Whether %python can import `module`."""
    import subprocess
    return subprocess.run([_python, "-c", "import " + module],
                          stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0


# Tests of the Python package's text generation need Hugging Face's
# `tokenizers` (an optional dependency that Debian does not package);
# elsewhere lit reports them UNSUPPORTED.
if _python_imports("tokenizers"):
    config.available_features.add("python-tokenizers")
# The serving tests need Ray Serve (attnc.serve's optional dependency).
if _python_imports("ray.serve"):
    config.available_features.add("python-ray")
# Under scripts/test.sh --sanitize, LeakSanitizer's tracer itself crashes
# (SIGSEGV in its stop-the-world scan) at the exit of an attn-compile that
# ran the JIT-compiled LayerDrop search; such commands run with the leak
# check off (ASan and UBSan stay on). Elsewhere this is empty.
_asan = os.environ.get("ASAN_OPTIONS")
config.substitutions.append(
    ("%no_leak_check", "env ASAN_OPTIONS=%s:detect_leaks=0" % _asan if _asan else ""))
# Tests that only repeat, many times over, what others check under the
# sanitizers (the GPU check's bundle compiles ~70 models) skip there: a
# sanitized compile of each would take most of CI's time.
if _asan:
    config.available_features.add("sanitized")

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

tool_dirs = [config.attnc_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions(["attn-opt", "attn-compile", "attn-import"], tool_dirs)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.attnc_tools_dir, append_path=True)

if config.attnc_have_cuda_toolkit:
    config.available_features.add("cuda-toolkit")
    config.substitutions.append(("%ptxas", config.attnc_ptxas))


sys.path.insert(0, os.path.join(config.test_source_root, "reference"))
from hostcpu import host_flags  # noqa: E402

# Tests that run code using AVX-512 BF16 instructions need the host to have
# them (elsewhere lit reports them UNSUPPORTED).
if "avx512_bf16" in host_flags():
    config.available_features.add("host-avx512bf16")


def _cuda_device_count():
    """Devices the CUDA driver reports, 0 without a driver or GPU."""
    import ctypes
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return 0
    count = ctypes.c_int(0)
    if cuda.cuInit(0) != 0 or cuda.cuDeviceGetCount(ctypes.byref(count)) != 0:
        return 0
    return count.value


# Tests that execute on a GPU require this; elsewhere lit reports them
# UNSUPPORTED (never passed).
if _cuda_device_count() > 0:
    config.available_features.add("cuda-driver")
