#!/usr/bin/env python3
"""Prints lit's JSON results as one closing line: 'N passed, N failed, N
skipped', after the names of the skipped tests (lit's UNSUPPORTED: a
missing toolkit, no GPU, or a test that does not run under the
sanitizers), so that nothing is skipped silently."""

import json
import sys

with open(sys.argv[1]) as f:
    results = json.load(f)["tests"]
codes = [t["code"] for t in results]
passed = sum(c in ("PASS", "XFAIL") for c in codes)
failed = sum(c in ("FAIL", "XPASS", "UNRESOLVED", "TIMEOUT") for c in codes)
skipped = [t["name"].split(" :: ", 1)[-1] for t in results
           if t["code"] in ("UNSUPPORTED", "SKIPPED", "EXCLUDED")]
for name in sorted(skipped):
    print(f"skipped: {name}")
print(f"{passed} passed, {failed} failed, {len(skipped)} skipped")
sys.exit(1 if failed or not passed else 0)
