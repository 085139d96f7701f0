"""The strides of a reshape of strided memory (strided.py), against numpy, which reshapes a
strided array without copying exactly when such strides exist: collapses of contiguous runs,
expansions, unit dimensions anywhere, transposed sources, and the merges of non-contiguous
dimensions that have no strides."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from weir.compiler.targets.llvm_cpu.strided import _reshaped_strides


def numpy_strides(view: np.ndarray, shape: tuple[int, ...]) -> list[int] | None:
    """The element strides of `view` reshaped to `shape` without a copy, or None if numpy must
    copy."""
    try:
        reshaped = view.view()
        reshaped.shape = shape  # raises where no strides describe the reshape
    except AttributeError:
        return None
    return [s // view.itemsize for s in reshaped.strides]


def agree(view: np.ndarray, shape: tuple[int, ...]) -> None:
    strides = [s // view.itemsize for s in view.strides]
    got = _reshaped_strides(list(view.shape), strides, list(shape))
    want = numpy_strides(view, shape)
    if want is None:
        assert got is None
        return
    assert got is not None
    # Unit dimensions take any stride: their index is always 0.
    assert [g for g, n in zip(got, shape) if n != 1] == [w for w, n in zip(want, shape) if n != 1]


@pytest.mark.parametrize(("source", "shape"), [
    ((4, 6), (24,)), ((24,), (2, 3, 4)), ((2, 3, 4), (6, 4)), ((2, 3, 4), (2, 12)),
    ((1, 4, 1, 6), (4, 6)), ((4, 6), (1, 4, 6, 1)), ((4, 6), (2, 2, 3, 2)),
    ((2, 3, 4), (3, 8)), ((1, 1), (1,)), ((5,), (5,))])
def test_contiguous_sources(source: tuple[int, ...], shape: tuple[int, ...]) -> None:
    agree(np.zeros(source, np.float32), shape)


@pytest.mark.parametrize("permutation", list(itertools.permutations(range(4))))
def test_transposed_sources(permutation: tuple[int, ...]) -> None:
    base = np.zeros((4, 1, 3, 2), np.float32).transpose(permutation)
    n = base.shape
    for shape in [(n[0] * n[1], n[2], n[3]), (n[0], n[1] * n[2], n[3]), (n[0], n[1], n[2] * n[3]),
                  (24,), (n[0] * n[1] * n[2], n[3]), (n[0], n[1] * n[2] * n[3])]:
        agree(base, shape)


def test_a_window_of_rows() -> None:
    window = np.zeros((10, 8), np.float32)[2:7, ::2]
    agree(window, (5, 4, 1))
    agree(window, (20,))  # columns two apart: no stride for the merge
    agree(np.zeros((3, 8, 5), np.float32)[:, 1:4], (3, 15))
