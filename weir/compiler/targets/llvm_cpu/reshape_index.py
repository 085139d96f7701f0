"""Where an element of a reshaped tensor lies in the tensor it reshapes, as LLVM IR index
arithmetic: the per-element form of `tensor.collapse_shape` / `expand_shape` in a kernel."""

from __future__ import annotations

from collections.abc import Sequence

import llvmlite.ir as ir

from weir.compiler.targets.llvm_cpu.loops import I64


def reshaped_index(b: ir.IRBuilder, idx: list[ir.Value], shape: tuple[int, ...],
                   source: list[ir.Value]) -> list[ir.Value]:
    """The source index of element `idx` of a reshape to `shape`: the row-major position,
    split over the source's dims (constant sizes, so the divisions become multiplies). Done
    per group of dimensions whose sizes multiply to the same (all of them when a size is
    not static), so a dimension the reshape keeps maps to itself: the rows of a collapsed
    image read as pixels do their divisions once per row, not once per element."""
    sizes = [d.constant if isinstance(d, ir.Constant) else None for d in source]
    groups = _reshape_groups(shape, sizes) if None not in sizes else None  # type: ignore[arg-type]
    if groups is None:
        groups = [(0, len(shape), 0, len(source))]
    src: list[ir.Value] = []
    for i0, i1, j0, j1 in groups:
        linear: ir.Value = I64(0)
        for x, d in zip(idx[i0:i1], shape[i0:i1]):
            linear = b.add(b.mul(linear, I64(d)), x) if d != 1 else linear
        part: list[ir.Value] = []
        for d in reversed(source[j0:j1]):
            if isinstance(d, ir.Constant) and d.constant == 1:
                part.append(I64(0))
                continue
            part.append(b.urem(linear, d))
            linear = b.udiv(linear, d)
        src.extend(part[::-1])
    return src


def _reshape_groups(shape: Sequence[int], source: Sequence[int]
                    ) -> list[tuple[int, int, int, int]] | None:
    """Runs [i0, i1) of `shape` and [j0, j1) of `source` whose sizes multiply to the same, in
    order (each a reassociation group of the reshape), or None when they do not line up."""
    groups: list[tuple[int, int, int, int]] = []
    i = j = 0
    while i < len(shape) or j < len(source):
        i0, j0 = i, j
        if i >= len(shape) or j >= len(source):
            if any(d != 1 for d in shape[i:]) or any(d != 1 for d in source[j:]):
                return None
            groups.append((i0, len(shape), j0, len(source)))
            break
        pd, ps = shape[i], source[j]
        i, j = i + 1, j + 1
        while pd != ps:
            if pd < ps and i < len(shape):
                pd, i = pd * shape[i], i + 1
            elif ps < pd and j < len(source):
                ps, j = ps * source[j], j + 1
            else:
                return None
        groups.append((i0, i, j0, j))
    return groups
