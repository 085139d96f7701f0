"""Constant weights stored in the layout a llvm-cpu microkernel reads: the contract between
global-optimization, which packs them (pack_matmul_weights.py, pack_conv_filters.py), and the
llvm-cpu target, which recognises the packed form on a binding and reads it in place.

A packed constant P is read back as `collapse_shape(transpose(P, permutation))`, which is the
original weight again, so every other target computes with it as before. The permutation puts
the two parts of the split dimension (panel, column within the panel) side by side and the
collapse joins them."""

from __future__ import annotations

import numpy as np

MATMUL_PANELS_PERMUTATION = [1, 0, 2]
"""K x N matmul weights as P x K x NR panels: panel p holds columns p*NR .. p*NR+NR-1."""
MATMUL_COLLAPSE_GROUPS = [[0], [1, 2]]
"""The collapse of the transposed panels (K x P x NR) back into K x N."""

CONV_PANEL_LINES = "HWC"
"""A convolution filter as P x KH x KW x C x NR panels: panel p holds output channels
p*NR .. p*NR+NR-1, one line of NR channels per window tap and input channel."""


def matmul_panels(weights: np.ndarray, nr: int) -> np.ndarray:
    """K x N weights (N a multiple of nr) as contiguous P x K x NR panels."""
    k, n = weights.shape
    return np.ascontiguousarray(weights.reshape(k, n // nr, nr).transpose(1, 0, 2))


def matmul_panels_shape(k: int, n: int, nr: int) -> list[int]:
    return [n // nr, k, nr]


def conv_panels(values: np.ndarray, layout: str, nr: int) -> np.ndarray:
    """A filter with dimensions named by `layout` (a permutation of "HWCF", F a multiple of nr)
    as contiguous P x KH x KW x C x NR panels."""
    hwcf = values.transpose([layout.index(d) for d in "HWCF"])
    h, w, c, f = hwcf.shape
    return np.ascontiguousarray(hwcf.reshape(h, w, c, f // nr, nr).transpose(3, 0, 1, 2, 4))


def conv_panels_shape(sizes: dict[str, int], nr: int) -> list[int]:
    """The panels' shape for a filter of `sizes` (by dimension letter)."""
    return [sizes["F"] // nr, *(sizes[d] for d in CONV_PANEL_LINES), nr]


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
