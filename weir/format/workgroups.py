"""How many workgroups a dispatch runs: the contract between a target that splits an entry
point's iteration space and the host program that dispatches it.

Like IREE's per-export workgroup-count region, the split belongs to the code generated for the
entry point: the target records it with the executable (`hal.executable.binary`'s
`workgroup_grids`, and in its payload), the compiler computes the count in the host program
from it (a constant, or from the push constant that carries the split dimension), and the
dispatch passes that count to the loader, which runs exactly that many workgroups after checking
that it is the grid its code was generated for (a count that is not would leave part of the
result unwritten, or run past it). A target without a grid (the reference target runs the whole
iteration space at once) accepts any count."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from weir.format.kernel_description import Dim, PushDim


@dataclass(frozen=True)
class WorkgroupGrid:
    """ceil(extent / tile) workgroups along one dimension (x; y and z are 1), `extent` a static
    size or the value of a push constant."""

    extent: Dim
    tile: int

    def count(self, constants: Sequence[int]) -> int:
        extent = constants[self.extent.index] if isinstance(self.extent, PushDim) else self.extent
        return -(-extent // self.tile)

    def describe(self) -> str:
        """The grid as the host program computes it, for messages."""
        extent = f"push constant {self.extent.index}" if isinstance(self.extent, PushDim) \
            else str(self.extent)
        return extent if self.tile == 1 else f"ceil({extent} / {self.tile})"


def workgroup_total(workgroups: Sequence[int]) -> int:
    """The number of workgroups an x, y, z count names."""
    total = 1
    for w in workgroups:
        total *= int(w)
    return total
