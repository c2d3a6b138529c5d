#!/usr/bin/env python3
"""Writes a changed copy of a shard index (model.safetensors.index.json) for
the error tests of sharded checkpoints:

    edit_index.py SRC DST [--map NAME=FILE ...] [--drop NAME ...]
                          [--drop-weight-map]
                          [--empty-weight-map] [--duplicate NAME=FILE]
                          [--truncate N]

--map points tensor NAME at shard FILE; --drop removes NAME from the
weight_map; --duplicate appends a second
"NAME": "FILE" entry to the weight_map text (JSON that json.dump cannot
write); --truncate keeps the first N bytes of the result."""

import argparse
import json


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--map", action="append", default=[])
    ap.add_argument("--drop", action="append", default=[])
    ap.add_argument("--drop-weight-map", action="store_true")
    ap.add_argument("--empty-weight-map", action="store_true")
    ap.add_argument("--duplicate")
    ap.add_argument("--truncate", type=int)
    args = ap.parse_args()
    with open(args.src) as f:
        index = json.load(f)
    for item in args.map:
        name, file = item.split("=", 1)
        index["weight_map"][name] = file
    for name in args.drop:
        del index["weight_map"][name]
    if args.drop_weight_map:
        del index["weight_map"]
    if args.empty_weight_map:
        index["weight_map"] = {}
    text = json.dumps(index, indent=2)
    if args.duplicate:
        name, file = args.duplicate.split("=", 1)
        head = '"weight_map": {'
        assert head in text
        text = text.replace(head, head + "\n    %s: %s," % (json.dumps(name), json.dumps(file)), 1)
    if args.truncate is not None:
        text = text[:args.truncate]
    with open(args.dst, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
