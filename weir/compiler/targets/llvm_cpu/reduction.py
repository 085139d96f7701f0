"""Reductions on the llvm-cpu target: a generic (or reduce) with reduction iterators is a root,
lowered as a loop nest over its parallel dimensions (split into workgroups when it is the entry's
only nest) around an inner nest over the reduced ones, accumulating in registers. Its operands,
elementwise producers included, are computed per element inside the inner loop."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import llvmlite.ir as ir

from weir.compiler.targets.llvm_cpu import scalars as s
from weir.compiler.targets.llvm_cpu.epilogue import finish_block
from weir.compiler.targets.llvm_cpu.kernel_values import GenericView
from weir.compiler.targets.llvm_cpu.loops import I64, for_nest
from weir.format import reference_kernel as k

if TYPE_CHECKING:
    from weir.compiler.targets.llvm_cpu.lower_entry import EntryLowering


def lower_reduction(low: EntryLowering, b: ir.IRBuilder, n: int,
                    partitioned: bool) -> tuple[k.Dim, int]:
    from weir.compiler.targets.llvm_cpu.lower_entry import Body
    kv = low.kv
    view = kv.views[n]
    nin = len(view.inputs)
    sizes = _loop_sizes(low, view)
    out_map = view.maps[nin]
    parallel = [d for d in out_map if d >= 0]
    parallel += [d for d, it in enumerate(view.iterators)
                 if it == "parallel" and d not in parallel]
    reduction = [d for d, it in enumerate(view.iterators) if it != "parallel"]
    bounds = [(I64(0), low.dim(sizes[d])) for d in parallel]
    extent: k.Dim = 1
    tile = 1
    if partitioned and parallel:
        red_work = math.prod(sizes[d] if isinstance(sizes[d], int) else 1024 for d in reduction)
        shape = tuple(sizes[d] for d in parallel)
        p, extent, tile = low.grid(shape, red_work)
        bounds[p] = low.partition_bounds(b, low.dim(extent), tile)
    accs = [low.alloca(s.register_type(kv.dtype[o])) for o in view.outputs]

    def outer(bb: ir.IRBuilder, pidx: list[ir.Value]) -> None:
        loops: list[ir.Value] = [I64(0)] * len(view.iterators)
        for d, x in zip(parallel, pidx):
            loops[d] = x
        ctx = Body()
        for i, acc in enumerate(accs):
            bb.store(low.operand(bb, view, nin + i, loops, ctx), acc)

        def inner(ib: ir.IRBuilder, ridx: list[ir.Value]) -> None:
            full = list(loops)
            for d, x in zip(reduction, ridx):
                full[d] = x
            ictx = Body()
            current = [ib.load(a) for a in accs]
            for acc, value in zip(accs, low.evaluate(ib, view, full, ictx, current)):
                ib.store(value, acc)
        for_nest(bb, [(I64(0), low.dim(sizes[d])) for d in reduction], inner, "r")
        for i, (o, acc) in enumerate(zip(view.outputs, accs)):
            mem = low.memory.get((n, i))
            if mem is not None:
                out_idx = [loops[d] if d >= 0 else I64(0) for d in view.maps[nin + i]]
                s.store_element(bb, bb.load(acc), mem.address(bb, out_idx), mem.dtype)
                finish_block(low, bb, n, [(x, bb.add(x, I64(1))) for x in out_idx])
    for_nest(b, bounds, outer, "p")
    return extent, tile


def _loop_sizes(low: EntryLowering, view: GenericView) -> list[k.Dim]:
    sizes: list[k.Dim | None] = [None] * len(view.iterators)
    for v, amap in zip(view.inputs + view.outputs, view.maps):
        for j, d in enumerate(amap):
            if d >= 0 and sizes[d] is None:
                sizes[d] = low.kv.shape[v][j]
    return [1 if x is None else x for x in sizes]
