"""Deep nesting: MLIR regions, attributes, types, affine expressions and
locations, and the JSON of --layer-drop scores-file= and --prune=. The
recursive parsers would overflow the stack; the tools refuse nesting beyond
their bound with a located error, and accept ordinary depths."""

import json
import resource
import subprocess

from corpus_lib import read_example, safetensors, float32s

DEPTHS = [300, 5000, 200000]
MLIR_TOO_DEEP = r"in\.mlir:\d+:\d+: error: nesting deeper than 256 levels"


def mlir_nests(depth):
    """(label, text) of IR nesting `depth` levels in one construct each."""
    return [
        ("modules", "module {\n" * depth + "}\n" * depth),
        ("array-attr", "func.func @f() attributes {a = " + "[" * depth + "1" +
         "]" * depth + "} {\n  return\n}\n"),
        ("dict-attr", "func.func @f() attributes {a = " + "{a = " * depth + "{}" +
         "}" * depth + "} {\n  return\n}\n"),
        ("tuple-type", "func.func private @f(" + "tuple<" * depth + "i32" +
         ">" * depth + ")\n"),
        ("tuple-of-tensor-type", "func.func private @f(" +
         "tuple<tensor<2xf32>, " * depth + "f32" + ">" * depth + ")\n"),
        ("affine-parens", "#m = affine_map<(d0) -> (" + "(" * depth + "d0" +
         ")" * depth + ")>\nfunc.func private @f() attributes {m = #m}\n"),
        ("fused-loc", "func.func private @f() loc(" + "fused[" * depth +
         "unknown" + "]" * depth + ")\n"),
        ("callsite-loc", "func.func private @f() loc(" +
         "callsite(" * depth + "unknown" + ' at "a.mlir":1:1)' * depth + ")\n"),
        ("dense-attr", "func.func @f() attributes {a = dense<" + "[" * depth +
         "1" + "]" * depth + "> : tensor<" + "1x" * depth + "i32>} {\n"
         "  return\n}\n"),
        ("unclosed-brackets", "func.func @f() attributes {a = " + "[" * depth),
        ("unclosed-regions", "module {\n" * depth),
        ("scf-regions",
         "func.func @f(%c: i1) {\n" + "scf.if %c {\n" * depth +
         "}\n" * depth + "  return\n}\n"),
    ]


def mlir_cases():
    out = []
    for depth in DEPTHS:
        for label, text in mlir_nests(depth):
            out.append({
                "name": "attn-opt-%s-%d" % (label, depth),
                "files": {"in.mlir": text},
                "cmd": ["{attn-opt}", "in.mlir", "-o", "out.mlir"],
                "exit": "nonzero",
                "stderr": [MLIR_TOO_DEEP],
                "absent": ["out.mlir"],
                "timeout": 60,
            })
            if depth == DEPTHS[-1] or label in ("modules", "array-attr", "tuple-type"):
                out.append({
                    "name": "attn-compile-%s-%d" % (label, depth),
                    "files": {"in.mlir": text},
                    "cmd": ["{attn-compile}", "-q", "in.mlir", "-o", "out"],
                    "exit": "nonzero",
                    "stderr": [MLIR_TOO_DEEP],
                    "absent": ["out"],
                    "timeout": 60,
                })
    # Ordinary depths still parse (and round-trip).
    for label, text in mlir_nests(40):
        if label.startswith("unclosed") or label == "dense-attr":
            continue
        out.append({
            "name": "attn-opt-%s-40-accepted" % label,
            "files": {"in.mlir": text},
            "cmd": ["{attn-opt}", "in.mlir", "-o", "out.mlir"],
            "exit": "zero",
            "outputs": ["out.mlir"],
        })
    # Brackets inside strings and comments do not count.
    text = ('func.func @f() attributes {s = "' + "[" * 100000 + '"} {\n'
            "  // " + "{" * 100000 + "\n  return\n}\n")
    out.append({
        "name": "attn-opt-brackets-in-strings-and-comments",
        "files": {"in.mlir": text},
        "cmd": ["{attn-opt}", "in.mlir", "-o", "out.mlir"],
        "exit": "zero",
        "outputs": ["out.mlir"],
    })
    return out


MLIR_OPT = "/usr/lib/llvm-22/bin/mlir-opt"
BYTECODE_TOO_DEEP = (r"^attn-(opt|compile): error: in\.mlirbc: MLIR bytecode (nests (regions|attributes "
                     r"or types) deeper than 256 levels|that the reader cannot "
                     r"parse safely)")


def to_bytecode(text):
    """MLIR bytecode of `text`, written by upstream mlir-opt (mlir-22-tools)
    on an unlimited stack, so that it can write nesting it could not read
    back on an ordinary one."""
    def unlimited_stack():
        resource.setrlimit(resource.RLIMIT_STACK,
                           (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    return subprocess.run([MLIR_OPT, "--emit-bytecode", "-", "-o", "-"],
                          input=text.encode(), stdout=subprocess.PIPE,
                          check=True, preexec_fn=unlimited_stack).stdout


def bytecode_cases():
    """MLIR bytecode cannot be scanned for brackets: the tools parse it in a
    child process, measure its nesting without recursion and refuse what
    nests too deeply (or crashes that parse) before parsing it for real."""
    out = []
    for depth in (300, 20000):
        for label, text in mlir_nests(depth):
            if label not in ("modules", "array-attr", "tuple-type",
                             "scf-regions", "callsite-loc"):
                continue
            blob = to_bytecode(text)
            for tool, cmd, output in (
                    ("attn-opt", ["{attn-opt}", "in.mlirbc", "-o", "out.mlir"],
                     "out.mlir"),
                    ("attn-compile", ["{attn-compile}", "-q", "in.mlirbc", "-o",
                                      "out"], "out")):
                out.append({
                    "name": "%s-bytecode-%s-%d" % (tool, label, depth),
                    "files": {"in.mlirbc": blob},
                    "cmd": cmd,
                    "exit": "nonzero",
                    "stderr": [BYTECODE_TOO_DEEP],
                    "absent": [output],
                    "timeout": 60,
                })
    # Ordinary depths parse and round-trip through bytecode.
    for label, text in mlir_nests(40):
        if label not in ("modules", "array-attr", "tuple-type", "scf-regions"):
            continue
        out.append({
            "name": "attn-opt-bytecode-%s-40-accepted" % label,
            "files": {"in.mlirbc": to_bytecode(text)},
            "cmd": ["{attn-opt}", "in.mlirbc", "-o", "out.mlir"],
            "exit": "zero",
            "outputs": ["out.mlir"],
        })
    return out


def json_nests(depth):
    return [
        ("arrays", "[" * depth + "]" * depth),
        ("objects", '{"a": ' * depth + "1" + "}" * depth),
        ("mixed", '[{"a": ' * depth + "1" + "}]" * depth),
        ("unclosed", "[" * depth),
        ("in-scores", '{"scores": ' + "[" * depth + "]" * depth + "}"),
    ]


def json_cases():
    encoder = read_example("small_encoder.mlir")
    out = []
    for depth in DEPTHS:
        for label, text in json_nests(depth):
            out.append({
                "name": "scores-file-%s-%d" % (label, depth),
                "files": {"m.mlir": encoder, "s.json": text},
                "cmd": ["{attn-compile}", "-q", "m.mlir",
                        "--layer-drop=strategy=top-k keep=1 scores-file=s.json",
                        "-o", "out"],
                "exit": "nonzero",
                "stderr": [r"m\.mlir:\d+:\d+: error: attn-layer-drop: scores-file "
                           r"'s\.json': s\.json:1:\d+: JSON nests deeper than 256"],
                "absent": ["out"],
            })
            out.append({
                "name": "prune-spec-%s-%d" % (label, depth),
                "files": {"m.mlir": encoder, "p.json": text},
                "cmd": ["{attn-compile}", "-q", "m.mlir", "--prune=p.json",
                        "-o", "out"],
                "exit": "nonzero",
                "stderr": [r"error: attn-prune-structure: spec-file 'p\.json': "
                           r"p\.json:1:\d+: JSON nests deeper than 256"],
                "absent": ["out"],
            })
        out.append({
            "name": "attn-opt-scores-file-arrays-%d" % depth,
            "files": {"m.mlir": encoder, "s.json": "[" * depth + "]" * depth},
            "cmd": ["{attn-opt}", "m.mlir",
                    "--attn-layer-drop=strategy=top-k keep=1 scores-file=s.json",
                    "-o", "out.mlir"],
            "exit": "nonzero",
            "stderr": [r"s\.json:1:257: JSON nests deeper than 256"],
            "absent": ["out.mlir"],
        })
        out.append({
            "name": "attn-opt-prune-spec-objects-%d" % depth,
            "files": {"m.mlir": encoder, "p.json": '{"a": ' * depth + "1" + "}" * depth},
            "cmd": ["{attn-opt}", "m.mlir", "--attn-prune-structure=spec-file=p.json",
                    "-o", "out.mlir"],
            "exit": "nonzero",
            "stderr": [r"p\.json:1:\d+: JSON nests deeper than 256"],
            "absent": ["out.mlir"],
        })
    # Ordinary depths reach the pass's own checks.
    out.append({
        "name": "scores-file-nested-40-is-not-scores",
        "files": {"m.mlir": encoder, "s.json": "[" * 40 + "]" * 40},
        "cmd": ["{attn-compile}", "-q", "m.mlir",
                "--layer-drop=strategy=top-k keep=1 scores-file=s.json", "-o", "out"],
        "exit": "nonzero",
        "stderr": [r"scores-file 's\.json': has 1 scores but the stack has 2 layers"],
    })
    out.append({
        "name": "prune-spec-nested-40-is-not-a-spec",
        "files": {"m.mlir": encoder, "p.json": '{"a": ' * 40 + "1" + "}" * 40},
        "cmd": ["{attn-compile}", "-q", "m.mlir", "--prune=p.json", "-o", "out"],
        "exit": "nonzero",
        "stderr": [r"spec-file 'p\.json': expected an object with \"layers\""],
    })
    # Brackets inside JSON strings do not count.
    out.append({
        "name": "scores-file-brackets-in-strings",
        "files": {"m.mlir": encoder,
                  "s.json": json.dumps({"0": 1.0, "1": 2.0, "x" * 3: "[" * 5000})},
        "cmd": ["{attn-compile}", "-q", "m.mlir",
                "--layer-drop=strategy=top-k keep=1 scores-file=s.json", "-o", "out"],
        "exit": "nonzero",
        "stderr": [r"key 'xxx' is not a layer depth"],
    })
    # The safetensors header (the runtime's own JSON parser).
    ids = read_example("small_encoder.ids.npy")
    for depth in DEPTHS:
        meta_text = '{"__metadata__": {"k": ' + "[" * depth + "]" * depth + "}}"
        out.append({
            "name": "safetensors-header-arrays-%d" % depth,
            "files": {"w.safetensors": safetensors([], header_text=meta_text),
                      "x.npy": ids},
            "cmd": ["{model}", "--weights", "w.safetensors", "--input", "x.npy"],
            "exit": "nonzero",
            "stderr": [r"w\.safetensors: header is not valid JSON: .*nest"],
        })
    return out


def cases():
    return mlir_cases() + bytecode_cases() + json_cases()
