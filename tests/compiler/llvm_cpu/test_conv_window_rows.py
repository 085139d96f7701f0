"""The direct convolution runs the taps of a window row as one loop over their KW * C input
elements where that was measured faster: from 16 input channels, and for 7 x 7 windows (a
stem's 3 channels) whatever the channels; a tap at a time for narrower windows of few channels
and for dilated rows, whose taps are not consecutive. Results of both ways are checked by
tests/e2e/test_conv_direct.py (its stem, stem-7x7, narrow-f and dilation2 cases)."""

from __future__ import annotations

import pytest

from weir.compiler.targets.llvm_cpu.conv_blocking import ConvGeometry, merges_window_rows

# (input channels, kh x kw, dilation) -> one loop a window row.
CASES = {
    (64, (3, 3), 1): True,    # ResNet's and VGG's 3 x 3 convolutions
    (16, (3, 3), 1): True,    # the fewest channels that merge in a 3 x 3 window
    (3, (7, 7), 1): True,     # ResNet's and DenseNet's 7 x 7 stems
    (3, (3, 3), 1): False,    # MobileNet's and SqueezeNet's 3 x 3 stems
    (8, (3, 3), 1): False,    # few channels, narrow window
    (3, (5, 5), 1): False,    # ... up to 5 wide
    (64, (3, 3), 2): False,   # dilated: a row's taps are not consecutive
    (3, (7, 7), 2): False,
}


@pytest.mark.parametrize("key", CASES, ids=[f"c{c}-{kh}x{kw}-d{d}" for c, (kh, kw), d in CASES])
def test_window_rows_merge_where_measured_faster(key: tuple[int, tuple[int, int], int]) -> None:
    chans, (kh, kw), dilation = key
    g = ConvGeometry(chans, 64, kh, kw, 14, 14, 2, 2, dilation, dilation)
    assert merges_window_rows(g) is CASES[key]
