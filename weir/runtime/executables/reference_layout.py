"""Moving operands between their own layout and the iteration space of a `Generic`.

In "loop space" an array has one axis per loop, in loop order; an operand that does not vary
along a loop has a size-1 axis there, so numpy broadcasting does the rest."""

from __future__ import annotations

from typing import Sequence

import numpy as np


def to_loop_space(arr: np.ndarray, amap: Sequence[int], nloops: int) -> np.ndarray:
    """A view (no copy) of `arr` laid out on the loops; -1 map entries take index 0, and a loop
    that indexes several dimensions reads their diagonal."""
    picked = arr[tuple(0 if d < 0 else slice(None) for d in amap)]
    loops = [d for d in amap if d >= 0]
    if len(set(loops)) != len(loops):
        moved = np.einsum(picked, loops, sorted(set(loops)))
    else:
        moved = picked.transpose(sorted(range(len(loops)), key=lambda i: loops[i]))
    missing = tuple(sorted(set(range(nloops)) - set(loops)))
    return np.expand_dims(moved, missing) if missing else moved


def from_loop_space(value: np.ndarray, omap: Sequence[int], sizes: Sequence[int],
                    parallel: Sequence[bool]) -> np.ndarray:
    """The output operand laid out by `omap`, from a loop-space value whose non-parallel axes
    are already size 1 (reduced with keepdims) or absent by broadcasting."""
    target = [s if p else 1 for s, p in zip(sizes, parallel)]
    full = np.broadcast_to(value, target)
    kept = full[tuple(slice(None) if p else 0 for p in parallel)]
    parallel_loops = [l for l, p in enumerate(parallel) if p]
    out_loops = [d for d in omap if d >= 0]
    moved = kept.transpose([parallel_loops.index(d) for d in out_loops])
    ones = tuple(j for j, d in enumerate(omap) if d < 0)
    return np.expand_dims(moved, ones) if ones else moved
