"""Row pipelines on the llvm-cpu target: an entry whose roots are reductions over the same rows
(a softmax's maximum and sum, a layernorm's mean and variance; flow's fuse-row-reductions joins
them), each reading the ones before only at the row it computes, runs row by row. For each row,
each root reduces it in turn and the epilogue stores it, while the row is in L1: the input is
read from memory once and the result written once, where one dispatch per reduction wrote the
values between them to memory and read them back. Workgroups split the rows.

Roots run as reduction.py lowers them, on the loop nest of one row; the last root's epilogue
(epilogue.py) follows each of its elements, so a softmax's exponentials are kept in the result
row by the sum and divided there (reduction.py's kept input)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import llvmlite.ir as ir

from weir.compiler.targets.llvm_cpu import scalars as s
from weir.compiler.targets.llvm_cpu.epilogue import plan_epilogue
from weir.compiler.targets.llvm_cpu.kernel_values import KernelValues, reads, ValueRef
from weir.compiler.targets.llvm_cpu.loops import I64, for_nest
from weir.compiler.targets.llvm_cpu.reduction import loop_sizes, lower_reduction
from weir.format import kernel_description as k

if TYPE_CHECKING:
    from weir.compiler.targets.llvm_cpu.element_eval import Memory
    from weir.compiler.targets.llvm_cpu.lower_entry import EntryLowering


def row_count(kv: KernelValues, roots: list[int], stores: list[k.Store]) -> int | None:
    """P, when every root (one at least) is a one-result reduction whose P leading loops are
    parallel and index its result (then constant zeros), all over the same row sizes, and every
    value computed from a root (by a later root, or stored) is read at the row being computed:
    its P leading dimensions indexed by the reader's P leading loops."""
    if not roots:
        return None
    rows: tuple[k.Dim, ...] | None = None
    p = 0
    for n in roots:
        view = kv.views.get(n)
        if view is None or not view.reduces or len(view.outputs) != 1:
            return None
        kinds = view.iterators
        own = next((i for i, kind in enumerate(kinds) if kind != "parallel"), len(kinds))
        written = view.maps[len(view.inputs)]
        if any(kind == "parallel" for kind in kinds[own:]) or own == 0 or \
                tuple(written[:own]) != tuple(range(own)) or any(d >= 0 for d in written[own:]):
            return None
        sizes = tuple(loop_sizes(kv, view)[:own])
        if rows is None:
            rows, p = sizes, own
        elif sizes != rows:
            return None
    row_aligned = _row_aligned(kv, set(roots), p)
    values = [kv.ref(st.value) for st in stores]
    if any(v not in row_aligned for v in values):
        return None
    return p


def _row_aligned(kv: KernelValues, roots: set[int], p: int) -> set[ValueRef]:
    """The values computed from roots whose P leading dimensions are the row, read only at the
    row of whoever reads them; values that read no root are left out (any index is safe), and
    so are values read elsewhere (their users then fail too)."""
    aligned: set[ValueRef] = set()
    tainted: set[ValueRef] = set()  # computed from a root, not at the row
    marked: set[int] = set()  # the ops whose values are aligned or tainted
    for n, op in enumerate(kv.ops):
        view = kv.views.get(n)
        if view is not None:
            operands = view.inputs + view.outputs + view.captures
            outs = [(n, i) for i in range(len(view.outputs))]
            if any(v in tainted for v in operands):
                tainted.update(outs)
                marked.add(n)
                continue
            reading = [j for j, v in enumerate(view.inputs + view.outputs) if v in aligned]
            captured = any(v in aligned for v in view.captures)
            if not reading and n not in roots and not captured:
                continue
            ok = not captured and len(view.iterators) >= p and \
                all(view.iterators[d] == "parallel" for d in range(p)) and \
                all(tuple(view.maps[j][:p]) == tuple(range(p)) for j in reading) and \
                all(tuple(view.maps[len(view.inputs) + i][:p]) == tuple(range(p))
                    for i in range(len(view.outputs)))
            (aligned if ok else tainted).update(outs)
            marked.add(n)
            continue
        if isinstance(op, k.Store):
            continue
        source = kv.ref(op.input) if isinstance(op, (k.Reshape, k.Broadcast)) else None
        # Row-major: equal leading sizes keep each element of a reshape in its row; a
        # broadcast keeps it when it adds no leading dimension.
        if source in aligned and kv.shape[(n, 0)][:p] == kv.shape[source][:p] and \
                not (isinstance(op, k.Broadcast) and any(d < p for d in op.dimensions)):
            aligned.add((n, 0))
            marked.add(n)
            continue
        if isinstance(op, k.Result):
            if kv.ref(n) in aligned | tainted:
                marked.add(n)  # readers name the result op, not its producer
            continue
        if any(reads(op, m) for m in marked):
            tainted.add((n, 0))
            marked.add(n)
    return aligned


def lower_rows(low: EntryLowering, b: ir.IRBuilder, roots: list[int], p: int,
               stores: list[k.Store]) -> tuple[k.Dim, int]:
    """The entry as row-by-row loops. The stores are the last root's epilogue when they read
    it as one (epilogue.py: a softmax's division then finds the exponentials kept in place);
    otherwise each row's part of every store follows the row's roots."""
    from weir.compiler.targets.llvm_cpu.element_eval import Body
    kv = low.kv
    finishing = bool(stores) and plan_epilogue(low, b, roots[-1], stores)
    targets = [] if finishing else [low.store_memory(b, st) for st in stores]
    for n in roots:
        if (n, 0) not in low.memory:  # one value per row: small
            low.memory[(n, 0)] = low.scratch_memory(b, kv.dtype[(n, 0)], low.dims((n, 0)))
    first = kv.views[roots[0]]
    shape = tuple(loop_sizes(kv, first)[:p])
    per_row = sum(math.prod(d if isinstance(d, int) else 1024
                            for d in loop_sizes(kv, kv.views[n])[p:]) for n in roots)
    q, extent, tile = low.grid(shape, per_row)
    bounds = [(I64(0), low.dim(d)) for d in shape]
    bounds[q] = low.partition_bounds(b, low.dim(extent), tile)

    def row(rb: ir.IRBuilder, idx: list[ir.Value]) -> None:
        one = [(x, rb.add(x, I64(1))) for x in idx]
        for n in roots:
            lower_reduction(low, rb, n, False, rows=one)
        for v, mem in targets:
            def store(sb: ir.IRBuilder, at: list[ir.Value], v: ValueRef = v,
                      mem: Memory = mem) -> None:
                s.store_element(sb, low.element(sb, v, at, Body()), mem.address(sb, at),
                                mem.dtype)
            for_nest(rb, one + [(I64(0), d) for d in mem.dims[p:]], store, "st")
    for_nest(b, bounds, row, "row")
    return extent, tile
