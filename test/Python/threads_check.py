#!/usr/bin/python3
"""One model run from several Python threads at once (python/attnc): the
BERT-shaped ONNX export compiled with dynamic batch and sequence, 8 threads
x 100 runs over inputs of different shapes, half through Model.run (each
thread's own context in the runtime) and half through a Model.context() of
their own; every output must equal, bit for bit, the sequential run of the
same inputs, and the sequential outputs onnxruntime's. Then greedy
generation from 4 threads at once, each equal to transformers' tokens.

    threads_check.py --src ATTNC_SRC --bin BUILD_BIN --workdir DIR
"""

import os
import sys
import threading

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reference"))
import checkutil  # noqa: E402

THREADS, RUNS = 8, 100


def run_threads(count, body):
    """Runs body(t) in `count` threads; re-raises the first failure."""
    failures = []

    def guarded(t):
        try:
            body(t)
        except BaseException as e:  # noqa: B902 - reported below
            failures.append(e)

    threads = [threading.Thread(target=guarded, args=(t,))
               for t in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]


def main():
    args, attnc = checkutil.attnc_check()

    models = os.path.join(args.src, "test", "ONNX", "Models")
    lib = attnc.compile(os.path.join(models, "bert_like-op17.onnx"),
                        os.path.join(args.workdir, "libbert_dyn.so"))
    cases = []
    for size in ("2x5", "2x11", "2x16"):
        base = os.path.join(models, "dynamic", "bert_like." + size)
        ids = np.load(base + ".input_ids.npy")
        mask = np.load(base + ".attention_mask.npy")
        cases.append((ids, mask, np.load(base + ".ref.npy")))
        cases.append((ids[1:], mask[1:], None))
    with attnc.load(lib) as bert:
        assert bert.inputs[0].shape == (None, None), bert.inputs
        (name,) = [o.name for o in bert.outputs]
        want = []
        for ids, mask, ref in cases:
            y = bert.run(input_ids=ids, attention_mask=mask)[name]
            if ref is not None:
                err = checkutil.rel_err(y, ref)
                assert err <= 1e-4, err
            want.append(y)
        print("sequential: %d shapes, onnxruntime's outputs" % len(cases))

        counts = [0] * THREADS

        def body(t):
            context = bert.context() if t % 2 else None
            run = context.run if context else bert.run
            for i in range(RUNS):
                k = (t * 5 + i * 7) % len(cases)
                ids, mask, _ = cases[k]
                y = run(input_ids=ids, attention_mask=mask)[name]
                assert y.shape == want[k].shape and \
                    y.tobytes() == want[k].tobytes(), (t, i, k)
                counts[t] += 1
            if context:
                assert context.last_run_ms > 0
                context.close()

        run_threads(THREADS, body)
        assert sum(counts) == THREADS * RUNS
        print("%d threads x %d runs: every output equal to the sequential "
              "run's" % (THREADS, RUNS))
        # A failure on one thread is that thread's; the others' runs and
        # the model stay usable.
        bad = cases[0][0].copy()
        bad[0, 1] = 10**6
        with bert.context() as context:
            try:
                context.run(input_ids=bad, attention_mask=cases[0][1])
                raise AssertionError("the bad id ran")
            except attnc.AttncError as e:
                print("context error:", str(e).splitlines()[0])
        y = bert.run(input_ids=cases[0][0], attention_mask=cases[0][1])[name]
        assert y.tobytes() == want[0].tobytes()

    gpt2, prompt, lengths, expected = checkutil.load_gpt2(attnc, args.src,
                                                          args.workdir)
    with gpt2:

        def generate(t):
            for _ in range(2):
                got = gpt2.generate(prompt, 24, lengths=lengths)
                assert np.array_equal(got, expected), (t, got)

        run_threads(4, generate)
        print("gpt2 generate from 4 threads: greedy tokens equal "
              "transformers'")
        # Each thread reads its own generate's timing, after all of them
        # generated.
        everyone_generated = threading.Barrier(4)

        def own_timing(t):
            n = 20 + t
            got = gpt2.generate(prompt, n, lengths=lengths)
            assert np.array_equal(got, expected[:, :n]), (t, got)
            everyone_generated.wait()
            steps = gpt2.last_generate_timing[2]
            assert steps == n - 1, (t, gpt2.last_generate_timing)

        run_threads(4, own_timing)
        print("gpt2 last_generate_timing: per thread")
    print("PASS")


if __name__ == "__main__":
    main()
