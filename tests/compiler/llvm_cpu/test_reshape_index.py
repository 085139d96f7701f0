"""The per-element form of a reshape on llvm-cpu splits its index arithmetic by reassociation
group, so a dimension the reshape keeps maps to itself (the rows of a collapsed NHWC image
divide once per row, not once per element); sizes that only line up as a whole are one group,
one linear position, as before. (The values it computes: tests/e2e/test_tensor_reshapes.py.)"""

from __future__ import annotations

import pytest

from weir.compiler.targets.llvm_cpu.reshape_index import _reshape_groups


@pytest.mark.parametrize("shape, source, groups", [
    ((3136, 192), (1, 56, 56, 192), [(0, 1, 0, 3), (1, 2, 3, 4)]),
    ((1, 56, 56, 192), (3136, 192), [(0, 3, 0, 1), (3, 4, 1, 2)]),
    ((6, 4), (2, 3, 4), [(0, 1, 0, 2), (1, 2, 2, 3)]),
    ((4, 1, 6), (4, 6), [(0, 1, 0, 1), (1, 3, 1, 2)]),
    ((4, 6), (4, 6, 1), [(0, 1, 0, 1), (1, 2, 1, 2), (2, 2, 2, 3)]),
    ((6, 4), (4, 6), [(0, 2, 0, 2)]),
    ((2, 3), (7,), None),
])
def test_groups(shape: tuple[int, ...], source: tuple[int, ...],
                groups: list[tuple[int, int, int, int]] | None) -> None:
    assert _reshape_groups(shape, source) == groups
