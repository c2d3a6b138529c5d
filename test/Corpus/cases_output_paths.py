"""Output paths of attn-opt, attn-compile and a compiled model's --output:
never rename over a device, FIFO or an input, never leave a partial or
temporary file, never destroy an input when a run fails."""

import os

from corpus_lib import LINEAR_MLIR, REPO, float32s, read_example, safetensors

GOOD_MLIR = LINEAR_MLIR
# Parses, but the verifier rejects it (the return type differs).
BAD_VERIFY_MLIR = """\
func.func @main(%x: tensor<2x4xf32>) -> tensor<2x5xf32> {
  %r = attn.relu %x : tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}
"""
SAME_FILE = r"same file as the input"


def output_directory_case(prefix, files, cmd):
    """`cmd` + an output path that is a directory."""
    return {"name": prefix + "-output-directory", "files": files, "dirs": ["outdir"],
            "cmd": cmd + ["outdir"], "exit": "nonzero",
            "stderr": [r"outdir.*[Ii]s a directory"]}


def output_fifo_case(prefix, files, cmd):
    """`cmd` + an output path that is a FIFO no one reads: an error, not a hang."""
    return {"name": prefix + "-output-fifo-without-reader", "files": files,
            "fifos": ["pipe"], "cmd": cmd + ["pipe"], "exit": "nonzero",
            "stderr": [r"pipe.*FIFO"], "timeout": 30}


def opt_cases():
    cases = []
    opt = ["{attn-opt}"]
    for ir_name, ir in (("valid", GOOD_MLIR), ("invalid", BAD_VERIFY_MLIR)):
        # The output is the input, spelled several ways.
        for label, out in (("same", "in.mlir"), ("dot-slash", "./in.mlir"),
                           ("absolute", "{tmp}/in.mlir"),
                           ("dotdot", "sub/../in.mlir"), ("link", "alias.mlir")):
            cases.append({
                "name": "attn-opt-%s-output-is-input-%s" % (ir_name, label),
                "files": {"in.mlir": ir},
                "dirs": ["sub"],
                "symlinks": {"alias.mlir": "in.mlir"},
                "cmd": opt + ["in.mlir", "-o", out],
                "exit": "nonzero",
                "stderr": [SAME_FILE],
            })
        # Into devices: /dev/null takes anything, /dev/full fails to write;
        # both stay devices.
        cases.append({
            "name": "attn-opt-%s-to-null-device" % ir_name,
            "files": {"in.mlir": ir},
            "devices": {"null": "null"},
            "cmd": opt + ["in.mlir", "-o", "null"],
            "exit": "zero" if ir_name == "valid" else "nonzero",
        })
        cases.append({
            "name": "attn-opt-%s-to-full-device" % ir_name,
            "files": {"in.mlir": ir},
            "devices": {"full": "full"},
            "cmd": opt + ["in.mlir", "-o", "full"],
            "exit": "nonzero",
            "stderr": [r"No space left on device" if ir_name == "valid"
                       else r"in\.mlir:3:\d+: error"],
        })
        # An existing output is replaced only by a successful run.
        cases.append({
            "name": "attn-opt-%s-over-existing" % ir_name,
            "files": {"in.mlir": ir, "out.mlir": "previous\n"},
            "cmd": opt + ["in.mlir", "-o", "out.mlir"],
            "exit": "zero" if ir_name == "valid" else "nonzero",
            "changes": ["out.mlir"] if ir_name == "valid" else [],
        })
        # Stdout: no temporary file in the working directory.
        cases.append({
            "name": "attn-opt-%s-to-stdout" % ir_name,
            "files": {"in.mlir": ir},
            "cmd": opt + ["in.mlir", "-o", "-"],
            "exit": "zero" if ir_name == "valid" else "nonzero",
            "stdout": [r"attn\.linear"] if ir_name == "valid" else [],
        })
    cases += [
        {
            "name": "attn-opt-new-output",
            "files": {"in.mlir": GOOD_MLIR},
            "cmd": opt + ["in.mlir", "-o", "out.mlir"],
            "exit": "zero",
            "outputs": ["out.mlir"],
        },
        output_directory_case("attn-opt", {"in.mlir": GOOD_MLIR}, opt + ["in.mlir", "-o"]),
        {
            "name": "attn-opt-output-missing-directory",
            "files": {"in.mlir": GOOD_MLIR},
            "cmd": opt + ["in.mlir", "-o", "nodir/out.mlir"],
            "exit": "nonzero",
            "stderr": [r"nodir/out\.mlir.*No such file or directory"],
        },
        output_fifo_case("attn-opt", {"in.mlir": GOOD_MLIR}, opt + ["in.mlir", "-o"]),
        {
            "name": "attn-opt-stdin-to-input-name",
            "files": {"in.mlir": GOOD_MLIR},
            "stdin": BAD_VERIFY_MLIR,
            "cmd": opt + ["-", "-o", "in.mlir"],
            "exit": "nonzero",
        },
        {
            "name": "attn-opt-split-input-output-is-input",
            "files": {"in.mlir": GOOD_MLIR + "// -----\n" + GOOD_MLIR},
            "cmd": opt + ["in.mlir", "--split-input-file", "-o", "in.mlir"],
            "exit": "nonzero",
            "stderr": [SAME_FILE],
        },
    ]
    return cases


def compile_cases():
    cases = []
    cc = ["{attn-compile}", "-q"]
    for label, out in (("same", "in.mlir"), ("dot-slash", "./in.mlir"),
                       ("absolute", "{tmp}/in.mlir"), ("link", "alias.mlir")):
        for emit in ("linalg", "exe"):
            cases.append({
                "name": "attn-compile-output-is-input-%s-%s" % (label, emit),
                "files": {"in.mlir": GOOD_MLIR},
                "symlinks": {"alias.mlir": "in.mlir"},
                "cmd": cc + ["in.mlir", "--emit=" + emit, "-o", out],
                "exit": "nonzero",
                "stderr": [SAME_FILE],
            })
    for ir_name, ir in (("valid", GOOD_MLIR), ("invalid", BAD_VERIFY_MLIR)):
        for emit in ("linalg", "llvm-ir", "exe"):
            cases.append({
                "name": "attn-compile-%s-%s-to-null-device" % (ir_name, emit),
                "files": {"in.mlir": ir},
                "devices": {"null": "null"},
                "cmd": cc + ["in.mlir", "--emit=" + emit, "-o", "null"],
                "exit": "zero" if ir_name == "valid" else "nonzero",
                "timeout": 120,
            })
            cases.append({
                "name": "attn-compile-%s-%s-to-full-device" % (ir_name, emit),
                "files": {"in.mlir": ir},
                "devices": {"full": "full"},
                "cmd": cc + ["in.mlir", "--emit=" + emit, "-o", "full"],
                "exit": "nonzero",
                "stderr": [r"No space left on device" if ir_name == "valid"
                           else r"in\.mlir:3:\d+: error"],
                "timeout": 120,
            })
            cases.append({
                "name": "attn-compile-%s-%s-over-existing" % (ir_name, emit),
                "files": {"in.mlir": ir, "out": "previous\n"},
                "cmd": cc + ["in.mlir", "--emit=" + emit, "-o", "out"],
                "exit": "zero" if ir_name == "valid" else "nonzero",
                "changes": ["out"] if ir_name == "valid" else [],
                "timeout": 120,
            })
        cases.append({
            "name": "attn-compile-%s-to-stdout" % ir_name,
            "files": {"in.mlir": ir},
            "cmd": cc + ["in.mlir", "--emit=linalg", "-o", "-"],
            "exit": "zero" if ir_name == "valid" else "nonzero",
        })
    # Every other input named as the output.
    weights = read_example("small_encoder.safetensors")
    ids = read_example("small_encoder.ids.npy")
    encoder = read_example("small_encoder.mlir")
    search = ["--layer-drop=strategy=search keep=1",
              "--weights", "w.safetensors", "--calibration", "x.npy"]
    search_files = {"m.mlir": encoder, "w.safetensors": weights, "x.npy": ids}
    for what, files, flags, target in (
        ("search-weights", search_files, search, "w.safetensors"),
        ("calibration", search_files, search, "x.npy"),
        ("prune-spec", {"m.mlir": encoder, "spec.json": '{"layers": {}}'},
         ["--prune=spec.json"], "spec.json"),
        ("scores-file", {"m.mlir": encoder, "s.json": "[1.0, 2.0]"},
         ["--layer-drop=strategy=top-k keep=1 scores-file=s.json"], "s.json"),
    ):
        cases.append({
            "name": "attn-compile-output-is-" + what,
            "files": files,
            "cmd": cc + ["m.mlir"] + flags + ["-o", target],
            "exit": "nonzero",
            "stderr": [SAME_FILE],
        })
    to_linalg = cc + ["in.mlir", "--emit=linalg", "-o"]
    cases += [
        output_directory_case("attn-compile", {"in.mlir": GOOD_MLIR}, to_linalg),
        {
            "name": "attn-compile-output-missing-directory",
            "files": {"in.mlir": GOOD_MLIR},
            "cmd": to_linalg + ["nodir/out"],
            "exit": "nonzero",
            "stderr": [r"nodir.*No such file or directory"],
        },
        output_fifo_case("attn-compile", {"in.mlir": GOOD_MLIR}, to_linalg),
        {
            "name": "attn-compile-new-output",
            "files": {"in.mlir": GOOD_MLIR},
            "cmd": to_linalg + ["out.mlir"],
            "exit": "zero",
            "outputs": ["out.mlir"],
        },
    ]
    return cases


def model_cases():
    weights = read_example("small_encoder.safetensors")
    ids = read_example("small_encoder.ids.npy")
    run = ["{model}", "-q"]
    to_output = run + ["--weights", "w.safetensors", "--input", "x.npy", "--output"]
    files = {"w.safetensors": weights, "x.npy": ids}
    cases = []
    for label, out in (("input", "x.npy"), ("input-dot-slash", "./x.npy"),
                       ("input-link", "alias.npy"), ("weights", "w.safetensors"),
                       ("weights-absolute", "{tmp}/w.safetensors")):
        cases.append({
            "name": "model-output-is-%s" % label,
            "files": dict(files),
            "symlinks": {"alias.npy": "x.npy"},
            "cmd": to_output + [out],
            "exit": "nonzero",
            "stderr": [r"same file as"],
        })
    cases += [
        {
            "name": "model-output-null-device",
            "files": dict(files),
            "devices": {"null": "null"},
            "cmd": to_output + ["null"],
            "exit": "zero",
        },
        {
            "name": "model-output-full-device",
            "files": dict(files),
            "devices": {"full": "full"},
            "cmd": to_output + ["full"],
            "exit": "nonzero",
            "stderr": [r"full.*No space left on device"],
        },
        output_directory_case("model", dict(files), to_output),
        output_fifo_case("model", dict(files), to_output),
        {
            "name": "model-output-over-existing-on-failure",
            "files": dict(files, **{"out.npy": b"previous"}),
            "cmd": run + ["--weights", "x.npy", "--input", "x.npy",
                          "--output", "out.npy"],
            "exit": "nonzero",
        },
        {
            "name": "model-output-new",
            "files": dict(files),
            "cmd": to_output + ["y.npy"],
            "exit": "zero",
            "outputs": ["y.npy"],
        },
    ]
    return cases


def read_repo(*parts):
    with open(os.path.join(REPO, *parts), "rb") as f:
        return f.read()


# Refusals of a side file (the weights beside an import) that attnc did not
# write: the message names the file and the way out.
NOT_OURS = r"model\.safetensors exists and was not written by attnc.*--force"


def import_cases():
    """The files beside an import: attn-import and attn-compile never replace
    the model they read, nor a file they did not write (a checkpoint's
    model.safetensors, say) unless --force; their own earlier weights are
    replaced."""
    onnx = read_repo("test", "ONNX", "Models", "encoder_postln_relu-op17.onnx")
    # A Hugging Face checkpoint's weights (not written by attnc).
    checkpoint = read_repo("test", "Frontend", "HF", "Inputs", "gpt2",
                           "model.safetensors")
    ours = safetensors([("w", "F32", [2], float32s([1.0, 2.0]))],
                       metadata={"written_by": "attnc"})
    other_metadata = safetensors([("w", "F32", [2], float32s([1.0, 2.0]))],
                                 metadata={"format": "pt"})
    imp = ["{attn-import}"]
    cc = ["{attn-compile}", "-q"]
    cases = []
    # The output is the model itself, spelled several ways.
    for label, out in (("same", "model.onnx"), ("dot-slash", "./model.onnx"),
                       ("absolute", "{tmp}/model.onnx"),
                       ("link", "alias.onnx")):
        cases.append({
            "name": "attn-import-output-is-input-%s" % label,
            "files": {"model.onnx": onnx},
            "symlinks": {"alias.onnx": "model.onnx"},
            "cmd": imp + ["model.onnx", "-o", out],
            "exit": "nonzero",
            "stderr": [SAME_FILE],
        })
    cases.append({
        "name": "attn-import-weights-out-is-input",
        "files": {"model.onnx": onnx},
        "cmd": imp + ["model.onnx", "-o", "m.mlir", "--weights-out",
                      "model.onnx"],
        "exit": "nonzero",
        "stderr": [SAME_FILE],
    })
    # A checkpoint's own files are inputs too.
    ckpt = read_repo("test", "Frontend", "HF", "Inputs", "gpt2", "config.json")
    for what in ("model.safetensors", "config.json"):
        cases.append({
            "name": "attn-import-hf-output-is-checkpoint-" + what,
            "files": {"ckpt/config.json": ckpt,
                      "ckpt/model.safetensors": checkpoint},
            "cmd": imp + ["ckpt", "-o", "ckpt/" + what],
            "exit": "nonzero",
            "stderr": [SAME_FILE],
        })
    # Foreign side files: refused without --force, the output not written.
    for label, content in (("checkpoint", checkpoint),
                           ("other-metadata", other_metadata),
                           ("text", "not safetensors\n"),
                           ("empty", "")):
        files = {"model.onnx": onnx, "dir/model.safetensors": content}
        for tool, cmd, out in (
                ("attn-import", imp + ["model.onnx", "-o", "dir/model.mlir"],
                 "dir/model.mlir"),
                ("attn-compile-attn",
                 cc + ["model.onnx", "--emit=attn", "-o", "dir/model.mlir"],
                 "dir/model.mlir"),
                ("attn-compile-exe", cc + ["model.onnx", "-o", "dir/model"],
                 "dir/model")):
            cases.append({
                "name": "%s-keeps-foreign-weights-%s" % (tool, label),
                "files": dict(files),
                "cmd": cmd,
                "exit": "nonzero",
                "stderr": [NOT_OURS],
                "absent": [out],
                "timeout": 120,
            })
        cases.append({
            "name": "attn-import-force-replaces-weights-" + label,
            "files": dict(files),
            "cmd": imp + ["model.onnx", "-o", "dir/model.mlir", "--force"],
            "exit": "zero",
            "changes": ["dir/model.safetensors"],
            "outputs": ["dir/model.mlir"],
        })
    # A directory where the weights go is refused as an output.
    cases.append({
        "name": "attn-import-weights-path-is-directory",
        "files": {"model.onnx": onnx},
        "dirs": ["model.safetensors"],
        "cmd": imp + ["model.onnx", "-o", "model.mlir"],
        "exit": "nonzero",
        "stderr": [r"model\.safetensors.*[Ii]s a directory"],
        "absent": ["model.mlir"],
    })
    # attnc's own earlier weights are replaced (a second import).
    for tool, cmd in (("attn-import", imp + ["model.onnx", "-o", "model.mlir"]),
                      ("attn-compile", cc + ["model.onnx", "--emit=attn",
                                             "-o", "model.mlir"])):
        cases.append({
            "name": "%s-replaces-own-weights" % tool,
            "files": {"model.onnx": onnx, "model.safetensors": ours},
            "cmd": cmd,
            "exit": "zero",
            "changes": ["model.safetensors"],
            "outputs": ["model.mlir"],
            "timeout": 120,
        })
    return cases


def cases():
    return opt_cases() + compile_cases() + model_cases() + import_cases()
