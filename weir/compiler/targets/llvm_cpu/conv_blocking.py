"""How the direct convolution kernel (conv_kernel.py) is blocked for a CPU and a convolution's
static sizes: its register tile (pixels x vectors of output channels), the width of the
filter's panels (what pack-conv-filters packs constant filters to at compile time), and the
chunks of window taps a block of pixels runs over. Decisions only: the kernel writes the
code."""

from __future__ import annotations

from dataclasses import dataclass, replace

from weir.compiler.targets.llvm_cpu.gemm import panel_columns
from weir.compiler.targets.llvm_cpu.machine import CpuTarget

# Most bytes of panel lines in one chunk of taps. Each line is read by every tile of a block of
# pixels, 2 vectors per mr cycles of multiply-adds: from L2 for tiles of at least
# STREAMED_FROM_ELEMENTS pixels x channels (a chunk of up to CHUNK_BYTES, about a tenth of a
# core's L2, beside the input rows a block reads: `pixels_per_block`), which L2 sustains;
# smaller tiles keep their chunk in L1 (L1_CHUNK_BYTES, half of a 48 KiB L1). What chunks cost
# is the tiles' accumulators, loaded and stored once per chunk. Measured on AVX-512 (48 KiB L1,
# 2 MiB L2), against chunks of at most 16 KiB: VGG's 224 x 224 x 64 layer (14-pixel tiles)
# 0.93-0.94x with the whole window in one chunk, 112 x 112 x 128 0.95-0.97x, ResNet's
# 28 x 28 x 128 0.90-0.94x and 14 x 14 x 256 0.91-0.98x (a window row or the whole window a
# chunk); the suite's 54 x 54 x 64 (9-pixel tiles) 1.03-1.05x with the whole window, 0.95-0.97x
# with a window row a chunk; whole 590 KiB panels at 7 x 7 x 512 (7-pixel tiles) 1.07x. Wide
# tiles (`wide_tiles`) stream too: ResNet's 56 x 56 x 64 layer in them took 0.94-0.95x the time
# with the whole window a chunk that it took with a tap a chunk (16 KiB), 0.93-0.98x that with
# two taps (32 KiB).
CHUNK_BYTES = 192 * 1024
L1_CHUNK_BYTES = 24 * 1024
# Tiles of at least this many accumulator elements (pixels x channels: 12 x 32 on AVX-512)
# stream their chunk's lines from L2.
STREAMED_FROM_ELEMENTS = 12 * 32

# Input channels from which the taps of a window row run as one loop (`merges_window_rows`),
# and the window width from which they do whatever the channels.
MERGED_TAPS_FROM = 16
MERGED_WINDOW_FROM = 7

# Steps of a tile's loop over taps and channels per iteration: the most of these that divides
# its depth (KW * C merged, or C). One step per iteration spent three of its ~38 instructions on
# the loop; measured whole, ResNet-18 took 0.969x the time with two steps (local-task), VGG
# 0.973x, and four 0.978x of two.
UNROLLED_STEPS = (4, 3, 2, 1)

# Wide tiles (`wide_tiles`): pixels per tile, and the narrowest output rows that take them.
WIDE_PIXELS = 6
WIDE_FROM_WIDTH = 28
# The fewest output pixels of a 1 x 1 convolution whose GEMM runs in wide tiles (`wide_gemm`).
WIDE_GEMM_FROM_PIXELS = 14 * 14


@dataclass(frozen=True)
class ConvGeometry:
    """The static sizes of one convolution, as the kernel reads them: input rows are W x C
    (pixel stride C), the accumulator row OW x F (row stride given at run time)."""

    chans: int
    feats: int
    kh: int
    kw: int
    out_h: int
    out_w: int
    sh: int
    sw: int
    dh: int
    dw: int


@dataclass(frozen=True)
class Blocking:
    lanes: int    # f32 elements per vector register
    mr: int       # output pixels per register tile
    vectors: int  # vectors of output channels per register tile

    @property
    def nr(self) -> int:
        return self.lanes * self.vectors


def blocking(cpu: CpuTarget) -> Blocking:
    """16 vector registers (SSE2, AVX2) hold 6 x 2 accumulators, the two filter vectors and a
    broadcast; AVX-512's 32 hold 12 x 2 of them (or 6 x 4: `conv_tile`)."""
    return Blocking(lanes=cpu.vector_bits // 32, mr=12 if cpu.vector_bits == 512 else 6,
                    vectors=2)


def wide_tiles(cpu: CpuTarget, g: ConvGeometry) -> bool:
    """Whether the convolution's register tiles are 6 pixels x 4 vectors (64 channels on
    AVX-512) rather than 12-14 pixels x 2 vectors. A step of the wide tile loads 10 values for
    24 multiply-adds, the narrow one 16 for 28; the narrow loop ran a 56 x 56 x 64 layer at
    85-88% of the FMA peak where onnxruntime's 6 x 64 loop ran at 95% or more. Measured on one
    thread (two), against the narrow tiles: ResNet's 56 x 56 x 64 layer 0.91-0.94x (one thread
    only), 28 x 28 x 128 0.96x (0.94x), VGG's 224 x 224 x 64 0.92x (0.94x); 14 x 14 x 256 1.04x
    (1.00x) and 7 x 7 x 512 1.00x (1.08x), whose rows of 14 and 7 pixels the narrow tiles
    divide and the wide ones do not, so those keep them (`WIDE_FROM_WIDTH`). Only windows
    larger than 1 x 1 (a 1 x 1 convolution runs on the GEMM's panels) and output channels in
    whole wide panels (no zero-padded last block)."""
    return _wide_panels(cpu, g) and g.kh * g.kw > 1 and g.out_w >= WIDE_FROM_WIDTH


def _wide_panels(cpu: CpuTarget, g: ConvGeometry) -> bool:
    """What both kinds of wide tiles need: AVX-512's 32 registers for 6 x 4 accumulators, and
    output channels in whole panels of 4 vectors (64 channels), so no wide tile is partly
    padding."""
    return cpu.vector_bits == 512 and g.feats % (4 * blocking(cpu).lanes) == 0


def conv_tile(cpu: CpuTarget, g: ConvGeometry) -> Blocking:
    """The register tile the direct kernel runs `g` with: wide, or narrow with as many pixels
    as `tile_pixels` finds for its rows."""
    narrow = blocking(cpu)
    if wide_tiles(cpu, g):
        return replace(narrow, mr=WIDE_PIXELS, vectors=4)
    return replace(narrow, mr=tile_pixels(cpu, g.out_w))


def tile_pixels(cpu: CpuTarget, out_w: int) -> int:
    """Output pixels per register tile for output rows of `out_w` pixels: a count whose tiles
    never straddle two rows, where one is near the default. A tile inside one row reads its
    inputs at constant offsets from one pointer; a tile that straddles rows needs a pointer
    per pixel, and the loop spills them (measured one thread, AVX-512: ResNet's 3 x 3
    convolutions at 7 x 7 took 0.84-0.94x the time with 7-pixel tiles, SqueezeNet's at
    13 x 13 0.85x with 13-pixel ones, at 55 x 55 0.86-0.90x with 11). Up to two pixels more
    than the default still leave the loop its filter vectors and a broadcast (14 x 2 + 3 of
    AVX-512's 32 registers); fewer than three quarters of it load too many broadcasts per
    product, except where the row is that short. (Tiles of two 7-pixel rows were slower
    than of one: workgroups of one output row left them half empty.) Without such a count
    the default stays, its tiles straddling rows now and then (111 pixels: a ninth of them)."""
    default = blocking(cpu).mr
    most = default + 2 if cpu.vector_bits == 512 else default
    if out_w <= most:
        return out_w
    fits = [mr for mr in range(most, -(-3 * default // 4) - 1, -1) if out_w % mr == 0]
    return fits[0] if fits else default


def wide_gemm(cpu: CpuTarget, g: ConvGeometry) -> bool:
    """Whether a 1 x 1 convolution of stride 1, which runs as a GEMM over its pixels
    (pointwise_conv.py), runs it in the GEMM's wide tiles (6 x 64 on AVX-512, gemm_base's
    `_blocking`) over filter panels of 64 channels. Those stream B twice as often per row of A:
    at 7 x 7 pixels, where the filter (1-4 MB) is read from memory by few rows, they were
    slower. Output channels in whole wide panels only, as for `wide_tiles`."""
    return _wide_panels(cpu, g) and g.kh == g.kw == 1 and (g.sh, g.sw) == (1, 1) and \
        g.out_h * g.out_w >= WIDE_GEMM_FROM_PIXELS


def panel_width(cpu: CpuTarget, g: ConvGeometry | None = None, pointwise: bool = False) -> int:
    """Output channels per panel of the filter of `g` (pack_conv_filters.py packs constant
    filters so): the direct kernel's tile width, or with `pointwise` (the convolution runs as
    a GEMM, pointwise_conv.py) the GEMM's panel width, wide where `wide_gemm` says; without
    `g`, of the GEMM-shaped narrow panels."""
    if g is None:
        return blocking(cpu).nr
    if pointwise:
        return panel_columns(cpu, "f32", wide_gemm(cpu, g))
    return conv_tile(cpu, g).nr


def chunk_taps(g: ConvGeometry, nr: int, mr: int) -> int:
    """Window taps whose panel lines (C x nr per tap) all the tiles of a block of pixels run
    over before the next chunk's: whole window rows, as many as fit in the chunk budget for
    tiles of `mr` pixels x `nr` channels (CHUNK_BYTES, or L1_CHUNK_BYTES below
    STREAMED_FROM_ELEMENTS), so the taps of a window row run as one loop (`_taps`) and each
    tile's accumulators are loaded and stored once per chunk; single taps only where one window
    row's lines exceed it. C is stored and reloaded between chunks, which keeps the sum in
    (kh, kw, c) order."""
    budget = CHUNK_BYTES if mr * nr >= STREAMED_FROM_ELEMENTS else L1_CHUNK_BYTES
    line = g.chans * nr * 4
    rows = min(g.kh, budget // (g.kw * line))
    if rows:
        return g.kw * -(-g.kh // -(-g.kh // rows))  # as even as chunks of `rows` go
    taps, most = g.kh * g.kw, max(1, budget // line)
    return -(-taps // -(-taps // most))


def merges_window_rows(g: ConvGeometry) -> bool:
    """Whether the taps of a window row run as one loop over its KW * C consecutive input
    elements and panel lines (dw = 1) instead of a loop over taps of C steps each, which
    recomputes the tap's row and column from its index. Measured on one thread, AVX-512: a
    3 x 3 convolution of 64 channels 12% faster merged; with few channels a tap at a time is
    faster for 3 x 3 windows (3, 6 and 8 channels: 1.02-1.25x the time merged) and slower for
    7 x 7 ones (ResNet's stem of 3 channels, stride 2: 0.85-0.91x the time merged, on one
    thread and on two)."""
    return g.dw == 1 and (g.chans >= MERGED_TAPS_FROM or g.kw >= MERGED_WINDOW_FROM)
