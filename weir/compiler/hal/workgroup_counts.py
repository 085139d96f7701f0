"""Each dispatch's workgroup count in the host program, from the grid its target split the
entry point into (`hal.executable.binary`'s `workgroup_grids`, weir/format/workgroups.py), as
IREE computes a dispatch's count from its export's workgroup-count region."""

from __future__ import annotations

from weir.dialects import hal
from weir.format.kernel_description import PushDim
from weir.format.workgroups import WorkgroupGrid
from weir.ir.diagnostics import error_at
from weir.ir.upstream import arith, Builder, IndexType, IntegerAttr, ModuleOp, SSAValue


def entry_grids(module: ModuleOp) -> dict[tuple[str, str], WorkgroupGrid]:
    """Each entry point's workgroup grid, from the binaries that split into workgroups (a
    binary without grids runs any count); binaries that split differently cannot share one
    count, as weir's host program computes the count before knowing which binary loads."""
    grids: dict[tuple[str, str], WorkgroupGrid] = {}
    for op in module.body.block.ops:
        if not isinstance(op, hal.ExecutableOp):
            continue
        for binary in op.body.block.ops:
            found = binary.grids() if isinstance(binary, hal.ExecutableBinaryOp) else None
            if found is None:
                continue
            for name, grid in zip(binary.entry_points.data, found):
                key = (op.sym_name.data, name.data)
                if grids.setdefault(key, grid) != grid:
                    raise error_at(binary, f"the targets of executable '{key[0]}' split entry "
                                           f"point '{key[1]}' into different workgroup grids "
                                           f"({grids[key].describe()} and {grid.describe()})")
    return grids


def workgroup_count(grid: WorkgroupGrid | None, constants: list[SSAValue],
                    b: Builder) -> SSAValue:
    """The x count of `grid` (1 without one): a constant, or ceil(push constant / tile)
    computed by the host when the split dimension is only known at run time."""
    if grid is None:
        return index_constant(b, 1)
    if not isinstance(grid.extent, PushDim):
        return index_constant(b, grid.count(()))
    value = constants[grid.extent.index]
    known = value.owner
    if isinstance(known, arith.ConstantOp) and isinstance(known.value, IntegerAttr):
        return index_constant(b, grid.count([0] * grid.extent.index + [known.value.value.data]))
    if grid.tile == 1:
        return value
    return b.insert(arith.CeilDivUIOp(value, index_constant(b, grid.tile))).result


def index_constant(b: Builder, value: int) -> SSAValue:
    """An `index` constant inserted at `b` (the host lowering's counts and offsets)."""
    return b.insert(arith.ConstantOp(IntegerAttr(value, IndexType()))).result
