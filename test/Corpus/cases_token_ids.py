"""Token ids outside the embedding table of the compiled small encoder (100
rows, ids [1, 16] int32): the run fails with the batch, position and id of
the first bad one, writes no output, and exits non-zero; ids at the edges of
the table run."""

from corpus_lib import ids_npy, read_example

MESSAGE = (r"^error: attnrt_run: token id %d at batch 0, position %d is out of "
           r"range for the embedding table of 100 rows \(valid ids are 0\.\.99\)$")


def cases():
    weights = read_example("small_encoder.safetensors")
    base = list(range(1, 17))
    out = []

    def add(name, ids, position=None, bad=None):
        case = {
            "name": name,
            "files": {"w.safetensors": weights, "x.npy": ids_npy(ids)},
            "cmd": ["{model}", "--weights", "w.safetensors", "--input", "x.npy",
                    "--output", "y.npy"],
        }
        if bad is None:
            case.update(exit="zero", outputs=["y.npy"])
        else:
            case.update(exit="nonzero", stderr=[MESSAGE % (bad, position)],
                        absent=["y.npy"])
        out.append(case)

    for value in (100, 101, 1000, 2**31 - 1, -1, -100, -2**31):
        for position in (0, 7, 15):
            ids = list(base)
            ids[position] = value
            add("id-%s-at-%d" % (str(value).replace("-", "minus"), position),
                ids, position, value)
    # Several bad ids: the first (in row-major order) is named.
    ids = list(base)
    ids[3], ids[9], ids[12] = 500, -7, 100
    add("three-bad-ids-first-named", ids, 3, 500)
    add("all-ids-bad", [100] * 16, 0, 100)
    # The edges of the table are valid.
    add("ids-0-and-99", [0, 99] * 8)
    add("all-ids-99", [99] * 16)
    add("all-ids-0", [0] * 16)
    return out
