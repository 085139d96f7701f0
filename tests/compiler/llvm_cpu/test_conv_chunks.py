"""The direct convolution sums the window in chunks of taps whose panel lines all the tiles of a
block of pixels run over before the next chunk's: whole window rows, as many as fit in
CHUNK_BYTES (so a window row's taps run as one loop), single taps only where one window row's
lines exceed it, chunks as even as they go. Results for several chunks are checked by
tests/e2e/test_conv_direct.py (its chunks and deep-c cases)."""

from __future__ import annotations

import pytest

from weir.compiler.targets.llvm_cpu.conv_kernel import CHUNK_BYTES, ConvGeometry, chunk_taps


def geometry(chans: int, kh: int, kw: int) -> ConvGeometry:
    return ConvGeometry(chans, 64, kh, kw, 14, 14, 1, 1, 1, 1)


# (input channels, window, panel width) -> taps per chunk.
CASES = {
    (64, 3, 3, 32): 9,     # VGG's and ResNet's 64 channels on AVX-512: the whole window
    (3, 7, 7, 32): 49,     # the 7 x 7 stem of 3 channels
    (256, 3, 3, 32): 6,    # 96 KiB a window row: two rows, then the last one
    (512, 3, 3, 32): 3,    # 192 KiB a window row: a row a chunk
    (200, 3, 3, 32): 6,    # the e2e chunks case
    (600, 3, 3, 32): 2,    # a window row past CHUNK_BYTES: two taps a chunk, 5 chunks
    (600, 3, 3, 16): 3,    # the same on AVX2's 16-channel panels: a row a chunk
    (4096, 3, 3, 32): 1,   # one tap's lines past CHUNK_BYTES: a tap a chunk
    (256, 7, 7, 8): 21,    # 7 rows of 56 KiB: chunks of 3, 3 and 1 rows
}


@pytest.mark.parametrize("key", CASES, ids=[f"c{c}-{kh}x{kw}-nr{nr}" for c, kh, kw, nr in CASES])
def test_chunks_are_whole_window_rows_within_the_budget(
        key: tuple[int, int, int, int]) -> None:
    chans, kh, kw, nr = key
    taps = chunk_taps(geometry(chans, kh, kw), nr)
    assert taps == CASES[key]
    line = chans * nr * 4
    if kw * line <= CHUNK_BYTES:
        assert taps % kw == 0 and taps * line <= CHUNK_BYTES
    else:
        assert taps * line <= max(line, CHUNK_BYTES)
