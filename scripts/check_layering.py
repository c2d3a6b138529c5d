#!/usr/bin/env python3
"""Checks that the source tree keeps its layers (docs/architecture.md).

Reads every #include under lib/, include/, tools/ and dialects/, and every
target_link_libraries of the attnc libraries, and prints one line per
violation, naming file:line:

  - an include or a link from a lower layer to a higher one, or between two
    components of one layer (Codegen/CPU and Codegen/GPU);
  - an include of a private header (one under lib/) from another top-level
    directory of lib/, or of a private header that only an include
    directory makes visible (a bare "SafeTensors.h" from another folder);
  - anything of the compiler (or of LLVM or MLIR) included by the runtime,
    which is plain C++ without LLVM.

Prints "N violations" last and exits with status 1 when N > 0.

  check_layering.py [--root DIR]
"""

import argparse
import os
import re
import sys

# The layers, lowest first. A component may use its own files and those of
# lower layers only; components that share a layer may not use each other.
LAYERS = [
    ["Runtime"],
    ["Support"],
    ["Dialect"],
    ["Transforms"],
    ["Frontend", "Conversion"],
    ["Codegen/Utils"],
    ["Codegen/Common"],
    ["Codegen/CPU", "Codegen/GPU"],
    ["Pipelines"],
    ["Registration", "Target"],
    ["Tools"],
    ["tools"],
]
LEVEL = {c: i for i, layer in enumerate(LAYERS) for c in layer}

# Headers of other layers the runtime may include: plain C++ (no LLVM), kept
# beside the compiler code that shares them.
RUNTIME_PLAIN_HEADERS = {"include/attnc/Support/FileKind.h"}

# Public headers that sit directly in include/attnc/.
TOP_LEVEL_HEADERS = {"include/attnc/InitAttnc.h": "Registration"}

SOURCE_DIRS = ["lib", "include", "tools", "dialects"]
SOURCE_EXTS = (".h", ".hpp", ".cpp", ".c", ".cc", ".td")
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]')


def component(path):
    """The component of a path relative to the root, or None."""
    parts = path.split("/")
    if parts[0] == "tools":
        return "tools"
    if parts[0] == "dialects":
        return "Dialect"
    if path in TOP_LEVEL_HEADERS:
        return TOP_LEVEL_HEADERS[path]
    if parts[0] == "include" and len(parts) > 2 and parts[1] == "attnc":
        rest = parts[2:]
    elif parts[0] == "lib" and len(parts) > 1:
        rest = parts[1:]
    else:
        return None
    if rest[0] == "Codegen" and len(rest) > 1:
        name = "Codegen/" + rest[1]
    else:
        name = rest[0]
    return name if name in LEVEL else None


def source_files(root):
    for top in SOURCE_DIRS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames.sort()
            for name in sorted(filenames):
                if name.endswith(SOURCE_EXTS):
                    yield os.path.relpath(os.path.join(dirpath, name), root)


def include_roots(root):
    roots = ["lib", "include"]
    dialects = os.path.join(root, "dialects")
    if os.path.isdir(dialects):
        for d in sorted(os.listdir(dialects)):
            if os.path.isdir(os.path.join(dialects, d, "include")):
                roots.append(os.path.join("dialects", d, "include"))
    return roots


def resolve(root, roots, source, name):
    """The file an include names, relative to the root, or None."""
    candidates = [os.path.join(os.path.dirname(source), name)]
    candidates += [os.path.join(r, name) for r in roots]
    for c in candidates:
        c = os.path.normpath(c)
        if os.path.isfile(os.path.join(root, c)):
            return c
    return None


def allowed(src, dst):
    return src == dst or LEVEL[dst] < LEVEL[src]


def check_includes(root, findings):
    roots = include_roots(root)
    files = list(source_files(root))
    by_basename = {}
    for f in files:
        by_basename.setdefault(os.path.basename(f), []).append(f)
    for source in files:
        src = component(source)
        with open(os.path.join(root, source), errors="replace") as fh:
            lines = fh.readlines()
        for lineno, line in enumerate(lines, 1):
            m = INCLUDE_RE.match(line)
            if not m:
                continue
            name = m.group(2)
            where = "%s:%d" % (source, lineno)
            if src == "Runtime" and name.split("/")[0] in ("llvm", "mlir"):
                findings.append("%s: the runtime includes %s (it must not "
                                "use LLVM)" % (where, name))
                continue
            if name.endswith(".inc"):
                continue
            target = resolve(root, roots, source, name)
            if target is None:
                # Not ours (the standard library, LLVM, ONNX), unless a file
                # of the tree has that name: then an include directory made a
                # private header visible.
                hidden = [f for f in by_basename.get(os.path.basename(name), [])
                          if f.endswith("/" + name) and f.startswith("lib/")]
                if hidden and m.group(1) == '"':
                    findings.append("%s: %s reaches the private header %s "
                                    "through an include directory" %
                                    (where, name, hidden[0]))
                continue
            dst = component(target)
            if src is None or dst is None:
                continue
            if src == "Runtime" and dst != "Runtime":
                if target not in RUNTIME_PLAIN_HEADERS:
                    findings.append("%s: the runtime includes %s (%s), which "
                                    "is compiler code" % (where, name, dst))
                continue
            if target in RUNTIME_PLAIN_HEADERS:
                continue
            if not allowed(src, dst):
                findings.append("%s: %s includes %s (%s), which is not below "
                                "it" % (where, src, name, dst))
                continue
            if target.startswith("lib/") and source.split("/")[:2] != \
                    target.split("/")[:2]:
                findings.append("%s: includes %s, a private header of "
                                "another directory" % (where, target))


CMAKE_CALL_RE = re.compile(r"\b(add_library|target_link_libraries)\s*\(([^)]*)\)",
                           re.S)


def check_links(root, findings):
    """Links between the libraries follow the same order as the includes."""
    libraries = {}
    links = []
    for top in SOURCE_DIRS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames.sort()
            if "CMakeLists.txt" not in filenames:
                continue
            path = os.path.relpath(os.path.join(dirpath, "CMakeLists.txt"), root)
            owner = component(os.path.dirname(path) + "/x")
            with open(os.path.join(root, path)) as fh:
                text = fh.read()
            for m in CMAKE_CALL_RE.finditer(text):
                lineno = text.count("\n", 0, m.start()) + 1
                words = [w for w in m.group(2).split()
                         if not w.startswith("${")]
                if not words:
                    continue
                if m.group(1) == "add_library":
                    if owner:
                        libraries[words[0]] = owner
                else:
                    links.append(("%s:%d" % (path, lineno), words[0],
                                  [w for w in words[1:]
                                   if w not in ("PUBLIC", "PRIVATE",
                                                "INTERFACE")]))
    for where, lib, deps in links:
        src = libraries.get(lib)
        if src is None:
            continue
        for dep in deps:
            dst = libraries.get(dep)
            if dst is None:
                continue
            if src == "Runtime" and dst != "Runtime":
                findings.append("%s: the runtime %s links %s (%s)" %
                                (where, lib, dep, dst))
            elif not allowed(src, dst):
                findings.append("%s: %s (%s) links %s (%s), which is not "
                                "below it" % (where, lib, src, dep, dst))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), ".."),
        help="the source tree (default: the one holding this script)")
    args = parser.parse_args()
    findings = []
    check_includes(args.root, findings)
    check_links(args.root, findings)
    for f in findings:
        print(f)
    print("%d violations" % len(findings))
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
