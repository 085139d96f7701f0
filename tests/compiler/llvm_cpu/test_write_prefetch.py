"""Memory-bound llvm-cpu loops fetch their output lines for ownership ahead of their stores: a
concat's copies and an elementwise dispatch WRITE_AHEAD_BYTES ahead of each run they write, a
depthwise convolution the next output row's line after each store. In a call, the output of a
dispatch is memory no recent dispatch touched, and a store to a line not in cache waits for it
(SqueezeNet's concats took 1.3-1.5x the time they take with their output in cache). Stores
without such prefetches fail this test; results are checked by the e2e tests of each kernel."""

from __future__ import annotations

import re

from lowered import lowered_entry

from weir.compiler.targets.llvm_cpu.scalars import WRITE_AHEAD_BYTES

# A write prefetch (rw = 1) with the most locality: PREFETCHW.
WRITE = re.compile(r'call void @"llvm\.prefetch\.p0"\(i8\* %"?[.\w]+"?, i32 1, i32 3, i32 1\)')

CONCAT = """
func.func @f(%a: tensor<1x9x9x64xf32>, %b: tensor<1x9x9x64xf32>) -> tensor<1x9x9x128xf32> {
  %c = tensor.concat dim(3) %a, %b : (tensor<1x9x9x64xf32>, tensor<1x9x9x64xf32>) -> tensor<1x9x9x128xf32>
  return %c : tensor<1x9x9x128xf32>
}
"""

ADD = """
func.func @f(%a: tensor<64x256xf32>, %b: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %c = arith.addf %a, %b : tensor<64x256xf32>
  return %c : tensor<64x256xf32>
}
"""

DEPTHWISE = """
func.func @f(%x: tensor<1x9x9x64xf32>, %w: tensor<3x3x64xf32>) -> tensor<1x7x7x64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x7x7x64xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<1x7x7x64xf32>) -> tensor<1x7x7x64xf32>
  %c = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x9x9x64xf32>, tensor<3x3x64xf32>) outs(%i : tensor<1x7x7x64xf32>) -> tensor<1x7x7x64xf32>
  return %c : tensor<1x7x7x64xf32>
}
"""


def _entry_ir(src: str) -> str:
    """The LLVM IR (before optimisation) of the program's one dispatch."""
    return str(lowered_entry(src).module)


def test_copies_and_elementwise_fetch_ahead_of_their_runs() -> None:
    for src in (CONCAT, ADD):
        text = _entry_ir(src)
        assert WRITE.search(text), src
        assert f"i64 {WRITE_AHEAD_BYTES}" in text, src


def test_small_outputs_and_long_runs_do_not_fetch_ahead() -> None:
    # 8 x 256 floats, 8 KiB: most lines 4 KiB ahead would lie past the end.
    assert not WRITE.search(_entry_ir(ADD.replace("64x256", "8x256")))
    # One run of 64K floats: a stream, fetched whole before its loop it would evict itself.
    assert not WRITE.search(_entry_ir(ADD.replace("64x256", "65536")))


def test_depthwise_fetches_the_next_rows_lines() -> None:
    text = _entry_ir(DEPTHWISE)
    # After each stored vector, the same channels one output row (7 x 64 elements) on.
    assert WRITE.search(text)
    assert re.search(r"getelementptr float, float\* %\"?[.\w]+\"?, i64 448\n", text)
