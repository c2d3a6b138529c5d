"""bf16 rounding, and the PTX ISA models of the warp and warpgroup MMA
fragment layouts, wgmma matrix descriptors and ldmatrix (see
gpu_kernel_emulator.py for the sections of the ISA they follow)."""

import numpy as np

LANES = 32
WARPGROUP = 128

# ---------------------------------------------------------------------------
# bf16.


def f32_to_bf16_bits(x):
    """Round-to-nearest-even f32 -> bf16 bits."""
    u = np.asarray(x, np.float32).view(np.uint32)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def bits_to_bf16_f32(bits):
    # Flat: numpy cannot reinterpret a 0-d array (a scalar constant).
    bits = np.asarray(bits)
    flat = bits.reshape(-1).astype(np.uint32) << 16
    return flat.view(np.float32).reshape(bits.shape)


def bf16_bits_to_f64(bits):
    return bits_to_bf16_f32(bits).astype(np.float64)


def to_f64(x, elem):
    """Stored elements (bf16 as bits) as float64 values."""
    return bf16_bits_to_f64(x) if elem == "bf16" else x.astype(np.float64)


def bf16_round(x):
    """float32 values rounded to bf16 (round to nearest even), as float32."""
    x = np.asarray(x, np.float32)
    return bits_to_bf16_f32(f32_to_bf16_bits(x.reshape(-1))).reshape(x.shape)


def round_to(x, elem):
    """Rounds float values to `elem` (f32/f16/bf16), bf16 held as float32."""
    if elem == "f32":
        return np.asarray(x, np.float32)
    if elem == "f16":
        with np.errstate(over="ignore"):  # to +-inf, as the hardware does
            return np.asarray(x).astype(np.float16)
    if elem == "bf16":
        return bf16_round(np.asarray(x, np.float32))
    raise NotImplementedError(elem)


# ---------------------------------------------------------------------------
# The PTX ISA fragment layout of mma.m16n8k16 (f16/bf16 inputs, f32 acc).


def isa_a_coord(lane, i):
    """Element a_i (i in 0..7) of A (16 x 16, row-major 'row' operand)."""
    group, tig = lane >> 2, lane % 4
    row = group if (i < 2 or 4 <= i < 6) else group + 8
    col = tig * 2 + (i & 0x1) + (8 if i >= 4 else 0)
    return row, col


def isa_b_coord(lane, i):
    """Element b_i (i in 0..3) of B (16 x 8, K x N, 'col' operand)."""
    group, tig = lane >> 2, lane % 4
    row = tig * 2 + (i & 0x1) + (8 if i >= 2 else 0)
    col = group
    return row, col


def isa_c_coord(lane, i):
    """Element c_i / d_i (i in 0..3) of C and D (16 x 8)."""
    group, tig = lane >> 2, lane % 4
    row = group if i < 2 else group + 8
    col = tig * 2 + (i & 0x1)
    return row, col


def _coords(coord, n):
    rows = np.array([[coord(l, i)[0] for i in range(n)] for l in range(LANES)])
    cols = np.array([[coord(l, i)[1] for i in range(n)] for l in range(LANES)])
    return rows, cols


A_RC, B_RC, C_RC = _coords(isa_a_coord, 8), _coords(isa_b_coord, 4), \
    _coords(isa_c_coord, 4)


def _check_cover(rc, shape):
    seen = np.zeros(shape, int)
    np.add.at(seen, rc, 1)
    assert (seen == 1).all(), "ISA model: fragments must cover the matrix once"


_check_cover(A_RC, (16, 16))
_check_cover(B_RC, (16, 8))
_check_cover(C_RC, (16, 8))


def mutate_fragments(mutate, a, b, c):
    """The mma fragments a [T, 8], b [T, 4], c [T, 4] (register order) as a
    fragment-layout mutation corrupts them (or unchanged)."""
    if mutate == "swap-b-rows":
        b = b[:, [2, 3, 0, 1]]
    elif mutate == "swap-a-rows":
        a = a[:, [0, 1, 4, 5, 2, 3, 6, 7]]
    elif mutate == "swap-b-pair":
        b = b[:, [1, 0, 3, 2]]
    elif mutate == "swap-c-rows":
        c = c[:, [2, 3, 0, 1]]
    return a, b, c


def warps_mma(a, b, c):
    """One m16n8k16 per warp: fragments a [N, 8], b [N, 4] (float64) and
    c [N, 4] in register order, N a multiple of 32 -> d [N, 4] f32."""
    W = a.shape[0] // LANES
    A = np.zeros((W, 16, 16))
    A[:, A_RC[0], A_RC[1]] = a.reshape(W, LANES, 8)
    B = np.zeros((W, 16, 8))
    B[:, B_RC[0], B_RC[1]] = b.reshape(W, LANES, 4)
    C = np.zeros((W, 16, 8))
    C[:, C_RC[0], C_RC[1]] = np.asarray(c, np.float64).reshape(W, LANES, 4)
    D = (A @ B + C).astype(np.float32)
    return D[:, C_RC[0], C_RC[1]].reshape(W * LANES, 4)


# ---------------------------------------------------------------------------
# The PTX ISA model of wgmma.mma_async .m64nNk16 (f16/bf16 inputs, f32
# accumulation, A and B from shared memory through matrix descriptors).


def decode_wgmma_descriptor(desc, mutate=None):
    """A 64-bit shared-memory matrix descriptor (PTX ISA "Matrix Descriptor
    Format", sm_90) -> (start address, leading dimension byte offset, stride
    dimension byte offset), in bytes. Bits 0-13: start address >> 4 (of the
    18-bit shared address); 16-29: leading byte offset >> 4; 32-45: stride
    byte offset >> 4; 49-51: matrix base offset; 62-63: swizzle mode (0 no
    swizzle, 1 128-byte, 2 64-byte, 3 32-byte). Only the no-swizzle mode
    with base offset 0 is modelled; anything else is rejected."""
    desc = int(desc) & ((1 << 64) - 1)
    swizzle = desc >> 62
    if swizzle != 0:
        raise NotImplementedError(f"wgmma descriptor swizzle mode {swizzle} "
                                  "is not modelled")
    if (desc >> 49) & 0x7:
        raise NotImplementedError("wgmma descriptor base offset is not "
                                  "modelled")
    unknown = desc & ~((0x3FFF) | (0x3FFF << 16) | (0x3FFF << 32) |
                       (0x7 << 49) | (0x3 << 62))
    if unknown:
        raise AssertionError(f"wgmma descriptor: reserved bits set: "
                             f"{desc:#x}")
    start = (desc & 0x3FFF) << 4
    lbo = ((desc >> 16) & 0x3FFF) << 4
    sbo = ((desc >> 32) & 0x3FFF) << 4
    if mutate == "wgmma-swap-descriptor-offsets":
        lbo, sbo = sbo, lbo
    return start, lbo, sbo


def wgmma_kmajor_offsets(rows, lbo, sbo, elem_bytes=2, k=16):
    """Byte offsets [rows, k] from the start address of the elements of a
    K-major operand (A: M x K; B stored N x K) in the no-swizzle layout
    (PTX ISA "Shared Memory Matrix Layout"): core matrices of 8 rows x 16
    bytes, each row's 16 bytes contiguous and the 8 rows 16 bytes apart;
    the core matrix holding rows 8i..8i+7 and the j-th 16 bytes of K starts
    at i * (stride byte offset) + j * (leading byte offset)."""
    per = 16 // elem_bytes
    r = np.arange(rows)[:, None]
    c = np.arange(k)[None, :]
    return (r // 8) * sbo + (c // per) * lbo + (r % 8) * 16 + \
        (c % per) * elem_bytes


def wgmma_d_coord(tid, i):
    """Element d_i of the accumulator held by thread `tid` (0..127) of the
    warpgroup (PTX ISA "Matrix fragments for wgmma .m64nNk16", D f32): warp
    w = tid / 32 owns rows 16w..16w+15; with lane = tid % 32, row 16w +
    lane / 4 + 8 ((i / 2) % 2), column 8 (i / 4) + 2 (lane % 4) + i % 2."""
    warp, lane = tid // LANES, tid % LANES
    row = 16 * warp + (lane >> 2) + 8 * ((i >> 1) & 1)
    col = 8 * (i >> 2) + 2 * (lane % 4) + (i & 1)
    return row, col


def wgmma_d_coords(n, mutate=None):
    tid = np.arange(WARPGROUP)[:, None]
    i = np.arange(n // 2)[None, :]
    if mutate == "wgmma-swap-d-rows":
        i = i ^ 2  # rows g and g + 8 exchanged
    return wgmma_d_coord(tid, i)


for _n in (8, 24, 64, 128, 256):
    _check_cover(wgmma_d_coords(_n), (64, _n))


def wgmma_compute(a, b, d, mutate=None):
    """D = A * B + D for G warpgroups: a [G, 64, 16] and b [G, n, 16] (B^T:
    the K-major B) float64, d [G, 128, n / 2] f32 registers -> new
    registers."""
    G, n = b.shape[0], b.shape[1]
    rows, cols = wgmma_d_coords(n, mutate)
    D = np.zeros((G, 64, n))
    D[:, rows, cols] = d
    D = (a @ b.transpose(0, 2, 1) + D).astype(np.float32)
    return D[:, rows, cols]


# ---------------------------------------------------------------------------
# ldmatrix.sync.aligned.m8n8.x1/x2/x4[.trans].shared.b16.


def ldmatrix_receivers(num_tiles, transpose):
    """For every element (matrix i, row r, column c) of an ldmatrix, the
    lane that receives it and where: arrays [tiles, 8, 8] of lane and pair
    element index (register i of that lane, element 0 or 1)."""
    r, c = np.meshgrid(np.arange(8), np.arange(8), indexing="ij")
    if transpose:  # lane l gets [2 (l % 4) + e][l / 4]
        lane, elem = c * 4 + r // 2, r % 2
    else:  # lane l gets [l / 4][2 (l % 4) + e]
        lane, elem = r * 4 + c // 2, c % 2
    return (np.broadcast_to(lane, (num_tiles, 8, 8)),
            np.broadcast_to(elem, (num_tiles, 8, 8)))


def check_ldmatrix_model():
    """Every lane receives each matrix's elements once, as the PTX ISA's
    fragment of ldmatrix (the row/column pair per register)."""
    for trans in (False, True):
        lane, elem = ldmatrix_receivers(1, trans)
        seen = np.zeros((32, 2), int)
        np.add.at(seen, (lane[0].ravel(), elem[0].ravel()), 1)
        assert (seen == 1).all()


check_ldmatrix_model()
