"""What the emulation scripts share: running a pass on a case's IR, and
running the cases."""

import subprocess


def run_pass(attn_opt, path, text, flags):
    """Writes `text` to `path` and returns what `attn-opt path FLAGS` makes
    of it, in the generic op form the emulators parse."""
    with open(path, "w") as f:
        f.write(text)
    return subprocess.run([attn_opt, path] + flags +
                          ["--mlir-print-op-generic"], check=True,
                          capture_output=True, text=True).stdout


def run_cases(cases, run_one, errors, mutate):
    """Runs `run_one(case) -> (ok, message)` for every case, printing PASS or
    FAIL with the case's name (case[0]) and message (an exception of
    `errors` fails the case with its text), then the summary line that the
    lit tests check; returns the exit status."""
    passed = failed = 0
    for case in cases:
        try:
            ok, msg = run_one(case)
        except errors as e:
            ok, msg = False, f"{type(e).__name__}: {e}"
        print(f"{'PASS' if ok else 'FAIL'} {case[0]}: {msg}", flush=True)
        passed += ok
        failed += not ok
    print(f"{passed} passed, {failed} failed (mutation: {mutate or 'none'})")
    return 0 if failed == 0 else 1
