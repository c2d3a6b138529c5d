"""Flags: --cpu and --cpu-features are checked against the host target
before a target machine is made (an unknown CPU, a 32-bit-only one or an
unknown feature was a fatal LLVM error or a silent generic fallback), the
attn-tile options are bounded like the #attn.tile fields, and the other
option values of attn-compile and the attnc passes are rejected with a
message and no output."""

import os

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples")


def read_example(name):
    with open(os.path.join(EXAMPLES, name), "rb") as f:
        return f.read()


SMALL = "small_encoder.mlir"

BAD_CPUS = ["not-a-cpu", "i386", "i486", "i686", "pentium4", "pentium-m", "prescott",
            "yonah", "athlon-xp", "k6-3", "c3", "winchip-c6", "geode", "lakemont",
            "cortex-a53", "sm_90a", "skylake avx512", "SKYLAKE", "x86_64 ", ""]
BAD_FEATURES = [("avx999", r"CPU feature 'avx999' must start with \+"),
                ("+avx999", r"unknown CPU feature 'avx999'"),
                ("-not-a-feature", r"unknown CPU feature 'not-a-feature'"),
                ("+avx2,+bogus", r"unknown CPU feature 'bogus'"),
                ("avx2", r"CPU feature 'avx2' must start with \+ \(enable\) or - \(disable\)"),
                ("+", r"unknown CPU feature ''"),
                ("-64bit", r"CPU '[^']*' with features '-64bit' cannot run 64-bit code"),
                ("+avx2,-64bit", r"CPU '[^']*' with features '\+avx2,-64bit' cannot run 64-bit code")]

TILE_OPTION_LIMITS = [("block-q", 4096), ("block-k", 4096), ("vector-width", 64),
                      ("row-tile", 64), ("col-tile", 64), ("column-block", 65536),
                      ("simd-width", 64), ("vector-registers", 256), ("l1-kib", 1 << 20),
                      ("l2-kib", 1 << 20), ("cores", 4096)]
CUDA_TILE_OPTION_LIMITS = [("warp-n-tiles", 16), ("threads", 1024)]

LINEAR = ("func.func @f(%x: tensor<8x64xf32>, %w: tensor<32x64xf32>) -> tensor<8x32xf32> {\n"
          "  %y = attn.linear %x, %w : (tensor<8x64xf32>, tensor<32x64xf32>) -> tensor<8x32xf32>\n"
          "  return %y : tensor<8x32xf32>\n}\n")


def compile_case(name, args, stderr, files=None):
    return {"name": name, "files": files or {"in.mlir": read_example(SMALL)},
            "cmd": ["{attn-compile}", "-q", "in.mlir", "-o", "model"] + args,
            "exit": "nonzero", "stderr": stderr, "absent": ["model"], "timeout": 60}


def cases():
    out = []
    for cpu in BAD_CPUS:
        label = cpu.replace(" ", "_") or "empty"
        message = (r"attn-compile: error: --cpu: (unknown CPU|CPU '[^']*' cannot run 64-bit code)")
        for emit in ("exe", "obj", "llvm-ir"):
            out.append(compile_case("cpu-%s-%s" % (label, emit),
                                    ["--cpu=" + cpu, "--emit=" + emit], [message]))
    for features, message in BAD_FEATURES:
        label = features.replace(",", "_").replace("+", "plus-").replace("-", "minus-", 1) \
            if features.startswith("-") else features.replace(",", "_").replace("+", "plus-")
        out.append(compile_case("cpu-features-" + (label or "empty"), ["--cpu-features=" + features],
                                [r"attn-compile: error: --cpu: " + message]))
        out.append(compile_case("cpu-skylake-features-" + (label or "empty"),
                                ["--cpu=skylake", "--cpu-features=" + features, "--emit=obj"],
                                [r"attn-compile: error: --cpu: " + message]))
    # Other attn-compile option values.
    others = [
        (["--target=tpu"], r"unknown target 'tpu'"),
        (["--target=cuda", "--chip=sm_70"], r"unknown CUDA chip 'sm_70'|ptxas was not found"),
        (["--emit=asm"], r"unknown --emit stage 'asm'"),
        (["--emit=ptx"], r"--emit=ptx needs --target=cuda"),
        (["--shared", "--emit=obj"], r"--shared writes a library"),
        (["--runtime-checks", "--target=cuda"], r"--runtime-checks is for --target=cpu"),
        # The missing file is found first since every input is checked up front.
        (["--calibration=x.npy"],
         r"--calibration and --weights are for|cannot open --calibration file 'x\.npy'"),
        (["--layer-drop=strategy=search keep=x"], r"--keep option: 'x' value invalid(.|\n)*bad --layer-drop="),
        (["--layer-drop=strategy=search exhaustive-limit=-1 keep=1"], r"bad exhaustive-limit="),
    ]
    for i, (args, message) in enumerate(others):
        out.append(compile_case("attn-compile-option-%d" % i, args, [message]))
    # attn-tile options: negative, above the limit, absurd.
    cpu_values = lambda option, limit: (  # noqa: E731
        -1, limit + 1 if option not in ("vector-width", "simd-width") else limit * 2,
        1 << 40, 9223372036854775807)
    cuda_values = lambda option, limit: (-1, limit + 1, 1 << 40, 9223372036854775807)  # noqa: E731
    for target, prefix, limits, values in (("cpu", "attn-tile-", TILE_OPTION_LIMITS, cpu_values),
                                           ("cuda", "attn-tile-cuda-", CUDA_TILE_OPTION_LIMITS,
                                            cuda_values)):
        for option, limit in limits:
            for value in values(option, limit):
                message = (r"attn-tile: %s must be >= 0 \(0 = choose\), got -1" % option
                           if value < 0 else
                           r"attn-tile: %s must be at most %d, got %d" % (option, limit, value))
                out.append({"name": "%s%s-%d" % (prefix, option, value),
                            "files": {"in.mlir": LINEAR},
                            "cmd": ["{attn-opt}", "in.mlir",
                                    "--attn-tile=target=%s %s=%d" % (target, option, value),
                                    "-o", "out.mlir"],
                            "exit": "nonzero", "stderr": [r"in\.mlir:1:1: error: " + message],
                            "absent": ["out.mlir"], "timeout": 30})
    for value in (0, -1, -9223372036854775807):
        out.append({"name": "attn-verify-model-max-bytes%d" % value, "files": {"in.mlir": LINEAR},
                    "cmd": ["{attn-opt}", "in.mlir", "--attn-verify-model=max-tensor-bytes=%d" % value,
                            "-o", "out.mlir"],
                    "exit": "nonzero",
                    "stderr": [r"attn-verify-model: max-tensor-bytes must be >= 1, got %d" % value],
                    "absent": ["out.mlir"], "timeout": 30})
    # --prune scores: one per head (4) or FFN group (256 / 64 = 4); a shorter
    # or longer list would silently ignore or invent heads.
    import json
    for what, key, count_key, n, message in (
            ("heads", "head_scores", "keep_heads", 4,
             r"'attn\.mha' op has 4 heads but 'head_scores' gives %d scores"),
            ("ffn", "ffn_scores", "keep_ffn_groups", 4,
             r"'attn\.ffn' op has 4 FFN groups of 64 but 'ffn_scores' gives %d scores")):
        for given in (1, 2, 3, 5, 8):
            spec = {"ffn_group_size": 64,
                    "layers": {"0": {key: [float(i) for i in range(given)], count_key: 1}}}
            out.append(compile_case("prune-%s-%d-scores" % (what, given),
                                    ["--prune=spec.json"], [message % given],
                                    files={"in.mlir": read_example(SMALL),
                                           "spec.json": json.dumps(spec)}))
        spec = {"ffn_group_size": 64,
                "layers": {"0": {key: [float(i) for i in range(n)], count_key: 2}}}
        out.append({"name": "prune-%s-%d-scores-accepted" % (what, n),
                    "files": {"in.mlir": read_example(SMALL), "spec.json": json.dumps(spec)},
                    "cmd": ["{attn-compile}", "-q", "in.mlir", "--emit=linalg", "-o", "out.mlir",
                            "--prune=spec.json"],
                    "exit": "zero", "outputs": ["out.mlir"], "timeout": 60})
    # A limit the model's tensors exceed: located at the first one.
    out.append({"name": "attn-verify-model-small-limit", "files": {"in.mlir": LINEAR},
                "cmd": ["{attn-opt}", "in.mlir", "--attn-verify-model=max-tensor-bytes=1024",
                        "-o", "out.mlir"],
                "exit": "nonzero",
                "stderr": [r"in\.mlir:2:8: error: operand #0 has type 'tensor<8x64xf32>' of "
                           r"2048 bytes, more than the target can address \(1024 bytes\)"],
                "absent": ["out.mlir"], "timeout": 30})
    return out
