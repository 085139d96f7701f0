"""Slices of the `reference` target: numpy basic indexing, so a slice is a view and an insert one
strided assignment, never a loop in Python. Every window is checked against its tensor first:
numpy would silently clip a window that runs past the end, where the llvm-cpu target's runtime
refuses the dispatch, and both targets must agree."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from weir.errors import RuntimeFault
from weir.format.kernel_description import InsertSlice, PushDim, Shape, Slice, window_error


def _values(dims: Shape, constants: Sequence[int]) -> list[int]:
    return [constants[d.index] if isinstance(d, PushDim) else d for d in dims]


def _window(shape: tuple[int, ...], offsets: list[int], sizes: list[int], strides: list[int],
            what: str) -> tuple[slice, ...]:
    index: list[slice] = []
    for d, (offset, size, stride, extent) in enumerate(zip(offsets, sizes, strides, shape)):
        problem = window_error(offset, size, stride, extent)
        if problem is not None:
            raise RuntimeFault(f"{what}: dimension {d}: {problem}")
        index.append(slice(offset, offset + size * stride, stride))
    return tuple(index)


def take_slice(op: Slice, x: np.ndarray, constants: Sequence[int], what: str) -> np.ndarray:
    """A view of the window; dropped dimensions are indexed away."""
    index = _window(x.shape, _values(op.offsets, constants), _values(op.sizes, constants),
                    _values(op.strides, constants), f"{what}: slice of {x.shape}")
    view = x[index]
    return view.reshape([s for d, s in enumerate(view.shape) if d not in op.dropped])


def insert_slice(op: InsertSlice, source: np.ndarray, dest: np.ndarray,
                 constants: Sequence[int], what: str) -> np.ndarray:
    """A copy of dest with the window replaced (dest may be a read-only view of a binding)."""
    window = np.expand_dims(source, op.dropped) if op.dropped else source
    index = _window(dest.shape, _values(op.offsets, constants), list(window.shape),
                    _values(op.strides, constants),
                    f"{what}: insert of {source.shape} into {dest.shape}")
    out = np.array(dest, copy=True)
    out[index] = window
    return out
