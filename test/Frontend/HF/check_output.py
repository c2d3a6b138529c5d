#!/usr/bin/env python3
"""Compares a compiled model's output (.npy) with the reference that the
exporting framework (transformers) computed and the generator committed:
PASS when max|y - ref| <= tol * max(1, max|ref|)."""

import argparse
import sys

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("output")
    ap.add_argument("expected")
    ap.add_argument("--tol", type=float, default=1e-4)
    ap.add_argument("--bf16", action="store_true",
                    help="the output holds bf16 raw bits ('<u2'), as the model CLI writes bf16")
    args = ap.parse_args()
    y = np.load(args.output)
    if args.bf16:
        if y.dtype != np.uint16:
            print(f"FAIL expected bf16 bits ('<u2'), got {y.dtype}")
            return 1
        y = (y.astype(np.uint32) << 16).view(np.float32)
    ref = np.load(args.expected)
    if y.shape != ref.shape:
        print(f"FAIL shape {y.shape} != reference {ref.shape}")
        return 1
    if not np.all(np.isfinite(y)):
        print("FAIL output has non-finite values")
        return 1
    scale = max(1.0, float(np.max(np.abs(ref))))
    err = float(np.max(np.abs(y.astype(np.float64) - ref.astype(np.float64))))
    verdict = "PASS" if err <= args.tol * scale else "FAIL"
    print(f"{verdict} shape {tuple(y.shape)} max|ref| {scale:.4g} "
          f"max abs err {err:.3g} (tol {args.tol} relative)")
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
