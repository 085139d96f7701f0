"""A transpose that moves the innermost dimension, as its own dispatch, is lowered to 8 x 8
register blocks (vector loads, shuffles, vector stores) instead of a loop that loads each
element on its own; one that keeps the innermost dimension in place stays the element loop.
Results: tests/e2e/test_transposed_copies.py."""

from __future__ import annotations

from lowered import lowered_entry


def _transpose(shape: tuple[int, ...], permutation: tuple[int, ...]) -> str:
    out = tuple(shape[p] for p in permutation)
    t = lambda s: f"tensor<{'x'.join(map(str, s))}xf32>"  # noqa: E731
    return f"""
    func.func @f(%x: {t(shape)}) -> {t(out)} {{
      %e = tensor.empty() : {t(out)}
      %r = linalg.transpose ins(%x : {t(shape)}) outs(%e : {t(out)}) permutation = {list(permutation)}
      return %r : {t(out)}
    }}"""


def test_nhwc_to_nchw_moves_blocks_through_registers() -> None:
    ir_text = str(lowered_entry(_transpose((1, 16, 16, 32), (0, 3, 1, 2))).module)
    assert "shufflevector" in ir_text and "load <8 x float>" in ir_text


def test_innermost_kept_stays_an_element_loop() -> None:
    ir_text = str(lowered_entry(_transpose((4, 16, 32), (1, 0, 2))).module)
    assert "shufflevector" not in ir_text
