#!/usr/bin/python3
"""Checks that every kernel launch of a compiled CUDA model passes as many
parameters as its kernel declares.

Input: the end of attn-to-cuda with PTX kernels
(`attn-opt --attn-to-cuda="format=isa ..."`): the host's gpu.launch_func ops
on the LLVM dialect and the gpu.binary objects holding the PTX text. The
driver reads one pointer per declared `.param` of the `.entry` from the
launch's argument array; a launch with fewer arguments (e.g. bare pointers
against memref-descriptor parameters) makes the kernel read past it.

    check_launch_params.py FILE.mlir

Prints `OK: N launches of K kernels, P parameters` or one line per
mismatch, and exits non-zero on a mismatch.
"""

import re
import sys


def ptx_entries(text):
    """kernel name -> number of .param of its .entry."""
    entries = {}
    for obj in re.findall(r'assembly = "((?:[^"\\]|\\.)*)"', text):
        ptx = obj.replace("\\0A", "\n").replace("\\09", "\t")
        for m in re.finditer(r"\.entry\s+(\w+)\s*\((.*?)\)", ptx, re.S):
            entries[m.group(1)] = len(re.findall(r"\.param\b", m.group(2)))
    return entries


def main():
    text = open(sys.argv[1]).read()
    entries = ptx_entries(text)
    if not entries:
        sys.exit("no PTX .entry found (compile with format=isa)")
    bad, launches, params = [], 0, 0
    for m in re.finditer(r"gpu\.launch_func\b.*?@\w+::@(\w+)\b.*?"
                         r"args\((.*?)\)\n", text):
        kernel, args = m.group(1), m.group(2)
        n = len(re.findall(r"%[\w.]+ : ", args))
        launches += 1
        params += n
        want = entries.get(kernel)
        if want != n:
            bad.append(f"launch of {kernel}: {n} arguments, the kernel "
                       f"declares {want} parameters")
    for line in bad:
        print("MISMATCH", line)
    if bad or not launches:
        sys.exit(1)
    print(f"OK: {launches} launches of {len(entries)} kernels, "
          f"{params} parameters")


if __name__ == "__main__":
    main()
