"""What a device call carries: the working tree and the bundle's archive.

One call carries at most 64 MiB: the tracked and untracked, non-ignored
files of the checkout plus the carried paths. The bundle travels as
gpu-bundle.tar.gz (executables compress to about a third), which run.sh
unpacks on the GPU machine.
"""
import os
import subprocess
import tarfile

CARRY_LIMIT = 64 * 1024 * 1024
# Kept free of the limit: files added to the tree after the bundle was made.
MARGIN = 4 * 1024 * 1024


def archive_path(bundle):
    return os.path.abspath(bundle).rstrip("/") + ".tar.gz"


def tree_bytes(root):
    """Bytes of the files a device call copies from the checkout."""
    out = subprocess.run(["git", "-C", root, "ls-files", "-z", "--cached",
                          "--others", "--exclude-standard"],
                         capture_output=True, check=True).stdout
    total = 0
    for rel in set(out.decode().split("\0")) - {""}:
        p = os.path.join(root, rel)
        if os.path.isfile(p) and not os.path.islink(p):
            total += os.path.getsize(p)
    return total


def write_archive(bundle):
    """Packs the bundle (build stamps left out) into its .tar.gz, written
    beside it under a temporary name first so that a stale archive is never
    mistaken for a new one. Returns the archive's size in bytes."""
    path = archive_path(bundle)
    tmp = path + ".part"
    name = os.path.basename(os.path.abspath(bundle).rstrip("/"))
    with tarfile.open(tmp, "w:gz", compresslevel=6) as tar:
        tar.add(bundle, arcname=name,
                filter=lambda ti: None if ti.name.endswith(".stamp") else ti)
    os.replace(tmp, path)
    return os.path.getsize(path)


def check(root, bundle):
    """(ok, text): whether the tree and the archive fit one call."""
    path = archive_path(bundle)
    if not os.path.isfile(path):
        return False, f"no {os.path.basename(path)} (scripts/gpu/bundle.sh)"
    tree, arc = tree_bytes(root), os.path.getsize(path)
    limit = CARRY_LIMIT - MARGIN
    return tree + arc <= limit, (
        f"carried {(tree + arc) / 2**20:.1f} MiB: tree {tree / 2**20:.1f} "
        f"MiB + {os.path.basename(path)} {arc / 2**20:.1f} MiB (limit "
        f"{limit / 2**20:.0f} MiB)")
