"""Malformed safetensors weights for the compiled small encoder: data_offsets
that overlap or leave holes (the format requires the tensors to tile the data
section), inconsistent headers, bad lengths. Each is one `error: FILE: ...`
line and a non-zero exit; the valid variants run."""

import json
import struct

from corpus_lib import read_example, split_safetensors, join_safetensors

ERR = r"^error: w\.safetensors: .*"


def ordered(header):
    """Tensor names in data order."""
    return sorted((k for k in header if k != "__metadata__"),
                  key=lambda k: header[k]["data_offsets"])


def shifted(header, start_name, delta):
    """Moves every tensor from start_name on by delta bytes."""
    h = json.loads(json.dumps(header))
    names = ordered(h)
    for name in names[names.index(start_name):]:
        b, e = h[name]["data_offsets"]
        h[name]["data_offsets"] = [b + delta, e + delta]
    return h


def raw(header_bytes, data):
    return struct.pack("<Q", len(header_bytes)) + header_bytes + data


def cases():
    blob = read_example("small_encoder.safetensors")
    ids = read_example("small_encoder.ids.npy")
    header, data = split_safetensors(blob)
    names = ordered(header)
    first, second, third = names[0], names[1], names[2]
    last = names[-1]
    variants = []  # (name, bytes, expected stderr regex or None for success)

    def add(name, content, stderr):
        variants.append((name, content, stderr))

    # Overlaps.
    h = json.loads(json.dumps(header))
    h[second]["data_offsets"] = list(h[first]["data_offsets"])
    h[second]["data_offsets"][1] = h[second]["data_offsets"][0] + (
        header[second]["data_offsets"][1] - header[second]["data_offsets"][0])
    add("overlap-second-inside-first", join_safetensors(h, data),
        ERR + r"tensor '.*': data_offsets \[\d+, \d+\] overlap tensor '.*' at \[\d+, \d+\]")
    for delta in (-4, -1):
        try:
            h = shifted(header, second, delta)
        except ValueError:
            continue
        add("overlap-shift-%d" % -delta, join_safetensors(h, data + b"\0" * 0),
            ERR + r"overlap tensor")
    # Two same-size tensors on the same bytes (the first bias twice).
    biases = [n for n in names if n.endswith(".bias") and
              header[n]["shape"] == [64]]
    h = json.loads(json.dumps(header))
    h[biases[1]]["data_offsets"] = list(h[biases[0]]["data_offsets"])
    add("same-range-twice", join_safetensors(h, data), ERR + r"overlap tensor")
    # A zero-size tensor inside another one.
    h = json.loads(json.dumps(header))
    b, e = h[first]["data_offsets"]
    h["inside"] = {"dtype": "F32", "shape": [0], "data_offsets": [b + 4, b + 4]}
    add("empty-tensor-inside-another", join_safetensors(h, data), ERR + r"overlap tensor")
    # Every tensor at offset 0 (each read from the start of the buffer).
    h = json.loads(json.dumps(header))
    for n in names:
        b, e = h[n]["data_offsets"]
        h[n]["data_offsets"] = [0, e - b]
    add("all-at-offset-zero", join_safetensors(h, data), ERR + r"overlap tensor")

    # Holes.
    add("hole-at-start", join_safetensors(shifted(header, first, 64), b"\0" * 64 + data),
        ERR + r"leave bytes \[0, 64\) of the data section unused")
    b2 = header[second]["data_offsets"][0]
    add("hole-in-middle", join_safetensors(shifted(header, second, 4),
                                           data[:b2] + b"\0" * 4 + data[b2:]),
        ERR + r"tensor '.*': data_offsets \[\d+, \d+\] leave bytes \[%d, %d\)" % (b2, b2 + 4))
    add("hole-at-end", join_safetensors(header, data + b"\0" * 12),
        ERR + r"the tensors cover %d bytes of the %d-byte data section" % (len(data), len(data) + 12))
    add("hole-at-end-one-byte", join_safetensors(header, data + b"\0"),
        ERR + r"the tensors cover")
    h = json.loads(json.dumps(header))
    del h[third]
    add("hole-where-a-tensor-was-removed", join_safetensors(h, data), ERR + r"unused")
    h = json.loads(json.dumps(header))
    del h[last]
    add("hole-after-the-last-tensor-removed", join_safetensors(h, data),
        ERR + r"the tensors cover")

    # Valid variants: extra tensors that tile the buffer, zero-size tensors,
    # reordered header entries.
    h = json.loads(json.dumps(header))
    h["zz.extra"] = {"dtype": "U8", "shape": [3], "data_offsets": [len(data), len(data) + 3]}
    add("valid-extra-tensor", join_safetensors(h, data + b"abc"), None)
    h = json.loads(json.dumps(header))
    h["zz.empty"] = {"dtype": "F32", "shape": [0, 5], "data_offsets": [len(data), len(data)]}
    h["aa.empty"] = {"dtype": "F32", "shape": [0], "data_offsets": [0, 0]}
    add("valid-empty-tensors", join_safetensors(h, data), None)
    h = {k: header[k] for k in reversed(list(header))}
    add("valid-reordered-entries", join_safetensors(h, data), None)

    # Header inconsistencies.
    h = json.loads(json.dumps(header))
    h["__metadata__"] = {"k": 5}
    add("metadata-value-not-string", join_safetensors(h, data),
        ERR + r"'__metadata__' value 'k' is not a string")
    h["__metadata__"] = ["a"]
    add("metadata-not-object", join_safetensors(h, data), ERR + r"'__metadata__' is not an object")
    text = json.dumps(header)
    dup = text[:-1] + ', "%s": %s}' % (first, json.dumps(header[first]))
    add("duplicate-tensor-name", raw(dup.encode(), data), ERR + r"duplicate key")
    add("header-trailing-garbage", raw(text.encode() + b"xyz", data),
        ERR + r"header is not valid JSON")
    add("header-nul-padding", raw(text.encode() + b"\0" * 4, data),
        ERR + r"header is not valid JSON")
    add("header-is-array", raw(b"[1, 2]", data), ERR + r"header is not a JSON object")
    add("header-empty", raw(b"", data), ERR + r"header is not valid JSON")
    add("header-length-beyond-file", struct.pack("<Q", 1 << 40) + text.encode(),
        ERR + r"header length \d+ is beyond the end of the file")
    add("header-length-max", struct.pack("<Q", (1 << 64) - 1) + text.encode(),
        ERR + r"header length \d+ is beyond the end of the file")
    add("seven-bytes", b"\x10\0\0\0\0\0\0", ERR + r"too short")
    add("header-overlong-utf8", raw(b'{"a\xc0\xaf": {}}', data),
        ERR + r"header is not valid UTF-8 \(at byte 3\)")
    add("header-utf8-surrogate", raw(b'{"a\xed\xa0\x80": {}}', data),
        ERR + r"header is not valid UTF-8 \(at byte 3\)")
    add("header-truncated-utf8", raw(b'{"abc": {}, "\xe2\x82', data),
        ERR + r"header is not valid UTF-8 \(at byte 13\)")
    add("header-not-utf8", raw(b'{"\xff\xfe": {}}', data), ERR + r"header is not valid UTF-8 \(at byte 2\)")
    for label, entry in [
        ("offsets-float", {"dtype": "F32", "shape": [64], "data_offsets": [0.0, 256.0]}),
        ("offsets-negative", {"dtype": "F32", "shape": [64], "data_offsets": [-256, 0]}),
        ("offsets-three", {"dtype": "F32", "shape": [64], "data_offsets": [0, 256, 512]}),
        ("offsets-strings", {"dtype": "F32", "shape": [64], "data_offsets": ["0", "256"]}),
        ("offsets-reversed", {"dtype": "F32", "shape": [64], "data_offsets": [256, 0]}),
        ("offsets-huge", {"dtype": "F32", "shape": [64], "data_offsets": [0, 1 << 62]}),
        ("shape-mismatch", {"dtype": "F32", "shape": [65], "data_offsets": [0, 256]}),
        ("shape-negative", {"dtype": "F32", "shape": [-64], "data_offsets": [0, 256]}),
        ("shape-overflow", {"dtype": "F32", "shape": [1 << 62, 1 << 62], "data_offsets": [0, 256]}),
        ("shape-not-list", {"dtype": "F32", "shape": 64, "data_offsets": [0, 256]}),
        ("dtype-lowercase", {"dtype": "f32", "shape": [64], "data_offsets": [0, 256]}),
        ("dtype-unknown", {"dtype": "F128", "shape": [16], "data_offsets": [0, 256]}),
        ("missing-dtype", {"shape": [64], "data_offsets": [0, 256]}),
        ("entry-not-object", [1, 2, 3]),
    ]:
        h = json.loads(json.dumps(header))
        h[biases[0]] = entry
        add(label, join_safetensors(h, data), ERR + r"tensor '%s'" % biases[0].replace(".", r"\."))
    # A tensor the model needs with the right size but another dtype.
    h = json.loads(json.dumps(header))
    h[biases[0]]["dtype"] = "I32"
    add("dtype-same-size-other-type", join_safetensors(h, data),
        ERR + r"tensor '%s' has dtype I32 but the model expects F32" % biases[0].replace(".", r"\."))

    out = []
    for name, content, stderr in variants:
        case = {
            "name": name,
            "files": {"w.safetensors": content, "x.npy": ids},
            "cmd": ["{model}", "--weights", "w.safetensors", "--input", "x.npy",
                    "--output", "y.npy"],
            "exit": "zero" if stderr is None else "nonzero",
        }
        if stderr is None:
            case["outputs"] = ["y.npy"]
        else:
            case["stderr"] = [stderr]
            case["absent"] = ["y.npy"]
        out.append(case)
    return out
