#!/usr/bin/python3
"""Fails on a source file longer than a reader can take in as one unit.

Counts the lines of every code file under the source root (C++, C, Python,
TableGen, shell, CMake) except build trees, virtual environments and .git,
and prints one line per file over the limit. Test inputs (.mlir, .onnx),
data and prose are not code and are not counted.

    check_file_sizes.py SRC_ROOT [--max-lines N]

Prints the count of files over the limit last; exit 1 if any.
"""

import argparse
import os
import sys

CODE_SUFFIXES = (".cpp", ".cc", ".c", ".h", ".py", ".td", ".sh", ".cmake")
SKIP_DIRS = {".git", "__pycache__", "node_modules"}
SKIP_PREFIXES = ("build", ".venv")


def code_files(root):
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        dirnames[:] = sorted(
            d for d in dirnames if d not in SKIP_DIRS
            and not (rel == "." and d.startswith(SKIP_PREFIXES)))
        for name in sorted(filenames):
            if name.endswith(CODE_SUFFIXES) or name == "CMakeLists.txt":
                yield os.path.join(dirpath, name)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root")
    parser.add_argument("--max-lines", type=int, default=1000)
    args = parser.parse_args()
    over = 0
    for path in code_files(args.root):
        with open(path, "rb") as f:
            lines = f.read().count(b"\n")
        if lines > args.max_lines:
            print(f"{os.path.relpath(path, args.root)}: {lines} lines "
                  f"(limit {args.max_lines})")
            over += 1
    print(f"{over} files over {args.max_lines} lines")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
