"""The direct convolution kernel prefetches its filter panel one chunk of taps ahead, and only in
a range's first block of pixels: that block streams the panel from memory (a network's weights
are cold on every call), the blocks after it find the panel in L2, where a prefetch would only
take load slots from the multiply-adds. Results are checked by tests/e2e/test_conv_direct.py
(its deep-c case runs two blocks of pixels, so both kinds of loop)."""

from __future__ import annotations

import re

from lowered import lowered_entry

from weir.compiler.targets.llvm_cpu.conv_blocking import chunk_taps, conv_tile, ConvGeometry
from weir.compiler.targets.llvm_cpu.machine import resolve_cpu

CONV = """
func.func @f(%x: tensor<1x58x58x64xf32>, %w: tensor<3x3x64x64xf32>) -> tensor<1x56x56x64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x56x56x64xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<1x56x56x64xf32>) -> tensor<1x56x56x64xf32>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x58x58x64xf32>, tensor<3x3x64x64xf32>)
      outs(%i : tensor<1x56x56x64xf32>) -> tensor<1x56x56x64xf32>
  return %c : tensor<1x56x56x64xf32>
}
"""


def _kernel_ir(cpu_name: str) -> str:
    """The LLVM IR (before optimisation) of the convolution's row kernel."""
    text = str(lowered_entry(CONV, cpu_name=cpu_name).module)
    start = text.index('define internal void @"weir_entry.conv')
    return text[start:text.index("\n}\n", start)]


def _inner_loops(kernel: str) -> list[str]:
    """The bodies of the loops over input channels (the multiply-adds)."""
    return re.findall(r'\nci\.body(?:\.\d+)?:\n(.*?)\n\s*br label %"ci\.header(?:\.\d+)?"',
                      kernel, re.S)


def test_prefetch_one_chunk_ahead_in_the_first_block_only() -> None:
    for cpu_name in ("host", "x86-64"):
        kernel = _kernel_ir(cpu_name)
        cpu = resolve_cpu(cpu_name)
        # The same panel line one chunk on (test_conv_chunks.py checks the chunks' sizes).
        geometry = ConvGeometry(64, 64, 3, 3, 56, 56, 1, 1, 1, 1)
        tile = conv_tile(cpu, geometry)
        width = tile.nr
        ahead = chunk_taps(geometry, width, tile.mr) * 64 * width
        loops = _inner_loops(kernel)
        prefetching = [body for body in loops if "llvm.prefetch" in body]
        assert prefetching and len(prefetching) < len(loops), cpu_name
        for body in prefetching:
            offsets = {int(o) for o in re.findall(
                r'getelementptr float, float\* %"[.\w]+", i64 (\d+)\n[^\n]*bitcast[^\n]*\n'
                r'\s*call void @"llvm.prefetch', body)}
            # Every 64-byte line of the panel line `ahead` elements on, no other address.
            assert offsets == set(range(ahead, ahead + width, 16)), (cpu_name, offsets)
        plain = [body for body in loops if "llvm.prefetch" not in body]
        assert all("fmuladd" in body for body in plain + prefetching)
