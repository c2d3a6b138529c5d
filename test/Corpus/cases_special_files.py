"""Inputs that are not regular files: FIFOs (opening one for reading blocks
until a writer comes), endless devices (/dev/zero), empty devices
(/dev/null), directories, and links to them. Every tool refuses them at once
with a message naming the path."""

from corpus_lib import LINEAR_MLIR, read_example

NOT_REGULAR = r"not a regular file"


def special_inputs():
    """(label, case fields placing the special file at path 'special')."""
    return [
        ("fifo", {"fifos": ["special"]}),
        ("dev-zero", {"devices": {"special": "zero"}}),
        ("dev-null", {"devices": {"special": "null"}}),
        ("directory", {"dirs": ["special"]}),
        ("link-to-fifo", {"fifos": ["pipe"], "symlinks": {"special": "pipe"}}),
        ("link-to-dev-zero", {"devices": {"zero": "zero"},
                              "symlinks": {"special": "zero"}}),
        ("link-to-directory", {"dirs": ["d"], "symlinks": {"special": "d"}}),
    ]


def case(name, fields, files, cmd, stderr, timeout=30):
    c = {"name": name, "files": dict(files), "cmd": cmd, "exit": "nonzero",
         "stderr": stderr, "timeout": timeout}
    for key, value in fields.items():
        c[key] = value
    return c


def cases():
    weights = read_example("small_encoder.safetensors")
    ids = read_example("small_encoder.ids.npy")
    encoder = read_example("small_encoder.mlir")
    out = []
    for label, fields in special_inputs():
        # The compiled model's --weights and --input.
        out.append(case("model-weights-" + label, fields, {"x.npy": ids},
                        ["{model}", "--weights", "special", "--input", "x.npy",
                         "--output", "y.npy"],
                        [r"^error: special: " + NOT_REGULAR]))
        out.append(case("model-input-" + label, fields, {"w.safetensors": weights},
                        ["{model}", "--weights", "w.safetensors", "--input",
                         "special", "--output", "y.npy"],
                        [r"^error: special: " + NOT_REGULAR]))
        # The IR input of both tools.
        out.append(case("attn-opt-input-" + label, fields, {},
                        ["{attn-opt}", "special", "-o", "out.mlir"],
                        [r"input file 'special' is .*not a regular file"]))
        # A directory is a Hugging Face checkpoint to attn-compile.
        out.append(case("attn-compile-input-" + label, fields, {},
                        ["{attn-compile}", "-q", "special", "-o", "out"],
                        [r"special/config\.json:\d+:\d+: error: cannot read"
                         if "directory" in label else
                         r"input file 'special' is .*not a regular file"]))
        # Files that passes and the LayerDrop search read.
        out.append(case("attn-compile-prune-spec-" + label, fields,
                        {"m.mlir": encoder},
                        ["{attn-compile}", "-q", "m.mlir", "--prune=special",
                         "-o", "out"],
                        [r"spec-file 'special': .*not a regular file"]))
        out.append(case("attn-compile-scores-file-" + label, fields,
                        {"m.mlir": encoder},
                        ["{attn-compile}", "-q", "m.mlir",
                         "--layer-drop=strategy=top-k keep=1 scores-file=special",
                         "-o", "out"],
                        [r"scores-file 'special': .*not a regular file"]))
        out.append(case("attn-opt-scores-file-" + label, fields,
                        {"m.mlir": encoder},
                        ["{attn-opt}", "m.mlir",
                         "--attn-layer-drop=strategy=top-k keep=1 scores-file=special",
                         "-o", "out.mlir"],
                        [r"scores-file 'special': .*not a regular file"]))
        # The LayerDrop search's --weights and --calibration, one special.
        for what, files, weights_path, calibration, message in (
                ("search-weights", {"x.npy": ids}, "special", "x.npy",
                 r"--weights 'special' is .*not a regular file"),
                ("calibration", {"w.safetensors": weights}, "w.safetensors",
                 "special", r"--calibration file 'special' is .*not a regular file")):
            out.append(case("attn-compile-%s-%s" % (what, label), fields,
                            dict({"m.mlir": encoder}, **files),
                            ["{attn-compile}", "-q", "m.mlir",
                             "--layer-drop=strategy=search keep=1", "--weights",
                             weights_path, "--calibration", calibration, "-o", "out"],
                            [message]))
    # stdin from an endless device.
    for tool, command in (("attn-opt", "exec {attn-opt} - -o out.mlir < zero"),
                          ("attn-compile", "exec {attn-compile} -q - -o out < zero")):
        out.append({
            "name": tool + "-stdin-dev-zero",
            "devices": {"zero": "zero"},
            "cmd": ["/bin/sh", "-c", command],
            "exit": "nonzero",
            "stderr": [r"character device"],
            "timeout": 30,
        })
    # An empty but regular input is an ordinary (located) error.
    out.append({
        "name": "model-input-empty-file",
        "files": {"w.safetensors": weights, "x.npy": b""},
        "cmd": ["{model}", "--weights", "w.safetensors", "--input", "x.npy"],
        "exit": "nonzero",
        "stderr": [r"x\.npy: not a \.npy file"],
    })
    out.append({
        "name": "model-weights-empty-file",
        "files": {"w.safetensors": b"", "x.npy": ids},
        "cmd": ["{model}", "--weights", "w.safetensors", "--input", "x.npy"],
        "exit": "nonzero",
        "stderr": [r"w\.safetensors: file is 0 bytes"],
    })
    out.append({
        "name": "attn-opt-input-missing",
        "cmd": ["{attn-opt}", "missing.mlir"],
        "exit": "nonzero",
        "stderr": [r"missing\.mlir.*No such file or directory"],
    })
    out.append({
        "name": "attn-opt-valid-after-checks",
        "files": {"in.mlir": LINEAR_MLIR},
        "cmd": ["{attn-opt}", "in.mlir"],
        "exit": "zero",
        "stdout": [r"attn\.linear"],
    })
    return out
