#!/usr/bin/env python3
"""Compares generated token ids (.npy) with the reference the exporting
framework (transformers) generated: PASS when they are equal, else the
first differing row and position. --got-rows and --want-rows (comma
separated) compare those rows only: a one-row run against its row of the
reference, or one row of a batch.

    check_tokens.py GOT.npy WANT.npy [--got-rows 1] [--want-rows 1]
"""

import argparse
import sys

import numpy as np


def rows(text):
    return [int(r) for r in text.split(",")]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("got")
    ap.add_argument("want")
    ap.add_argument("--got-rows", type=rows)
    ap.add_argument("--want-rows", type=rows)
    args = ap.parse_args()
    got, want = np.load(args.got), np.load(args.want)
    if args.got_rows is not None:
        got = got[args.got_rows]
    if args.want_rows is not None:
        want = want[args.want_rows]
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
