"""How many output rows of a channels-last 1x1 convolution one GEMM call takes: enough that its
output (and its input, when that is an expression computed into scratch) fills CHUNK_BYTES, and
at least as many pixels as channels when the filter is too large to stay in L2."""

from __future__ import annotations

from weir.compiler.targets.llvm_cpu.pointwise_conv import CHUNK_BYTES, chunk_rows


def test_an_input_in_memory_leaves_the_chunk_to_the_output() -> None:
    # ResNet-50's 1024 -> 256 channels at 14 x 14: 18 rows of output, not 4 rows of input.
    assert chunk_rows(14, 256, 1024, input_in_memory=True) == CHUNK_BYTES // (4 * 14 * 256)
    assert chunk_rows(14, 256, 1024, input_in_memory=True) == 18


def test_an_input_computed_into_scratch_counts_too() -> None:
    assert chunk_rows(14, 256, 1024, input_in_memory=False) == CHUNK_BYTES // (4 * 14 * 1024)
    assert chunk_rows(56, 256, 64, input_in_memory=False) == \
        chunk_rows(56, 256, 64, input_in_memory=True)  # more output than input: the same


def test_a_filter_too_large_for_l2_takes_as_many_pixels_as_channels() -> None:
    # SqueezeNet's last convolution: 512 -> 1000 over 13 x 13, a 2 MB filter.
    assert chunk_rows(13, 1000, 512, input_in_memory=True) == -(-512 // 13)


def test_a_chunk_is_at_least_one_row() -> None:
    assert chunk_rows(4096, 4096, 4096, input_in_memory=True) >= 1
