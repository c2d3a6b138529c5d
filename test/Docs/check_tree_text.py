#!/usr/bin/python3
"""Fails on text in the source tree that means nothing to a user: tracker
numbers (the word for a tracker entry and its number) and paths of a development machine (a home, /work or
/tmp folder of the machine that wrote it). Scans every text file under the
source root except build trees, virtual environments and .git; binary files
(models, weights, .npy) are skipped.

    check_tree_text.py SRC_ROOT

Prints one line per finding (file:line: text) and a count; exit 1 if any.
"""

import os
import re
import sys

SKIP_DIRS = {".git", "__pycache__", "node_modules"}
SKIP_PREFIXES = ("build", ".venv")
# Spelled so that this file does not match itself.
PATTERNS = [
    ("tracker number", re.compile(r"\b[Ii]ssues?\s+#?\d+\b")),
    ("machine path", re.compile(r"(?<![\w.])/(?:work|root|home/\w+)/[\w.]")),
]


def source_paths(root):
    """Every file under `root` but build trees, virtual environments and
    .git, in a stable order."""
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        dirnames[:] = sorted(
            d for d in dirnames if d not in SKIP_DIRS
            and not (rel == "." and d.startswith(SKIP_PREFIXES)))
        for name in sorted(filenames):
            yield os.path.join(dirpath, name)


def text_files(root):
    for path in source_paths(root):
        try:
            with open(path, "rb") as f:
                data = f.read(1 << 20)
        except OSError:
            continue
        if b"\0" in data:
            continue  # binary
        try:
            yield path, data.decode("utf-8")
        except UnicodeDecodeError:
            continue


def main():
    root = sys.argv[1]
    found = 0
    for path, text in text_files(root):
        for lineno, line in enumerate(text.splitlines(), 1):
            for what, pattern in PATTERNS:
                if pattern.search(line):
                    found += 1
                    print(f"{os.path.relpath(path, root)}:{lineno}: {what}: "
                          f"{line.strip()[:120]}")
    print(f"{found} findings")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
