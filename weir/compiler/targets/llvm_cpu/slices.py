"""Slices and inserts on the llvm-cpu target.

A slice is an index remapping (offset + i * stride per dimension) inside whoever reads it, so a
slice feeding elementwise math costs no pass over memory. An insert is a root: one loop nest
copies the destination into the insert's memory (skipped when the destination is an empty tensor
or an earlier insert already writing that memory, see `KernelValues.in_place`), a second writes
the source over the window; a pad's, and a concat's chain of them, run in workgroups along
the outermost dimension when their windows cover it with unit steps. Both only ever touch
elements that exist, and windows that depend on push constants are listed for the runtime to
check before the code runs (`window_bounds`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import llvmlite.ir as ir

from weir.compiler.targets.llvm_cpu import scalars as s
from weir.compiler.targets.llvm_cpu.kernel_values import KernelValues
from weir.compiler.targets.llvm_cpu.loops import I64, for_nest, smax, smin
from weir.format import kernel_description as k
from weir.format.native_executable import WindowBounds

if TYPE_CHECKING:
    from weir.compiler.targets.llvm_cpu.lower_entry import EntryLowering


def window_index(low: EntryLowering, b: ir.IRBuilder, offsets: k.Shape, strides: k.Shape,
                 dropped: tuple[int, ...], idx: list[ir.Value]) -> list[ir.Value]:
    """The index in the full tensor of element `idx` of the window (which lacks `dropped`)."""
    full: list[ir.Value] = []
    it = iter(idx)
    for d, (offset, stride) in enumerate(zip(offsets, strides)):
        if d in dropped:
            full.append(low.dim(offset))
            continue
        x = next(it)
        if stride != 1:
            x = b.mul(x, low.dim(stride))
        if offset != 0:
            x = b.add(x, low.dim(offset))
        full.append(x)
    return full


def window_sizes(kv: KernelValues, op: k.Slice | k.InsertSlice) -> k.Shape:
    """The window's size per dimension of the full tensor."""
    if isinstance(op, k.Slice):
        return op.sizes
    source = iter(kv.shape[kv.ref(op.source)])
    return tuple(1 if d in op.dropped else next(source) for d in range(len(op.offsets)))


def window_bounds(kv: KernelValues) -> tuple[WindowBounds, ...]:
    """The windows the runtime must check: those with a push constant in them."""
    out: list[WindowBounds] = []
    for op in kv.ops:
        if isinstance(op, k.Slice | k.InsertSlice):
            full = kv.shape[kv.ref(op.input if isinstance(op, k.Slice) else op.dest)]
            for w in map(WindowBounds, op.offsets, window_sizes(kv, op), op.strides, full):
                if any(isinstance(d, k.PushDim) for d in (w.offset, w.size, w.stride, w.extent)):
                    out.append(w)
    return tuple(out)


def lower_insert_slice(low: EntryLowering, b: ir.IRBuilder, n: int,
                       partitioned: bool) -> tuple[k.Dim, int]:
    """Inserts are data movement, their loops kept rolled (a chain of small static inserts,
    fully unrolled, is one huge block that LLVM's codegen takes seconds over). A lone insert
    that its dispatch may split (a pad: its fill and its insert) runs in workgroups along the
    destination's outermost dimension when the window spans that dimension whole (a pad of
    H and W splits over N or C) or covers it with unit steps from a static offset (a pad of
    an NHWC image splits over H: each workgroup fills its rows and copies the source rows
    that land in them), so every thread fills and copies its part; other inserts run as one
    workgroup."""
    kv = low.kv
    op = kv.ops[n]
    assert isinstance(op, k.InsertSlice)
    dest = kv.ref(op.dest)
    if partitioned and kv.shape[dest]:  # (a rank-0 destination has nothing to split)
        split, extent, tile = low.grid(kv.shape[dest], 1)
        if _unit_steps(kv, op, split):
            _insert(low, b, n, (split, low.partition_bounds(b, low.dim(extent), tile)))
            return extent, tile
    _insert(low, b, n, None)
    return 1, 1


def lower_insert_chain(low: EntryLowering, b: ir.IRBuilder,
                       chain: list[int]) -> tuple[k.Dim, int] | None:
    """A concat: inserts each into the one before (`KernelValues.in_place`), so that they
    write one tensor. When every window covers the destination's outermost dimension with
    unit steps (a concat of NHWC images along C, split over H), the chain runs in workgroups
    along it, each workgroup copying the rows of every source that land in its range; None
    when some window does not (the chain then runs as one workgroup)."""
    kv = low.kv
    ops = [kv.ops[n] for n in chain]
    shape = kv.shape[kv.ref(ops[0].dest)]  # type: ignore[union-attr]
    if not shape:
        return None
    split, extent, tile = low.grid(shape, 1)
    if not all(isinstance(op, k.InsertSlice) and _unit_steps(kv, op, split) for op in ops):
        return None
    span = low.partition_bounds(b, low.dim(extent), tile)
    for n in chain:
        _insert(low, b, n, (split, span))
    return extent, tile


def _insert(low: EntryLowering, b: ir.IRBuilder, n: int,
            split: tuple[int, tuple[ir.Value, ir.Value]] | None) -> None:
    """Insert `n` into its memory: the destination copied there (unless it already is there,
    or is an empty tensor), then the source over the window; with a `split` (dimension,
    range), only the destination's part in that range of the dimension, whose window the
    dimension covers with unit steps from a static offset (`_unit_steps`)."""
    from weir.compiler.targets.llvm_cpu.element_eval import Body
    kv = low.kv
    op = kv.ops[n]
    assert isinstance(op, k.InsertSlice)
    mem = low.memory[(n, 0)]
    dest, source = kv.ref(op.dest), kv.ref(op.source)
    dest_bounds = [(I64(0), d) for d in low.dims(dest)]
    source_bounds = [(I64(0), d) for d in low.dims(source)]
    if split is not None:
        p, (lo, hi) = split
        dest_bounds[p] = (lo, hi)
        offset = I64(op.offsets[p])
        source_bounds[p] = (smax(b, b.sub(lo, offset), I64(0)),
                            smin(b, b.sub(hi, offset), source_bounds[p][1]))
    if low.memory.get(dest) is not mem and not isinstance(kv.ops[dest[0]], k.Empty):
        def copy(bb: ir.IRBuilder, idx: list[ir.Value]) -> None:
            s.store_element(bb, low.element(bb, dest, idx, Body()), mem.address(bb, idx),
                            mem.dtype)
        for_nest(b, dest_bounds, copy, "dest", unroll=False)

    def place(bb: ir.IRBuilder, idx: list[ir.Value]) -> None:
        at = window_index(low, bb, op.offsets, op.strides, op.dropped, idx)
        s.store_element(bb, low.element(bb, source, idx, Body()), mem.address(bb, at), mem.dtype)

    run = s.write_ahead_bytes(*source_bounds[-1], mem.dims, mem.dtype) \
        if source_bounds and op.strides[-1] == 1 else None

    def ahead(bb: ir.IRBuilder, outer: list[ir.Value]) -> None:
        assert run is not None
        at = window_index(low, bb, op.offsets, op.strides, op.dropped,
                          outer + [source_bounds[-1][0]])
        s.prefetch_run_for_write(bb, mem.address(bb, at), run)
    for_nest(b, source_bounds, place, "src", unroll=False, per_run=ahead if run else None)


def _unit_steps(kv: KernelValues, op: k.InsertSlice, p: int) -> bool:
    """Whether the window's part of the destination's dimension `p` is a run of consecutive
    elements from a static offset, in a destination of a static size of more than one."""
    dest, source = kv.shape[kv.ref(op.dest)], kv.shape[kv.ref(op.source)]
    return not op.dropped and len(dest) == len(source) and isinstance(dest[p], int) and \
        dest[p] > 1 and isinstance(op.offsets[p], int) and op.strides[p] == 1
