"""Checks the `weights: read N bytes of M-byte file` line a compiled model
prints against the safetensors file it read.

    check_bytes_read.py WEIGHTS.safetensors SUMMARY.txt [--dropped PREFIX ...]

The model is expected to read the header (8 + header length bytes) and every
tensor except those whose names start with a --dropped prefix. Prints
    file M bytes, read N bytes, expected E bytes, N < M: True|False, unread M-N bytes
and exits non-zero if N != E or M is not the file's size.
"""

import argparse
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "reference"))
import tensorio  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("weights")
    p.add_argument("summary")
    p.add_argument("--dropped", nargs="*", default=[])
    a = p.parse_args()
    header, start = tensorio.read_safetensors_header(a.weights)
    header.pop("__metadata__", None)
    expected = start
    for name, info in header.items():
        if not any(name.startswith(d) for d in a.dropped):
            b, e = info["data_offsets"]
            expected += e - b
    size = os.path.getsize(a.weights)
    lines = [l for l in open(a.summary) if l.startswith("weights:")]
    if len(lines) != 1:
        sys.exit("expected one 'weights:' line in %s, found %d" % (a.summary, len(lines)))
    m = re.fullmatch(r"weights: read (\d+) bytes of (\d+)-byte file\n?", lines[0])
    if not m:
        sys.exit("unexpected line: %r" % lines[0])
    n, total = int(m.group(1)), int(m.group(2))
    print("file %d bytes, read %d bytes, expected %d bytes, N < M: %s, unread %d bytes"
          % (total, n, expected, n < total, total - n))
    if total != size:
        sys.exit("FAIL: the model reports a %d-byte file but it has %d bytes" % (total, size))
    if n != expected:
        sys.exit("FAIL: read %d bytes, expected %d" % (n, expected))


if __name__ == "__main__":
    main()
