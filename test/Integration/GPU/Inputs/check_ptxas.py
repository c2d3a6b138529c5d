#!/usr/bin/python3
"""Assembles a PTX file with `ptxas -v` and checks every kernel's resources:
no spill stores or loads, a stack frame of at most --max-stack bytes and at
most --max-registers registers. Prints one summary line (kernels, the
largest stack frame, registers and shared memory) or the offending kernels.

    check_ptxas.py PTXAS FILE.ptx --arch sm_90a [--max-stack 0]
                   [--max-registers 255]
"""

import argparse
import re
import subprocess
import sys


def main():
    p = argparse.ArgumentParser()
    p.add_argument("ptxas")
    p.add_argument("ptx")
    p.add_argument("--arch", required=True)
    p.add_argument("--max-stack", type=int, default=0)
    p.add_argument("--max-registers", type=int, default=255)
    args = p.parse_args()
    result = subprocess.run([args.ptxas, "-v", "-arch=" + args.arch, args.ptx,
                             "-o", "/dev/null"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    if result.returncode != 0:
        sys.exit("ptxas failed:\n" + result.stdout)
    kernels = {}
    name = None
    for line in result.stdout.splitlines():
        m = re.search(r"Compiling entry function '([^']+)'", line)
        if m:
            name = m.group(1)
            kernels[name] = {"stack": 0, "spill": 0, "regs": 0, "smem": 0}
            continue
        if name is None:
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, "
                      r"(\d+) bytes spill loads", line)
        if m:
            kernels[name]["stack"] = int(m.group(1))
            kernels[name]["spill"] = int(m.group(2)) + int(m.group(3))
        m = re.search(r"Used (\d+) registers", line)
        if m:
            kernels[name]["regs"] = int(m.group(1))
        m = re.search(r"(\d+) bytes smem", line)
        if m:
            kernels[name]["smem"] = int(m.group(1))
    if not kernels:
        sys.exit("no kernels in ptxas output:\n" + result.stdout)
    bad = [(n, k) for n, k in kernels.items()
           if k["spill"] or k["stack"] > args.max_stack
           or k["regs"] > args.max_registers]
    for n, k in bad:
        print("BAD %s: stack %d, spills %d, registers %d" %
              (n, k["stack"], k["spill"], k["regs"]))
    print("%s %s: %d kernels, max stack %d, spills %d, max registers %d, "
          "max smem %d" % ("FAIL" if bad else "OK", args.arch, len(kernels),
                           max(k["stack"] for k in kernels.values()),
                           sum(k["spill"] for k in kernels.values()),
                           max(k["regs"] for k in kernels.values()),
                           max(k["smem"] for k in kernels.values())))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
