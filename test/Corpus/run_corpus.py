#!/usr/bin/env python3
"""Runs the malformed-input corpus: every case of test/Corpus/cases_*.py.

Each case runs in a fresh temporary directory (also the command's working
directory and, through TMPDIR, its temporary directory) holding only the
files the case declares. A case passes when the command

  - exits as the case expects ("exit": "nonzero", "zero" or an int),
  - did not crash: no signal, no `Stack dump`, `LLVM ERROR`, `PLEASE submit a
    bug report`, `Assertion`, or sanitizer report in its output,
  - finished within its time-out (a time-out is a hang),
  - printed every regex of "stderr" (and "stdout"),
  - left every input file byte-for-byte unchanged (FIFOs stay FIFOs),
  - created no file but those in "outputs", left none of "absent", and left
    its temporary directory empty.

The case format (keys other than name/cmd/exit are optional):

  name     unique within its category
  files    {relative path: str or bytes} created before the run
  fifos    [relative path] named pipes created before the run
  dirs     [relative path] empty directories created before the run
  symlinks {relative path: target} symbolic links created before the run
  devices  {relative path: "null" | "full" | "zero"} character devices
           created before the run (mknod where permitted, else a symbolic
           link to /dev/...); they must still be devices afterwards, so a
           tool that renames over a device is caught without harming /dev
  cmd      [argv]; placeholders {attn-opt} {attn-compile} {attn-import} (tools
           of the build), {model} (examples/small_encoder.mlir compiled once
           for the CPU), {examples} (the repository's examples/), {tmp} (the
           case's directory), {python} (this interpreter)
  stdin    str or bytes fed to the command (default: nothing, closed)
  exit     "nonzero", "zero" or an int
  stderr   [regex] that must all match stderr (re.MULTILINE)
  stdout   [regex] that must all match stdout
  absent   [relative path] that must not exist afterwards
  outputs  [relative path] that must exist afterwards (allowed new files)
  changes  [relative path] input files the command may rewrite
  timeout  seconds (default 60; scaled by $ATTNC_CORPUS_TIMEOUT_SCALE)
  env      {name: value} added to the environment

Usage (lit runs one category per test):
  run_corpus.py --category io --tools BUILD/bin --src SRC --cache DIR
  run_corpus.py --list            # corpus size per category
"""

import argparse
import concurrent.futures
import fcntl
import glob
import hashlib
import importlib.util
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import traceback

# Importing the case modules must not write __pycache__ into the sources.
sys.dont_write_bytecode = True

CORPUS_DIR = os.path.dirname(os.path.abspath(__file__))

KNOWN_KEYS = {"name", "files", "fifos", "dirs", "symlinks", "devices", "cmd", "stdin",
              "exit", "stderr", "stdout", "absent", "outputs", "changes",
              "timeout", "env"}
REQUIRED_KEYS = {"name", "cmd", "exit"}

# Output that means the process crashed or tripped a sanitizer, whatever its
# exit status.
# Literal-led patterns only: outputs can hold megabyte-long lines (deeply
# nested inputs echoed in a diagnostic), which a pattern starting with \w*
# or \S+ would scan quadratically.
CRASH_PATTERNS = [
    (re.compile(r"Stack dump"), "stack dump"),
    (re.compile(r"LLVM ERROR"), "LLVM fatal error"),
    (re.compile(r"PLEASE submit a bug report"), "LLVM crash report"),
    (re.compile(r"Assertion"), "assertion failure"),
    (re.compile(r"ERROR: \w{0,40}Sanitizer"), "sanitizer error"),
    (re.compile(r"Sanitizer:"), "sanitizer report"),
    (re.compile(r": runtime error: "), "UBSan report"),
    (re.compile(r"terminate called"), "uncaught C++ exception"),
    (re.compile(r"Segmentation fault|core dumped"), "segfault"),
]

DEFAULT_TIMEOUT = 60

DEVICE_NUMBERS = {"null": (1, 3), "zero": (1, 5), "full": (1, 7)}
# The system's own devices: a case that names them directly must leave them.
SYSTEM_DEVICES = ["/dev/null", "/dev/zero", "/dev/full"]


def category_files():
    """{category: path} of every cases_<category>.py next to this script."""
    found = {}
    for entry in sorted(os.listdir(CORPUS_DIR)):
        m = re.fullmatch(r"cases_(\w+)\.py", entry)
        if m:
            found[m.group(1)] = os.path.join(CORPUS_DIR, entry)
    return found


def load_cases(category, path):
    spec = importlib.util.spec_from_file_location(
        "attnc_corpus_cases_" + category, path)
    module = importlib.util.module_from_spec(spec)
    # The case modules may share helpers in this directory.
    if CORPUS_DIR not in sys.path:
        sys.path.insert(0, CORPUS_DIR)
    spec.loader.exec_module(module)
    cases = module.cases()
    problems = []
    names = set()
    for index, case in enumerate(cases):
        where = "%s case #%d" % (category, index)
        if not isinstance(case, dict):
            problems.append("%s: not a dict" % where)
            continue
        name = case.get("name")
        if name is not None:
            where = "%s case '%s'" % (category, name)
        missing = REQUIRED_KEYS - set(case)
        if missing:
            problems.append("%s: missing %s" % (where, ", ".join(sorted(missing))))
        unknown = set(case) - KNOWN_KEYS
        if unknown:
            problems.append("%s: unknown keys %s" % (where, ", ".join(sorted(unknown))))
        if name in names:
            problems.append("%s: duplicate name" % where)
        names.add(name)
        exit_spec = case.get("exit")
        if not (exit_spec in ("nonzero", "zero") or isinstance(exit_spec, int)):
            problems.append("%s: exit must be 'nonzero', 'zero' or an int" % where)
        if not isinstance(case.get("cmd"), list) or not case.get("cmd"):
            problems.append("%s: cmd must be a non-empty list" % where)
        for key in ("stderr", "stdout"):
            for pattern in case.get(key, []):
                try:
                    re.compile(pattern)
                except re.error as e:
                    problems.append("%s: bad %s regex %r: %s" % (where, key, pattern, e))
    return cases, problems


class Context:
    def __init__(self, args):
        self.tools = os.path.abspath(args.tools)
        self.src = os.path.abspath(args.src)
        self.cache = os.path.abspath(args.cache)
        self.timeout_scale = float(os.environ.get("ATTNC_CORPUS_TIMEOUT_SCALE", "1"))
        self._model = None
        self._model_error = None

    def tool(self, name):
        return os.path.join(self.tools, name)

    def importer(self):
        """attn-import; until it exists, the HF-only test importer with the
        same spelling (test/tools/attn-hf-import)."""
        tool = self.tool("attn-import")
        fallback = self.tool("attn-hf-import")
        if not os.path.exists(tool) and os.path.exists(fallback):
            return fallback
        return tool

    def model(self):
        """The small encoder compiled for the CPU, built once and shared by
        every category (under a lock: lit runs categories in parallel)."""
        if self._model or self._model_error:
            return self._model
        os.makedirs(self.cache, exist_ok=True)
        model = os.path.join(self.cache, "small_encoder")
        source = os.path.join(self.src, "examples", "small_encoder.mlir")
        compiler = self.tool("attn-compile")
        # Rebuilt when the compiler, the runtime or the example changed.
        libdir = os.path.join(os.path.dirname(self.tools), "lib")
        inputs = [source, compiler] + glob.glob(os.path.join(libdir, "*attnrt*"))
        with open(os.path.join(self.cache, "lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            newest_input = max(os.path.getmtime(p) for p in inputs if os.path.exists(p))
            if not (os.path.exists(model) and os.path.getmtime(model) >= newest_input):
                proc = subprocess.run(
                    [compiler, "-q", source, "--target=cpu", "-o", model],
                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                    timeout=600 * self.timeout_scale)
                if proc.returncode != 0:
                    self._model_error = "compiling %s failed (exit %d):\n%s" % (
                        source, proc.returncode, proc.stdout.decode(errors="replace"))
                    return None
        self._model = model
        return model

    def substitute(self, arg, tmp):
        replacements = {
            "{attn-opt}": lambda: self.tool("attn-opt"),
            "{attn-compile}": lambda: self.tool("attn-compile"),
            "{attn-import}": self.importer,
            "{model}": self.model,
            "{examples}": lambda: os.path.join(self.src, "examples"),
            "{tmp}": lambda: tmp,
            "{python}": lambda: sys.executable,
        }
        for key, value in replacements.items():
            if key in arg:
                replacement = value()
                if replacement is None:
                    raise RuntimeError(self._model_error or "no value for " + key)
                arg = arg.replace(key, replacement)
        return arg


def digest(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def snapshot(root):
    """{relative path: kind} of everything under root (links not followed)."""
    entries = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, root)
            mode = os.lstat(full).st_mode
            if stat.S_ISLNK(mode):
                kind = "link"
            elif stat.S_ISDIR(mode):
                kind = "dir"
            elif stat.S_ISFIFO(mode):
                kind = "fifo"
            elif stat.S_ISREG(mode):
                kind = "file"
            else:
                kind = "other"
            entries[rel] = kind
    return entries


def tail(data, limit=4000):
    text = data.decode(errors="replace")
    if len(text) > limit:
        text = "[... %d characters ...]\n" % (len(text) - limit) + text[-limit:]
    return text


def run_case(ctx, case):
    """Returns (passed, report lines)."""
    problems = []
    tmp = tempfile.mkdtemp(prefix="attnc-corpus-")
    try:
        tmpdir_env = os.path.join(tmp, ".tmpdir")
        os.mkdir(tmpdir_env)
        for rel in case.get("dirs", []):
            os.makedirs(os.path.join(tmp, rel), exist_ok=True)
        inputs = {}
        for rel, content in case.get("files", {}).items():
            path = os.path.join(tmp, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(content.encode() if isinstance(content, str) else content)
            inputs[rel] = digest(path)
        for rel in case.get("fifos", []):
            path = os.path.join(tmp, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            os.mkfifo(path)
        devices = {}
        for rel, kind in case.get("devices", {}).items():
            path = os.path.join(tmp, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            try:
                os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(*DEVICE_NUMBERS[kind]))
                devices[rel] = "device"
            except PermissionError:
                os.symlink("/dev/" + kind, path)
                devices[rel] = "link"
        for rel, target in case.get("symlinks", {}).items():
            path = os.path.join(tmp, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            os.symlink(ctx.substitute(target, tmp), path)
        before = snapshot(tmp)

        try:
            argv = [ctx.substitute(arg, tmp) for arg in case["cmd"]]
        except Exception as e:  # the shared model did not compile
            return False, ["setup failed: %s" % e]
        env = dict(os.environ)
        env["TMPDIR"] = tmpdir_env
        env.update({k: ctx.substitute(v, tmp) for k, v in case.get("env", {}).items()})
        timeout = case.get("timeout", DEFAULT_TIMEOUT) * ctx.timeout_scale
        stdin = case.get("stdin")
        if isinstance(stdin, str):
            stdin = stdin.encode()

        start = time.monotonic()
        proc = subprocess.Popen(
            argv, cwd=tmp, env=env,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            start_new_session=True)
        timed_out = False
        try:
            out, err = proc.communicate(stdin, timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            # The whole process group: a hung tool may have children.
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            out, err = proc.communicate()
        elapsed = time.monotonic() - start
        code = proc.returncode

        if timed_out:
            problems.append("timed out after %.0f s (a hang)" % timeout)
        elif code < 0:
            try:
                signame = signal.Signals(-code).name
            except ValueError:
                signame = str(-code)
            problems.append("killed by signal %s (a crash)" % signame)
        else:
            expected = case["exit"]
            if expected == "nonzero" and code == 0:
                problems.append("exit status 0, expected non-zero")
            elif expected == "zero" and code != 0:
                problems.append("exit status %d, expected 0" % code)
            elif isinstance(expected, int) and not isinstance(expected, bool) and code != expected:
                problems.append("exit status %d, expected %d" % (code, expected))
        both = out.decode(errors="replace") + "\n" + err.decode(errors="replace")
        for pattern, what in CRASH_PATTERNS:
            if pattern.search(both):
                problems.append("output shows a %s (/%s/)" % (what, pattern.pattern))
        err_text = err.decode(errors="replace")
        out_text = out.decode(errors="replace")
        for pattern in case.get("stderr", []):
            if not re.search(pattern, err_text, re.M):
                problems.append("stderr does not match /%s/" % pattern)
        for pattern in case.get("stdout", []):
            if not re.search(pattern, out_text, re.M):
                problems.append("stdout does not match /%s/" % pattern)

        # Inputs unchanged.
        allowed_changes = set(case.get("changes", []))
        for rel, before_digest in inputs.items():
            path = os.path.join(tmp, rel)
            if rel in allowed_changes:
                continue
            if os.path.islink(path) or not os.path.isfile(path):
                problems.append("input %s was deleted or replaced" % rel)
            elif digest(path) != before_digest:
                problems.append("input %s was modified" % rel)
        for rel in case.get("fifos", []):
            path = os.path.join(tmp, rel)
            if not (os.path.lexists(path) and stat.S_ISFIFO(os.lstat(path).st_mode)):
                problems.append("FIFO %s was deleted or replaced" % rel)
        for rel in case.get("symlinks", {}):
            if not os.path.islink(os.path.join(tmp, rel)):
                problems.append("symlink %s was deleted or replaced" % rel)
        for rel, how in devices.items():
            path = os.path.join(tmp, rel)
            if how == "link":
                ok = os.path.islink(path)
            else:
                ok = os.path.lexists(path) and stat.S_ISCHR(os.lstat(path).st_mode)
            if not ok:
                problems.append("device %s was replaced (renamed over?)" % rel)
        for device in SYSTEM_DEVICES:
            if not stat.S_ISCHR(os.lstat(device).st_mode):
                problems.append("%s is no longer a character device!" % device)

        # Outputs: nothing new but what the case expects.
        after = snapshot(tmp)
        expected_outputs = set(case.get("outputs", []))
        for rel in expected_outputs:
            if rel not in after:
                problems.append("expected output %s is missing" % rel)
        for rel in case.get("absent", []):
            if rel in after:
                problems.append("%s exists (partial output left behind)" % rel)
        for rel, kind in sorted(after.items()):
            if rel in before or rel in expected_outputs or rel == ".tmpdir":
                continue
            if any(rel.startswith(o + os.sep) for o in expected_outputs):
                continue
            if rel.startswith(".tmpdir" + os.sep):
                problems.append("left a temporary file in $TMPDIR: %s" % rel[len(".tmpdir") + 1:])
            else:
                problems.append("left an unexpected %s: %s" % (kind, rel))
        for rel, kind in before.items():
            if rel not in after and rel not in allowed_changes:
                if rel not in inputs:  # inputs were reported above
                    problems.append("%s %s disappeared" % (kind, rel))

        lines = []
        if problems:
            lines.append("  command: %s" % " ".join(argv))
            lines.append("  exit status: %s, %.1f s" % (
                "time-out" if timed_out else code, elapsed))
            lines.extend("  problem: " + p for p in problems)
            if out:
                lines.append("  stdout:\n" + "\n".join("    | " + l for l in tail(out).splitlines()))
            if err:
                lines.append("  stderr:\n" + "\n".join("    | " + l for l in tail(err).splitlines()))
        return not problems, lines
    finally:
        # Make everything removable (a case may have dropped permissions).
        for dirpath, dirnames, _ in os.walk(tmp):
            for name in dirnames:
                try:
                    os.chmod(os.path.join(dirpath, name), 0o700)
                except OSError:
                    pass
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--category", action="append",
                        help="category to run (cases_<category>.py); repeatable")
    parser.add_argument("--case", action="append", help="run only this case (by name)")
    parser.add_argument("--tools", help="the build's bin directory")
    parser.add_argument("--src", default=os.path.dirname(os.path.dirname(CORPUS_DIR)),
                        help="the repository root (default: from this script)")
    parser.add_argument("--cache", help="directory for the shared compiled model")
    parser.add_argument("-j", "--jobs", type=int, default=2,
                        help="cases run at once (default 2)")
    parser.add_argument("--list", action="store_true",
                        help="print the corpus size per category and exit")
    args = parser.parse_args()

    files = category_files()
    categories = args.category or sorted(files)
    unknown = [c for c in categories if c not in files]
    if unknown:
        print("error: no test/Corpus/cases_%s.py" % unknown[0])
        return 2

    all_cases = {}
    bad = False
    for category in categories:
        try:
            cases, problems = load_cases(category, files[category])
        except Exception:
            print("error: loading %s failed:\n%s" % (files[category], traceback.format_exc()))
            return 2
        for p in problems:
            print("error: " + p)
            bad = True
        all_cases[category] = cases
    if bad:
        return 2

    if args.list:
        total = 0
        for category in categories:
            print("%-24s %4d" % (category, len(all_cases[category])))
            total += len(all_cases[category])
        print("%-24s %4d" % ("total", total))
        return 0

    if not args.tools:
        parser.error("--tools is required to run cases")
    if not args.cache:
        args.cache = os.path.join(os.path.dirname(os.path.abspath(args.tools)),
                                  "test", "Corpus", "model-cache")
    ctx = Context(args)

    selected = []
    for category in categories:
        for case in all_cases[category]:
            if args.case and case["name"] not in args.case:
                continue
            selected.append((category, case))
    if args.case and not selected:
        print("error: no case named %s" % ", ".join(args.case))
        return 2

    failed = []
    start = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = [(cat, case, pool.submit(run_case, ctx, case)) for cat, case in selected]
        for category, case, future in futures:
            label = "%s/%s" % (category, case["name"])
            try:
                passed, lines = future.result()
            except Exception:
                passed, lines = False, ["  driver error:\n" + traceback.format_exc()]
            print("%s: %s" % ("PASS" if passed else "FAIL", label))
            for line in lines:
                print(line)
            sys.stdout.flush()
            if not passed:
                failed.append(label)

    print("\n%d cases, %d passed, %d failed (%.0f s)" % (
        len(selected), len(selected) - len(failed), len(failed), time.monotonic() - start))
    for label in failed:
        print("FAILED: " + label)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
