"""This machine's x86 CPU feature flags, for the tests (lit features) and the
benchmarks (which kernels a peer should run)."""


def host_flags():
    """The flags of /proc/cpuinfo (e.g. avx512f, avx512_bf16), or none."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()
