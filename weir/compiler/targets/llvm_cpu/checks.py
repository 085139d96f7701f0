"""Checked reads in a body on the llvm-cpu target: `extract` (tensor.extract, the gathers that
torch-mlir writes for embeddings, index_select and gather) reads its captured tensor at indices
the body computed, each compared with its dimension first, so an index out of range fails the
dispatch (`EntryLowering.fail_unless`: the entry returns the check's number and writes the
dimension, index and size into its fault record) instead of reading past the tensor.

The read itself is an ordinary element of the captured value: a load from its binding, or the
producer computed at that index when it is elementwise. Where the extract's last index is the
innermost loop and its other indices do not change along it (an embedding row), LLVM proves the
inner check from the loop bound, unswitches the invariant ones, and the row copy vectorises."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generator

import llvmlite.ir as ir

from weir.compiler.targets.llvm_cpu.kernel_values import GenericView, ValueRef
from weir.compiler.targets.llvm_cpu.loops import I64

if TYPE_CHECKING:
    from weir.compiler.targets.llvm_cpu.lower_entry import EntryLowering


def emit_extract(low: EntryLowering, b: ir.IRBuilder, view: GenericView, j: int,
                 indices: list[ir.Value]) -> Generator[tuple[ValueRef, list[ir.Value]], Any,
                                                       ir.Value]:
    """Body op `j` of `view` (an `extract`) at `indices` (i64): each index checked, then the
    element asked for like any other operand's."""
    op = view.body[j]
    table = view.captures[int(op.attr)]  # type: ignore[arg-type]
    for d, (index, size) in enumerate(zip(indices, low.dims(table))):
        # Unsigned: a negative index is a huge one, so one compare covers both ends.
        low.fail_unless(b, b.icmp_unsigned("<", index, size), view.check_of[j],
                        (I64(d), index, size))
    value = yield table, list(indices)
    return value  # type: ignore[no-any-return]
