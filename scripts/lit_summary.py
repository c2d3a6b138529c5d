#!/usr/bin/env python3
"""Prints lit's JSON results as one closing line: 'N passed, N failed, N skipped'."""

import json
import sys

with open(sys.argv[1]) as f:
    results = json.load(f)["tests"]
codes = [t["code"] for t in results]
passed = sum(c in ("PASS", "XFAIL") for c in codes)
failed = sum(c in ("FAIL", "XPASS", "UNRESOLVED", "TIMEOUT") for c in codes)
skipped = sum(c in ("UNSUPPORTED", "SKIPPED", "EXCLUDED") for c in codes)
print(f"{passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed or not passed else 0)
