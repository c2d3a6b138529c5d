"""What the benchmarks' peer worker processes share (cpu_bench.py, peers.py).

A peer runs in a worker process of its own per thread count (its BLAS and
OpenMP pools sized by the environment) and speaks JSON lines on stdio: one
"hello" line when it is ready, then one reply per request.
"""

import json
import os
import statistics
import subprocess
import sys
import time


class RunFailed(Exception):
    pass


def median_ms(fn, reps, warmup):
    """The median wall time of `reps` calls of fn() after `warmup` calls, in ms."""
    for _ in range(warmup):
        fn()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts) * 1e3


def serve(hello, handle):
    """The worker's side: prints `hello`, then handle(request) -> reply for
    each request line; an exception becomes {"error": ...} for the parent."""
    out = sys.stdout
    out.write(json.dumps(hello) + "\n")
    out.flush()
    for line in sys.stdin:
        try:
            rep = handle(json.loads(line))
        except Exception as e:  # reported to the parent
            rep = {"error": "%s: %s" % (type(e).__name__, e)}
        out.write(json.dumps(rep) + "\n")
        out.flush()


class WorkerProcess:
    """The parent's side: runs `script` with `args` under N threads."""

    def __init__(self, script, args, threads, torch=False, env_overrides=None):
        env = dict(os.environ, OMP_NUM_THREADS=str(threads),
                   OPENBLAS_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads),
                   **(env_overrides or {}))
        if torch:
            # Debian's torch runs ATen on libgomp and its GEMMs on OpenBLAS's
            # own pthreads; with libgomp's default spin-waiting the two pools
            # fight over the cores (about 5x slower at 2 threads on 2 cores).
            env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        self.proc = subprocess.Popen([sys.executable, os.path.abspath(script)] + args,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, env=env)
        self.hello = self.read()

    def read(self):
        line = self.proc.stdout.readline()
        if not line:
            raise RunFailed("worker exited (rc %s)" % self.proc.wait())
        return json.loads(line)

    def request(self, **req):
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        return self.read()

    def close(self, timeout=60):
        self.proc.stdin.close()
        self.proc.wait(timeout=timeout)


def exit_status(failures):
    """0, or 1 after listing the failed measurements on stderr."""
    if not failures:
        return 0
    print("\nFAILURES:", file=sys.stderr)
    for f in failures:
        print("  " + f, file=sys.stderr)
    return 1
