"""Verifier gaps: NaN and infinite float attributes, two attn.layers with
one index, negative indices, attn.layers nested in each other, weight names
with control characters, one weight name bound as two different tensors,
and #attn.tile fields beyond their limits. Each is a located error from attn-opt and
attn-compile, with no output left behind."""

NAN, INF, NEG_INF = "0x7FF8000000000000", "0x7FF0000000000000", "0xFFF0000000000000"
NEG_NAN = "0xFFF8000000000000"
BAD_FLOATS = [("nan", NAN), ("neg-nan", NEG_NAN), ("inf", INF), ("neg-inf", NEG_INF),
              ("zero", "0.0"), ("negative", "-1.0e-5")]


def t(dims, dtype="f32"):
    return "tensor<" + "".join("%sx" % d for d in dims) + dtype + ">"


def func(args, op, result):
    sig = ", ".join("%%%s: %s" % (n, ty) for n, ty in args)
    return ("func.func @f(%s) -> %s {\n  %%0 = %s\n  return %%0 : %s\n}\n"
            % (sig, result, op, result))


def float_attr_cases():
    """(label, text, regex) with a bad float attribute on line 2."""
    out = []
    x, g = t([2, 8]), t([8])
    q = t([1, 2, 4, 8])
    xm, wm = t([1, 4, 8]), t([8, 8])
    for name, value in BAD_FLOATS:
        positive = r"must be a positive finite number, got "
        out.append(("layer-norm-epsilon-" + name,
                    func([("x", x), ("g", g)],
                         "attn.layer_norm %%x, %%g, %%g epsilon = %s : %s, %s, %s" % (value, x, g, g), x),
                    r"'attn\.layer_norm' op epsilon " + positive))
        out.append(("rms-norm-epsilon-" + name,
                    func([("x", x), ("g", g)],
                         "attn.rms_norm %%x, %%g epsilon = %s : %s, %s" % (value, x, g), x),
                    r"'attn\.rms_norm' op epsilon " + positive))
        out.append(("rotary-base-" + name,
                    func([("x", q)], "attn.rotary %%x base = %s : %s" % (value, q), q),
                    r"'attn\.rotary' op base " + positive))
        out.append(("sdpa-scale-" + name,
                    func([("q", q)], "attn.sdpa %%q, %%q, %%q scale = %s : %s, %s, %s -> %s"
                         % (value, q, q, q, q), q),
                    r"'attn\.sdpa' op scale " + positive))
        out.append(("mha-scale-" + name,
                    func([("x", xm), ("w", wm)],
                         "attn.mha %%x weights(%%w, %%w, %%w, %%w) heads = 2 scale = %s : (%s, %s, %s, %s, %s) -> %s"
                         % (value, xm, wm, wm, wm, wm, xm), xm),
                    r"'attn\.mha' op scale " + positive))
        if name in ("nan", "neg-nan", "inf", "neg-inf"):
            out.append(("layer-score-" + name,
                        "func.func @f(%%x: %s) -> %s {\n"
                        "  %%0 = attn.layer index = 0 score = %s (%%x) : (%s) -> %s {\n"
                        "  ^bb0(%%h: %s):\n    attn.yield %%h : %s\n  }\n"
                        "  return %%0 : %s\n}\n" % (xm, xm, value, xm, xm, xm, xm, xm),
                        r"'attn\.layer' op score must be finite"))
    return out


def layer(index, arg, res, ty):
    return ("  %%%s = attn.layer index = %d (%%%s) : (%s) -> %s {\n"
            "  ^bb0(%%h: %s):\n    %%r = attn.relu %%h : %s\n    attn.yield %%r : %s\n  }\n"
            % (res, index, arg, ty, ty, ty, ty, ty))


def duplicate_layer_cases():
    """(label, text, line of the duplicate) for stacks with a repeated index."""
    ty = t([1, 4, 8])
    stacks = [[0, 0], [1, 1], [0, 1, 0], [2, 1, 2], [0, 1, 2, 3, 3], [5, 4, 3, 2, 1, 0, 4],
              [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0], [7, 7, 7]]
    out = []
    for indices in stacks:
        body, seen, dup_line = "", set(), None
        for i, index in enumerate(indices):
            if index in seen and dup_line is None:
                dup_line = 2 + 5 * i
            seen.add(index)
            body += layer(index, "x" if i == 0 else "l%d" % (i - 1), "l%d" % i, ty)
        text = ("func.func @f(%%x: %s) -> %s {\n%s  return %%l%d : %s\n}\n"
                % (ty, ty, body, len(indices) - 1, ty))
        out.append(("duplicate-index-" + "-".join(map(str, indices)), text, dup_line))
    return out


def nesting_cases():
    """(label, text, line of the inner layer) with an attn.layer inside
    another, directly or deeper."""
    ty = t([1, 4, 8])
    out = []
    for depth in (2, 3, 5):
        text = "func.func @f(%%x: %s) -> %s {\n" % (ty, ty)
        for d in range(depth):
            arg = "x" if d == 0 else "a%d" % (d - 1)
            text += "%s%%l%d = attn.layer index = %d (%%%s) : (%s) -> %s {\n" % (
                "  " * (d + 1), d, d, arg, ty, ty)
            text += "%s^bb0(%%a%d: %s):\n" % ("  " * (d + 1), d, ty)
        text += "%sattn.yield %%a%d : %s\n" % ("  " * (depth + 1), depth - 1, ty)
        for d in reversed(range(depth)):
            text += "%s}\n" % ("  " * (d + 1))
            if d > 0:
                text += "%sattn.yield %%l%d : %s\n" % ("  " * d, d, ty)
        text += "  return %%l0 : %s\n}\n" % ty
        out.append(("nested-layers-%d" % depth, text, 4))
    # Inside another op's region within a layer (an scf.execute_region).
    text = ("func.func @f(%%x: %s) -> %s {\n"
            "  %%l = attn.layer index = 0 (%%x) : (%s) -> %s {\n"
            "  ^bb0(%%a: %s):\n"
            "    %%r = scf.execute_region -> %s {\n"
            "      %%i = attn.layer index = 1 (%%a) : (%s) -> %s {\n"
            "      ^bb0(%%b: %s):\n"
            "        attn.yield %%b : %s\n"
            "      }\n"
            "      scf.yield %%i : %s\n"
            "    }\n"
            "    attn.yield %%r : %s\n"
            "  }\n"
            "  return %%l : %s\n}\n" % ((ty,) * 13))
    out.append(("nested-layer-in-region", text, 5))
    return out


def negative_index_cases():
    """(label, text, regex) with a negative or out-of-range attn.layer index."""
    ty = t([1, 4, 8])
    out = []
    for value in ("-1", "-9223372036854775808"):
        out.append(("layer-index%s" % value, layer(0, "x", "l0", ty).replace(
            "index = 0", "index = " + value),
            r"'attn\.layer' op attribute 'index' failed to satisfy constraint"))
        generic = ("  %%l0 = \"attn.layer\"(%%x) <{index = %s : i64}> ({\n"
                   "  ^bb0(%%h: %s):\n    \"attn.yield\"(%%h) : (%s) -> ()\n"
                   "  }) : (%s) -> %s\n" % (value, ty, ty, ty, ty))
        out.append(("layer-index-generic%s" % value, generic,
                    r"'attn\.layer' op attribute 'index' failed to satisfy constraint"))
    return [(label, "func.func @f(%%x: %s) -> %s {\n%s  return %%l0 : %s\n}\n"
             % (ty, ty, body, ty), message) for label, body, message in out]


WEIGHT_NAME_CONTROLS = [("newline", "\\0A", "0a"), ("nul", "\\00", "00"),
                        ("tab", "\\09", "09"), ("carriage-return", "\\0D", "0d"),
                        ("escape", "\\1B", "1b"), ("delete", "\\7F", "7f")]


def weight_name_cases():
    """(label, text, regex) with a control character in a weight name."""
    out = []
    for label, escape, code in WEIGHT_NAME_CONTROLS:
        for where, name in (("start", escape + "w"), ("middle", "layers.0" + escape + "q"),
                            ("end", "w" + escape)):
            text = ("func.func @f() -> tensor<8xf32> {\n"
                    "  %%w = attn.weight \"%s\" : tensor<8xf32>\n"
                    "  return %%w : tensor<8xf32>\n}\n" % name)
            out.append(("weight-name-%s-%s" % (label, where), text,
                        r"'attn\.weight' op weight name contains the control character 0x%s"
                        % code))
        text = ("func.func @f() -> tensor<16x8xf32> {\n"
                "  %%w = attn.weight \"fused\" {concat_names = [\"a\", \"b%s\"], concat_axis = 0 : i64}"
                " : tensor<16x8xf32>\n"
                "  return %%w : tensor<16x8xf32>\n}\n" % escape)
        out.append(("weight-concat-name-%s" % label, text,
                    r"'attn\.weight' op weight name contains the control character 0x%s" % code))
    return out


def weight_binding_cases():
    """(label, text) binding one name as two different tensors."""
    out = []
    pairs = [("shape", "tensor<32x64xf32>", "", "tensor<64x64xf32>", ""),
             ("rank", "tensor<64xf32>", "", "tensor<1x64xf32>", ""),
             ("dtype", "tensor<64xf32>", "", "tensor<64xf16>", ""),
             ("dtype-bf16", "tensor<8x8xbf16>", "", "tensor<8x8xf16>", ""),
             ("transposed", "tensor<32x64xf32>", "", "tensor<32x64xf32>", " {transpose}"),
             ("gather-extent", "tensor<32x64xf32>", "",
              "tensor<16x64xf32>", " {gather_axis = 0 : i64, gather_extent = 48 : i64, gather_ranges = array<i64: 0, 16>}"),
             ("concat-part-dtype", "tensor<8x8xf32>", "",
              "tensor<16x8xf16>", " {concat_names = [\"w\", \"k\"], concat_axis = 0 : i64}")]
    for label, ty1, attrs1, ty2, attrs2 in pairs:
        name2 = "\"fused\"" if "concat" in label else "\"w\""
        text = ("func.func @f() -> (%s, %s) {\n"
                "  %%a = attn.weight \"w\"%s : %s\n"
                "  %%b = attn.weight %s%s : %s\n"
                "  return %%a, %%b : %s, %s\n}\n" % (ty1, ty2, attrs1, ty1, name2, attrs2, ty2, ty1, ty2))
        out.append(("weight-two-" + label, text))
        # The same across two functions of one module.
        text = ("func.func @f() -> %s {\n  %%a = attn.weight \"w\"%s : %s\n  return %%a : %s\n}\n"
                "func.func @g() -> %s {\n  %%b = attn.weight %s%s : %s\n  return %%b : %s\n}\n"
                % (ty1, attrs1, ty1, ty1, ty2, name2, attrs2, ty2, ty2))
        out.append(("weight-two-functions-" + label, text))
    return out


TILE_LIMITS = {"block_q": 4096, "block_k": 4096, "vector_width": 64, "row_tile": 64,
               "col_tile": 64, "column_block": 65536, "warp_n_tiles": 16, "threads": 1024}


def tile_cases():
    """(label, text, regex) with one #attn.tile field out of its bounds."""
    out = []
    x, w, r = t([8, 64]), t([32, 64]), t([8, 32])
    for field, limit in TILE_LIMITS.items():
        values = [0, -1, limit * 2 if field != "vector_width" else 128, 1 << 40,
                  9223372036854775807, -9223372036854775807]
        for value in values:
            if value >= 1:
                message = r"#attn\.tile: %s must be at most %d, got %d" % (field, limit, value)
            else:
                message = r"#attn\.tile: %s must be >= 1, got %d" % (field, value)
            text = func([("x", x), ("w", w)],
                        "attn.linear %%x, %%w {attn.tile = #attn.tile<%s = %d>} : (%s, %s) -> %s"
                        % (field, value, x, w, r), r)
            out.append(("tile-%s-%d" % (field.replace("_", "-"), value), text, message))
    return out


def tools(label, text, message, line=None):
    where = r"in\.mlir:%s:\d+: error: " % (line if line else r"\d+")
    out = []
    for tool, cmd in (("attn-opt", ["{attn-opt}", "in.mlir", "-o", "out"]),
                      ("attn-compile", ["{attn-compile}", "-q", "in.mlir", "-o", "out"])):
        out.append({"name": "%s-%s" % (tool, label), "files": {"in.mlir": text}, "cmd": cmd,
                    "exit": "nonzero", "stderr": [where + ".*" + message], "absent": ["out"],
                    "timeout": 30})
    return out


def cases():
    out = []
    for label, text, message in float_attr_cases():
        out += tools(label, text, message, line=2)
    for label, text, line in duplicate_layer_cases():
        out += tools(label, text,
                     r"'attn\.layer' op index \d+ is already used by another layer of this block",
                     line=line)
    for label, text in weight_binding_cases():
        message = r"'attn\.weight' op binds weight '\w+' as .* but another attn\.weight binds it"
        # attn-opt checks it in --attn-verify-model; attn-compile's pipelines
        # run that pass first.
        out.append({"name": "attn-opt-" + label, "files": {"in.mlir": text},
                    "cmd": ["{attn-opt}", "in.mlir", "--attn-verify-model", "-o", "out"],
                    "exit": "nonzero", "stderr": [r"in\.mlir:\d+:\d+: error: " + message],
                    "absent": ["out"], "timeout": 30})
        for emit in ("linalg", "exe"):
            out.append({"name": "attn-compile-%s-%s" % (emit, label), "files": {"in.mlir": text},
                        "cmd": ["{attn-compile}", "-q", "in.mlir", "--emit=" + emit, "-o", "out"],
                        "exit": "nonzero", "stderr": [r"in\.mlir:\d+:\d+: error: " + message],
                        "absent": ["out"], "timeout": 30})
    for label, text, message in tile_cases():
        out += tools(label, text, message, line=2)
    for label, text, line in nesting_cases():
        out += tools(label, text, r"'attn\.layer' op is nested in another attn\.layer",
                     line=line)
    for label, text, message in negative_index_cases():
        out += tools(label, text, message, line=2)
    for label, text, message in weight_name_cases():
        out += tools(label, text, message, line=2)
    return out
