"""The direct convolution sums the window in chunks of taps whose panel lines all the tiles of a
block of pixels run over before the next chunk's: whole window rows, as many as fit in the
budget (CHUNK_BYTES for tiles of STREAMED_FROM_ELEMENTS pixels x channels or more, which read
the lines from L2; L1_CHUNK_BYTES for smaller ones), so a window row's taps run as one loop;
single taps only where one window row's lines exceed it; chunks as even as they go. Results for
several chunks are checked by tests/e2e/test_conv_direct.py (its chunks, deep-c and wide-chunks
cases)."""

from __future__ import annotations

import pytest

from weir.compiler.targets.llvm_cpu.conv_blocking import (
    CHUNK_BYTES,
    chunk_taps,
    ConvGeometry,
    L1_CHUNK_BYTES,
    STREAMED_FROM_ELEMENTS,
)


def geometry(chans: int, kh: int, kw: int) -> ConvGeometry:
    return ConvGeometry(chans, 64, kh, kw, 14, 14, 1, 1, 1, 1)


# (input channels, window, panel width, tile pixels) -> taps per chunk.
CASES = {
    (64, 3, 3, 32, 14): 9,    # VGG's and ResNet's 64 channels on AVX-512: the whole window
    (64, 3, 3, 32, 9): 3,     # the same on 9-pixel tiles (54 wide): a window row of 24 KiB
    (3, 7, 7, 32, 14): 49,    # the 7 x 7 stem of 3 channels
    (256, 3, 3, 32, 14): 6,   # 96 KiB a window row: two rows, then the last one
    (512, 3, 3, 32, 14): 3,   # 192 KiB a window row: a row a chunk
    (512, 3, 3, 32, 7): 1,    # 7 x 7 images: a tap's 64 KiB alone
    (200, 3, 3, 32, 14): 6,   # the e2e chunks case (AVX-512, rows of 14 pixels)
    (600, 3, 3, 32, 14): 2,   # a window row past CHUNK_BYTES: two taps a chunk, 5 chunks
    (32, 3, 3, 16, 6): 9,     # AVX2's 16-channel panels, 6-pixel tiles: 18 KiB in all
    (64, 3, 3, 16, 6): 6,     # ... 12 KiB a window row: two rows, then the last one
    (4096, 3, 3, 32, 14): 1,  # one tap's lines past CHUNK_BYTES: a tap a chunk
    (256, 7, 7, 8, 6): 3,     # SSE's 8-channel panels: a window row of 56 KiB is past the
                              # budget: three 8 KiB taps a chunk
    (80, 3, 3, 32, 10): 2,    # 30 KiB a window row on 10-pixel tiles: 2 taps a chunk, then 1
    (64, 3, 3, 64, 6): 9,     # wide tiles (6 pixels x 64 channels) stream from L2: 144 KiB
    (128, 3, 3, 64, 6): 6,    # ... 96 KiB a window row: two rows, then the last one
    (300, 3, 3, 64, 6): 2,    # ... a window row past CHUNK_BYTES: two taps a chunk (the e2e
                              # wide-chunks case)
}


@pytest.mark.parametrize("key", CASES,
                         ids=[f"c{c}-{kh}x{kw}-nr{nr}-mr{mr}" for c, kh, kw, nr, mr in CASES])
def test_chunks_are_whole_window_rows_within_the_budget(
        key: tuple[int, int, int, int, int]) -> None:
    chans, kh, kw, nr, mr = key
    taps = chunk_taps(geometry(chans, kh, kw), nr, mr)
    assert taps == CASES[key]
    budget = CHUNK_BYTES if mr * nr >= STREAMED_FROM_ELEMENTS else L1_CHUNK_BYTES
    line = chans * nr * 4
    if kw * line <= budget:
        assert taps % kw == 0 and taps * line <= budget
    else:
        assert taps * line <= max(line, budget)
