"""A small parser for MLIR's generic op form, and the type helpers both
emulators use."""

import re

# A dynamic size, offset or stride in an op's static_* properties.
DYNAMIC = -9223372036854775808

OP_RE = re.compile(
    r'^(?:(?P<res>%[\w]+)(?::(?P<nres>\d+))? = )?"(?P<name>[\w.]+)"'
    r'\((?P<operands>[^)]*)\)(?P<rest>.*)$')
BLOCK_RE = re.compile(r"^\^bb\d+(?:\((?P<args>.*)\))?:$")


class Op:
    def __init__(self, name, results, operands, text):
        self.name = name
        self.results = results
        self.operands = operands
        self.text = text  # the op's own line(s), for attributes and types
        self.regions = []  # list of (arg names, ops)

    def attr_ints(self, key):
        m = re.search(key + r" = array<i\d+(?:: ([-\d, ]*))?>", self.text)
        if not m:
            raise ValueError(f"{self.name}: no {key} in {self.text}")
        return [int(v) for v in m.group(1).split(",")] if m.group(1) else []

    def alignment(self):
        m = re.search(r"alignment = (\d+) : i64", self.text)
        return int(m.group(1)) if m else None


def props(op, key):
    """The integers of the array property `key` of `op`."""
    return op.attr_ints(key)


def split_top(s, braces=False):
    """Splits on commas outside <> () [] (and {} with `braces`) and outside
    strings."""
    opening, closing = ("<([{", ">)]}") if braces else ("<([", ">)]")
    out, depth, cur, quoted = [], 0, "", False
    for ch in s:
        if ch == '"':
            quoted = not quoted
        elif not quoted and ch in opening:
            depth += 1
        elif not quoted and ch in closing:
            depth -= 1
        if ch == "," and depth == 0 and not quoted:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def parse_ops(lines, pos):
    """Parses ops up to a line starting with '})'; returns (ops, pos)."""
    ops = []
    while pos < len(lines):
        line = lines[pos].strip()
        if not line or line.startswith("#") or line.startswith("module"):
            pos += 1
            continue
        if line.startswith("})") or line.startswith("}, {") or line == "}":
            return ops, pos
        m = OP_RE.match(line)
        if not m:
            raise ValueError(f"cannot parse: {line}")
        results = []
        if m.group("res"):
            n = int(m.group("nres") or 1)
            results = ([m.group("res")] if n == 1 else
                       [f"{m.group('res')}#{i}" for i in range(n)])
        operands = [o for o in split_top(m.group("operands"))]
        op = Op(m.group("name"), results, operands, line)
        pos += 1
        if line.endswith("({"):
            while True:
                args = []
                bm = BLOCK_RE.match(lines[pos].strip())
                if bm:
                    if bm.group("args"):
                        args = [a.split(":")[0].strip()
                                for a in split_top(bm.group("args"))]
                    pos += 1
                body, pos = parse_ops(lines, pos)
                op.regions.append((args, body))
                closing = lines[pos].strip()
                op.text += " " + closing
                pos += 1
                if closing.startswith("}, {"):
                    continue
                break
        ops.append(op)
    return ops, pos


def parse_module(text):
    """The func.func ops of a module, by name."""
    lines = text.splitlines()
    funcs = {}
    for i, line in enumerate(lines):
        s = line.strip()
        if '"func.func"()' in s:
            name = re.search(r'sym_name = "(\w+)"', s).group(1)
            ops, _ = parse_ops(lines, i)
            funcs[name] = ops[0]
    return funcs


def sym_name(op):
    return re.search(r'sym_name = "([\w.$-]+)"', op.text).group(1)


def result_types(op):
    """The result types of a generic op (after the last '->' of its
    signature)."""
    sig = op.text
    # Region ops carry their closing line; the signature is at the end.
    tail = sig.rsplit(") -> ", 1)
    if len(tail) == 2:
        t = tail[1].strip()
    else:
        t = sig.rsplit("->", 1)[1].strip()
    if t.startswith("(") and t.endswith(")"):
        return split_top(t[1:-1])
    return [t]


def operand_types(op):
    sig = op.text.rsplit(" : (", 1)[1]
    return split_top(sig.rsplit(") -> ", 1)[0])


def scalar_elem(ty):
    m = re.fullmatch(r"vector<(?:\d+x)*(\w+)>", ty)
    return m.group(1) if m else ty


def vector_dims(ty):
    """(dims, element type) of a vector type."""
    m = re.match(r"vector<((?:\d+x)*)(\w+)>", ty.strip())
    return [int(d) for d in m.group(1).split("x") if d], m.group(2)


MEMREF_RE = re.compile(
    r"memref<((?:(?:\d+|\?)x)*)(\w+)(?:, strided<\[([-\d?, ]*)\](?:, offset: "
    r"([-\d?]+))?>)?(?:, #gpu\.address_space<(\w+)>)?>")


def parse_memref(ty):
    """-> (shape, elem, strides or None, static offset or None, space);
    a dynamic size (or stride) is None."""
    m = MEMREF_RE.fullmatch(ty.strip())
    if not m:
        raise NotImplementedError(f"memref type {ty}")
    shape = [None if d == "?" else int(d) for d in m.group(1).split("x")
             if d]
    strides = None
    if m.group(3) is not None:
        strides = [None if s.strip() == "?" else int(s)
                   for s in m.group(3).split(",")] if m.group(3).strip() \
            else []
    offset = None
    if m.group(4) is not None and m.group(4) != "?":
        offset = int(m.group(4))
    return shape, m.group(2), strides, offset, m.group(5)


def row_major(shape):
    strides, s = [], 1
    for d in reversed(shape):
        strides.append(s)
        s *= d
    return list(reversed(strides))
