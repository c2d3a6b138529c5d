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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_tree_text import source_paths  # noqa: E402

CODE_SUFFIXES = (".cpp", ".cc", ".c", ".h", ".py", ".td", ".sh", ".cmake")


def code_files(root):
    for path in source_paths(root):
        name = os.path.basename(path)
        if name.endswith(CODE_SUFFIXES) or name == "CMakeLists.txt":
            yield path


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
