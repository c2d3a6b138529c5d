#!/usr/bin/env python3
"""Compares generated token ids (.npy) with the reference the exporting
framework (transformers) generated: PASS when they are equal, else the
first differing row and position."""

import sys

import numpy as np


def main():
    got, want = np.load(sys.argv[1]), np.load(sys.argv[2])
    if got.dtype != np.int64 or got.shape != want.shape:
        print(f"FAIL got {got.dtype} {got.shape}, reference {want.dtype} "
              f"{want.shape}")
        return 1
    diff = np.argwhere(got != want)
    if diff.size:
        r, t = diff[0]
        print(f"FAIL row {r} token {t}: {got[r, t]} != reference "
              f"{want[r, t]}\n  got  {got[r].tolist()}\n  want {want[r].tolist()}")
        return 1
    print(f"PASS {got.shape[0]} rows x {got.shape[1]} tokens equal")
    return 0


if __name__ == "__main__":
    sys.exit(main())
