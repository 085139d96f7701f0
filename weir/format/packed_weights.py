"""Constant weights stored in the layout a llvm-cpu microkernel reads: the contract between
global-optimization, which packs them (pack_matmul_weights.py, pack_conv_filters.py), and the
llvm-cpu target, which recognises the packed form on a binding and reads it in place.

A packed constant P is read back as `collapse_shape(transpose(P, permutation))`, which is the
original weight again, so every other target computes with it as before. The permutation puts
the two parts of the split dimension (panel, column within the panel) side by side and the
collapse joins them.

Where NR does not divide the split dimension, the last panel is padded with zeros and the
collapse is followed by `extract_slice` of the original's extent (offsets zero, unit steps):
kernels read whole panels, and the zero columns they compute are never stored (a classifier's
1000 outputs are 31 panels of 32 and one of 8)."""

from __future__ import annotations

import numpy as np

MATMUL_PANELS_PERMUTATION = [1, 0, 2]
"""K x N matmul weights as P x K x NR panels: panel p holds columns p*NR .. p*NR+NR-1."""
MATMUL_COLLAPSE_GROUPS = [[0], [1, 2]]
"""The collapse of the transposed panels (K x P x NR) back into K x N."""

CONV_PANEL_LINES = "HWC"
"""A convolution filter as P x KH x KW x C x NR panels: panel p holds output channels
p*NR .. p*NR+NR-1, one line of NR channels per window tap and input channel."""


def panels(extent: int, nr: int) -> int:
    """Panels of nr for `extent` columns, the last one padded."""
    return -(-extent // nr)


def _padded(values: np.ndarray, nr: int) -> np.ndarray:
    """`values` with zero columns appended to its last dimension up to a multiple of nr."""
    extra = panels(values.shape[-1], nr) * nr - values.shape[-1]
    if not extra:
        return values
    return np.pad(values, [(0, 0)] * (values.ndim - 1) + [(0, extra)])


def matmul_panels(weights: np.ndarray, nr: int) -> np.ndarray:
    """K x N weights as contiguous P x K x NR panels (zero columns past N)."""
    k, n = weights.shape
    return np.ascontiguousarray(
        _padded(weights, nr).reshape(k, panels(n, nr), nr).transpose(1, 0, 2))


def matmul_panels_shape(k: int, n: int, nr: int) -> list[int]:
    return [panels(n, nr), k, nr]


def conv_panels(values: np.ndarray, layout: str, nr: int) -> np.ndarray:
    """A filter with dimensions named by `layout` (a permutation of "HWCF") as contiguous
    P x KH x KW x C x NR panels (zero channels past F)."""
    hwcf = values.transpose([layout.index(d) for d in "HWCF"])
    h, w, c, f = hwcf.shape
    return np.ascontiguousarray(
        _padded(hwcf, nr).reshape(h, w, c, panels(f, nr), nr).transpose(3, 0, 1, 2, 4))


def conv_panels_shape(sizes: dict[str, int], nr: int) -> list[int]:
    """The panels' shape for a filter of `sizes` (by dimension letter)."""
    return [panels(sizes["F"], nr), *(sizes[d] for d in CONV_PANEL_LINES), nr]


def conv_panels_permutation(layout: str) -> list[int]:
    """The transpose of the panels that orders them as `layout`, F split into (P, NR)."""
    dims = {"F": [0, 4]} | {d: [1 + CONV_PANEL_LINES.index(d)] for d in CONV_PANEL_LINES}
    return [i for d in layout for i in dims[d]]


def conv_collapse_groups(layout: str) -> list[list[int]]:
    """The collapse of the transposed panels back into the filter's dimensions."""
    groups: list[list[int]] = []
    at = 0
    for d in layout:
        width = 2 if d == "F" else 1
        groups.append(list(range(at, at + width)))
        at += width
    return groups
