"""The direct convolution's register tiles take as many output pixels as divide the output row
when such a count is near the default (12 on AVX-512, 6 on 16-register targets), so that no
tile straddles two rows; rows shorter than the default are one tile each. Results for such
widths are checked by tests/e2e/test_conv_direct.py (its row-tiles and rows-and-images cases)."""

from __future__ import annotations

import pytest

from weir.compiler.targets.llvm_cpu.conv_blocking import tile_pixels
from weir.compiler.targets.llvm_cpu.machine import resolve_cpu

# Output widths of the zoo's networks and of the e2e cases, and the tile each gets.
AVX512 = {7: 7, 13: 13, 14: 14, 28: 14, 56: 14, 112: 14, 224: 14, 55: 11, 27: 9, 30: 10,
          4: 4, 1: 1, 17: 12, 111: 12, 37: 12}
SIXTEEN_REGISTERS = {7: 6, 13: 6, 14: 6, 28: 6, 55: 5, 30: 6, 5: 5, 2: 2, 17: 6, 111: 6}


@pytest.mark.parametrize("cpu_name, widths", [("x86-64-v4", AVX512),
                                              ("x86-64-v3", SIXTEEN_REGISTERS),
                                              ("x86-64", SIXTEEN_REGISTERS)],
                         ids=["avx512", "avx2", "sse2"])
def test_tiles_divide_the_row_when_they_can(cpu_name: str, widths: dict[int, int]) -> None:
    cpu = resolve_cpu(cpu_name)
    assert {w: tile_pixels(cpu, w) for w in widths} == widths
