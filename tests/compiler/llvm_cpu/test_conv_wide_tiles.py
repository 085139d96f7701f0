"""On AVX-512 the direct convolution's register tiles are 6 pixels x 4 vectors (64 channels)
for windows larger than 1 x 1 with output channels in whole 64-channel panels and output rows
of at least WIDE_FROM_WIDTH pixels; 12-14 pixels x 2 vectors otherwise, and always on 16-register
targets. The filter's panels are as wide as the kernel's tile, on both sides: pack-conv-filters
packs a constant filter to `panel_width` of the convolution's geometry, which is the width
`conv_tile` gives the kernel; a 1 x 1 convolution of stride 1, which runs as a GEMM, gets the
GEMM's panels, 64 channels wide where `wide_gemm` runs it in the GEMM's wide tiles. Results of
wide tiles are checked by tests/e2e/test_conv_direct.py (its wide cases),
tests/e2e/test_prepacked_filters.py (its wide cases) and test_gemm_wide.py."""

from __future__ import annotations

import pytest

from weir.compiler.targets.llvm_cpu.conv_blocking import (
    conv_tile,
    ConvGeometry,
    panel_width,
    wide_gemm,
    WIDE_FROM_WIDTH,
    WIDE_GEMM_FROM_PIXELS,
)
from weir.compiler.targets.llvm_cpu.gemm import panel_columns
from weir.compiler.targets.llvm_cpu.machine import resolve_cpu


def geometry(chans: int, feats: int, window: int, out_w: int) -> ConvGeometry:
    return ConvGeometry(chans, feats, window, window, out_w, out_w, 1, 1, 1, 1)


# (input channels, output channels, window, output width) -> (pixels, channels) of a tile.
AVX512 = {
    (64, 64, 3, 56): (6, 64),     # ResNet's 56 x 56 layers: wide
    (128, 128, 3, 28): (6, 64),   # 28 x 28: wide, two panels
    (3, 64, 7, 112): (6, 64),     # the 7 x 7 stem
    (16, 64, 3, 55): (6, 64),     # SqueezeNet's expansions at 55 x 55
    (256, 256, 3, 14): (14, 32),  # 14-pixel rows: narrow tiles divide them
    (512, 512, 3, 7): (7, 32),    # 7-pixel rows
    (32, 128, 3, 27): (9, 32),    # below WIDE_FROM_WIDTH
    (64, 256, 1, 56): (14, 32),   # 1 x 1: the GEMM's panels
    (128, 32, 3, 56): (14, 32),   # DenseNet's growth of 32 channels: no whole wide panel
    (64, 96, 3, 56): (14, 32),    # 96 channels: a wide panel and a half one
}


def test_wide_tiles_where_rows_and_channels_fill_them() -> None:
    cpu = resolve_cpu("x86-64-v4")
    for key, (pixels, channels) in AVX512.items():
        tile = conv_tile(cpu, geometry(*key))
        assert (tile.mr, tile.nr) == (pixels, channels), key
        assert tile.mr * tile.vectors + tile.vectors + 1 <= 32, key  # accumulators fit
    assert conv_tile(cpu, geometry(64, 64, 3, WIDE_FROM_WIDTH)).vectors == 4
    assert conv_tile(cpu, geometry(64, 64, 3, WIDE_FROM_WIDTH - 1)).vectors == 2


@pytest.mark.parametrize("cpu_name", ["x86-64-v3", "x86-64"])
def test_sixteen_register_targets_keep_narrow_tiles(cpu_name: str) -> None:
    cpu = resolve_cpu(cpu_name)
    for key in AVX512:
        assert conv_tile(cpu, geometry(*key)).vectors == 2, key


@pytest.mark.parametrize("cpu_name", ["x86-64-v4", "x86-64-v3"])
def test_packed_panels_are_as_wide_as_the_kernels_tile(cpu_name: str) -> None:
    cpu = resolve_cpu(cpu_name)
    for key in AVX512:
        g = geometry(*key)
        assert panel_width(cpu, g) == conv_tile(cpu, g).nr, key
    # Without a geometry (the 1 x 1 GEMM path): the narrow panels.
    assert panel_width(cpu) == conv_tile(cpu, geometry(64, 256, 1, 56)).nr


# 1 x 1 convolutions of stride 1 run as GEMMs (pointwise_conv.py): (input channels, output
# channels, output width) -> whether in the GEMM's wide tiles on AVX-512.
POINTWISE = {
    (64, 256, 56): True,     # ResNet-50's expansions at 56 x 56
    (256, 64, 56): True,     # its reductions: one wide panel
    (1024, 256, 14): True,   # 14 x 14 = WIDE_GEMM_FROM_PIXELS
    (256, 1024, 13): False,  # fewer pixels
    (512, 2048, 7): False,   # 7 x 7: the filter streams from memory for few rows
    (24, 144, 56): False,    # 144 channels: no whole wide panels
}


@pytest.mark.parametrize("cpu_name", ["x86-64-v4", "x86-64-v3"])
def test_pointwise_panels_are_the_gemms_wide_or_narrow(cpu_name: str) -> None:
    """pack-conv-filters packs a 1 x 1 convolution's filter for the GEMM's panels: wide ones
    where `wide_gemm` runs it in wide tiles, which only AVX-512 has."""
    cpu = resolve_cpu(cpu_name)
    assert 13 * 13 < WIDE_GEMM_FROM_PIXELS <= 14 * 14
    for (chans, feats, width), wide in POINTWISE.items():
        g = geometry(chans, feats, 1, width)
        assert wide_gemm(cpu, g) == (wide and cpu.vector_bits == 512), (chans, feats, width)
        assert panel_width(cpu, g, pointwise=True) == panel_columns(cpu, "f32", wide_gemm(cpu, g))
        assert panel_width(cpu, g) == conv_tile(cpu, g).nr  # the direct kernel's, if it runs
    strided = ConvGeometry(64, 256, 1, 1, 56, 56, 2, 2, 1, 1)
    assert not wide_gemm(cpu, strided)
