"""Zero-size and absurd shapes. Zero-size dimensions where an op would be
meaningless (a norm over an empty row, a table without rows, attention over
no keys) are verifier errors at the op; tensors whose byte size overflows or
exceeds what the target can address (2^47 bytes) are rejected by the
pipelines' attn-verify-model at the op that uses them. Every case runs
through attn-opt and attn-compile; none may crash or leave output."""

ZERO = r"error: 'attn\.%s' op %s is 0; it must be at least 1"
TOO_BIG = (r"in\.mlir:\d+:\d+: error: .*(more than the target can address|"
           r"whose size in bytes overflows 64 bits)")


def t(dims, dtype="f32"):
    return "tensor<" + "".join("%sx" % d for d in dims) + dtype + ">"


def func(args, op, result):
    """A function whose line 2 holds `op` (its name at column 8); args are
    (name, type)."""
    sig = ", ".join("%%%s: %s" % (n, ty) for n, ty in args)
    return ("func.func @f(%s) -> %s {\n  %%0 = %s\n  return %%0 : %s\n}\n"
            % (sig, result, op, result))


def zero_cases():
    """(label, mlir text, op name, message) with one zero-size dimension."""
    out = []
    for dt in ("f32", "f16", "bf16"):
        # attn.embedding: [vocab, width] table.
        for v, e, what in ((0, 8, "table dimension 0 \\(vocab\\)"),
                           (10, 0, "table dimension 1 \\(embedding width\\)")):
            ids, tab, res = t([1, 4], "i32"), t([v, e], dt), t([1, 4, e], dt)
            out.append(("embedding-%dx%d-%s" % (v, e, dt),
                        func([("ids", ids), ("tab", tab)],
                             "attn.embedding %%ids, %%tab : (%s, %s) -> %s" % (ids, tab, res),
                             res), "embedding", what))
        # Norms over an empty last dimension, at ranks 1 to 4.
        for shape in ([0], [2, 0], [2, 3, 0], [1, 2, 3, 0]):
            x, g = t(shape, dt), t([0], dt)
            last = "input dimension %d \\(the normalized last dimension\\)" % (len(shape) - 1)
            label = "x".join(map(str, shape))
            out.append(("layer-norm-%s-%s" % (label, dt),
                        func([("x", x), ("g", g)],
                             "attn.layer_norm %%x, %%g, %%g : %s, %s, %s" % (x, g, g), x),
                        "layer_norm", last))
            out.append(("rms-norm-%s-%s" % (label, dt),
                        func([("x", x), ("g", g)],
                             "attn.rms_norm %%x, %%g : %s, %s" % (x, g), x),
                        "rms_norm", last))
        # Softmax along an empty dimension, each position of a rank-3 tensor.
        for d in range(3):
            shape = [2, 3, 4]
            shape[d] = 0
            x = t(shape, dt)
            out.append(("softmax-dim%d-%s" % (d, dt),
                        func([("x", x)], "attn.softmax %%x dim = %d : %s" % (d, x), x),
                        "softmax", "input dimension %d \\(the softmax dimension\\)" % d))
    for dt in ("f32", "f16"):
        # attn.linear from or to zero features, at ranks 2 and 3.
        for lead in ([4], [2, 4]):
            for k, n, what in ((0, 8, "input dimension %d \\(in_features\\)" % len(lead)),
                               (8, 0, "weight dimension 0 \\(out_features\\)")):
                x, w, r = t(lead + [k], dt), t([n, k], dt), t(lead + [n], dt)
                out.append(("linear-%s-k%d-n%d-%s" % ("x".join(map(str, lead)), k, n, dt),
                            func([("x", x), ("w", w)],
                                 "attn.linear %%x, %%w : (%s, %s) -> %s" % (x, w, r), r),
                            "linear", what))
        # attn.ffn with an empty hidden or model width.
        for d, f, what in ((8, 0, "up_weight dimension 0 \\(out_features\\)"),
                           (0, 8, "input dimension 1 \\(in_features\\)")):
            for act in ("relu", "gelu"):
                x, up, down = t([4, d], dt), t([f, d], dt), t([d, f], dt)
                out.append(("ffn-d%d-f%d-%s-%s" % (d, f, act, dt),
                            func([("x", x), ("u", up), ("w", down)],
                                 "attn.ffn %%x up(%%u) down(%%w) activation = %s : (%s, %s, %s) -> %s"
                                 % (act, x, up, down, x), x),
                            "ffn", what))
        # attn.sdpa: heads, head sizes and keys.
        sdpa = [
            ("heads", [1, 0, 4, 8], [1, 0, 4, 8], [1, 0, 4, 8], "query dimension 1 \\(query heads\\)"),
            ("kv-heads", [1, 2, 4, 8], [1, 0, 4, 8], [1, 0, 4, 8], "key dimension 1 \\(key/value heads\\)"),
            ("head-size", [1, 2, 4, 0], [1, 2, 4, 0], [1, 2, 4, 8], "query dimension 3 \\(query head size\\)"),
            ("keys", [1, 2, 4, 8], [1, 2, 0, 8], [1, 2, 0, 8], "key dimension 2 \\(key sequence\\)"),
            ("value-size", [1, 2, 4, 8], [1, 2, 4, 8], [1, 2, 4, 0], "value dimension 3 \\(value head size\\)"),
        ]
        for label, q, k, v, what in sdpa:
            for extra in ("", " causal", " score = scaled_dot"):
                r = t(q[:3] + [v[3]], dt)
                tq, tk, tv = t(q, dt), t(k, dt), t(v, dt)
                out.append(("sdpa-%s%s-%s" % (label, extra.replace(" ", "-").replace("=", "").replace("--", "-"), dt),
                            func([("q", tq), ("k", tk), ("v", tv)],
                                 "attn.sdpa %%q, %%k, %%v%s : %s, %s, %s -> %s" % (extra, tq, tk, tv, r), r),
                            "sdpa", what))
        # attn.mha: zero model width; cross attention over no keys.
        x0, w0 = t([1, 4, 0], dt), t([0, 0], dt)
        out.append(("mha-d-model-%s" % dt,
                    func([("x", x0), ("w", w0)],
                         "attn.mha %%x weights(%%w, %%w, %%w, %%w) heads = 2 : (%s, %s, %s, %s, %s) -> %s"
                         % (x0, w0, w0, w0, w0, x0), x0),
                    "mha", "query dimension 2 \\(d_model\\)"))
        x, kv, w = t([1, 4, 8], dt), t([1, 0, 8], dt), t([8, 8], dt)
        out.append(("mha-no-keys-%s" % dt,
                    func([("x", x), ("kv", kv), ("w", w)],
                         "attn.mha %%x, %%kv weights(%%w, %%w, %%w, %%w) heads = 2 : (%s, %s, %s, %s, %s, %s) -> %s"
                         % (x, kv, w, w, w, w, x), x),
                    "mha", "key_value dimension 1 \\(key sequence\\)"))
        # Positions.
        x = t([1, 4, 0], dt)
        out.append(("sinusoidal-%s" % dt, func([("x", x)], "attn.sinusoidal_pos %%x : %s" % x, x),
                    "sinusoidal_pos", "input dimension 2 \\(d_model\\)"))
        x, tab = t([1, 0, 8], dt), t([0, 8], dt)
        out.append(("learned-pos-rows-%s" % dt,
                    func([("x", x), ("p", tab)], "attn.learned_pos %%x, %%p : %s, %s" % (x, tab), x),
                    "learned_pos", "table dimension 0 \\(max_positions\\)"))
        x, tab = t([1, 4, 0], dt), t([16, 0], dt)
        out.append(("learned-pos-width-%s" % dt,
                    func([("x", x), ("p", tab)], "attn.learned_pos %%x, %%p : %s, %s" % (x, tab), x),
                    "learned_pos", "table dimension 1 \\(d_model\\)"))
        x = t([1, 2, 4, 0], dt)
        out.append(("rotary-%s" % dt, func([("x", x)], "attn.rotary %%x : %s" % x, x),
                    "rotary", "input dimension 3 \\(head_dim\\)"))
    return out


def weight_cases():
    out = []
    for shape in ([0], [0, 4], [4, 0], [2, 0, 3], [0, 0]):
        ty = t(shape)
        out.append(("weight-%s" % "x".join(map(str, shape)),
                    "func.func @f() -> %s {\n  %%0 = attn.weight \"w\" : %s\n  return %%0 : %s\n}\n"
                    % (ty, ty, ty)))
    return out


def huge_models():
    """(label, mlir text) whose tensors no target can hold."""
    big = [(1 << 40, 1 << 10), (1 << 47, 1), (1 << 62, 1), (9223372036854775807, 1),
           (1 << 33, 1 << 33), (3, 6148914691236517206)]
    out = []
    for a, b in big:
        label = "%dx%d" % (a, b)
        ty = t([a, b])
        out.append(("weight-" + label,
                    "func.func @f() -> %s {\n  %%0 = attn.weight \"w\" : %s\n  return %%0 : %s\n}\n"
                    % (ty, ty, ty)))
        out.append(("argument-" + label, func([("x", ty)], "attn.relu %%x : %s" % ty, ty)))
        tyd = t(["?", a, b])
        out.append(("dynamic-batch-" + label, func([("x", tyd)], "attn.gelu %%x : %s" % tyd, tyd)))
        x, y = t([1, a, b]), t([1, a, b], "f16")
        out.append(("add-" + label, func([("x", x)], "attn.add %%x, %%x : %s" % x, x)))
        out.append(("f16-" + label, func([("x", y)], "attn.silu %%x : %s" % y, y)))
    # Products of sizes that are fine alone: an embedding lookup's result.
    ids, tab, res = t([1 << 20, 1 << 20], "i32"), t([100, 1 << 20]), t([1 << 20, 1 << 20, 1 << 20])
    out.append(("embedding-result",
                func([("ids", ids), ("tab", tab)],
                     "attn.embedding %%ids, %%tab : (%s, %s) -> %s" % (ids, tab, res), res)))
    x, w, r = t([1 << 24, 4096]), t([1 << 24, 4096]), t([1 << 24, 1 << 24])
    out.append(("linear-result",
                func([("x", x), ("w", w)], "attn.linear %%x, %%w : (%s, %s) -> %s" % (x, w, r), r)))
    return out


def cases():
    out = []
    for label, text, op, what in zero_cases():
        message = r"in\.mlir:2:8: " + ZERO % (op, what)
        out.append({"name": "attn-opt-zero-" + label, "files": {"in.mlir": text},
                    "cmd": ["{attn-opt}", "in.mlir", "-o", "out.mlir"], "exit": "nonzero",
                    "stderr": [message], "absent": ["out.mlir"], "timeout": 30})
        out.append({"name": "attn-compile-zero-" + label, "files": {"in.mlir": text},
                    "cmd": ["{attn-compile}", "-q", "in.mlir", "-o", "model"], "exit": "nonzero",
                    "stderr": [message], "absent": ["model"], "timeout": 30})
    for label, text in weight_cases():
        message = (r"in\.mlir:2:8: error: 'attn\.weight' op weight 'w' has type '[^']*' "
                   r"with no elements")
        for tool, cmd in (("attn-opt", ["{attn-opt}", "in.mlir", "-o", "out"]),
                          ("attn-compile", ["{attn-compile}", "-q", "in.mlir", "-o", "out"])):
            out.append({"name": "%s-zero-%s" % (tool, label), "files": {"in.mlir": text},
                        "cmd": cmd, "exit": "nonzero", "stderr": [message],
                        "absent": ["out"], "timeout": 30})
    for label, text in huge_models():
        out.append({"name": "attn-compile-huge-" + label, "files": {"in.mlir": text},
                    "cmd": ["{attn-compile}", "-q", "in.mlir", "-o", "model"], "exit": "nonzero",
                    "stderr": [TOO_BIG], "absent": ["model"], "timeout": 60})
        out.append({"name": "attn-compile-linalg-huge-" + label, "files": {"in.mlir": text},
                    "cmd": ["{attn-compile}", "-q", "in.mlir", "--emit=linalg", "-o", "out.mlir"],
                    "exit": "nonzero", "stderr": [TOO_BIG], "absent": ["out.mlir"], "timeout": 60})
        out.append({"name": "attn-opt-verify-model-huge-" + label, "files": {"in.mlir": text},
                    "cmd": ["{attn-opt}", "in.mlir", "--attn-verify-model", "-o", "out.mlir"],
                    "exit": "nonzero", "stderr": [TOO_BIG], "absent": ["out.mlir"], "timeout": 60})
    # attn-fuse-rows on an empty row (it crashed): left alone, no crash.
    fuse = ("#map = affine_map<(d0, d1) -> (d0, d1)>\n"
            "func.func @f(%x: tensor<4x0xf32>) -> tensor<4x0xf32> {\n"
            "  %e = tensor.empty() : tensor<4x0xf32>\n"
            "  %0 = linalg.generic {indexing_maps = [#map, #map], iterator_types = [\"parallel\", \"parallel\"]}"
            " ins(%x : tensor<4x0xf32>) outs(%e : tensor<4x0xf32>) attrs = {attn.fuse_rows} {\n"
            "  ^bb0(%a: f32, %b: f32):\n    linalg.yield %a : f32\n  } -> tensor<4x0xf32>\n"
            "  return %0 : tensor<4x0xf32>\n}\n")
    for rows in (1, 4):
        out.append({"name": "attn-fuse-rows-empty-row-%d" % rows, "files": {"in.mlir": fuse},
                    "cmd": ["{attn-opt}", "in.mlir", "--pass-pipeline=builtin.module(func.func(attn-fuse-rows{rows=%d}))" % rows,
                            "-o", "out.mlir"],
                    "exit": 0, "outputs": ["out.mlir"], "timeout": 30})
    for rows in (0, -1):
        out.append({"name": "attn-fuse-rows-bad-rows%d" % rows, "files": {"in.mlir": fuse},
                    "cmd": ["{attn-opt}", "in.mlir", "--pass-pipeline=builtin.module(func.func(attn-fuse-rows{rows=%d}))" % rows,
                            "-o", "out.mlir"],
                    "exit": "nonzero", "stderr": [r"attn-fuse-rows: rows must be >= 1, got %d" % rows],
                    "absent": ["out.mlir"], "timeout": 30})
    return out
