"""Reductions on the llvm-cpu target: a generic (or reduce) with reduction iterators is a root,
lowered as a loop nest over its parallel dimensions (split into workgroups when it is the entry's
only nest) around an inner nest over the reduced ones, accumulating in registers. Its operands,
elementwise producers included, are computed per element inside the inner loop."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

import llvmlite.ir as ir

from weir.compiler.targets.llvm_cpu import scalars as s
from weir.compiler.targets.llvm_cpu.epilogue import finish_block, root_positions
from weir.compiler.targets.llvm_cpu.kernel_values import GenericView, KernelValues, ValueRef
from weir.compiler.targets.llvm_cpu.loops import I64, for_nest, for_range, smin
from weir.format import kernel_description as k

if TYPE_CHECKING:
    from weir.compiler.targets.llvm_cpu.element_eval import Memory
    from weir.compiler.targets.llvm_cpu.lower_entry import EntryLowering


def lower_reduction(low: EntryLowering, b: ir.IRBuilder, n: int, partitioned: bool,
                    rows: list[tuple[ir.Value, ir.Value]] | None = None) -> tuple[k.Dim, int]:
    """`rows`: bounds of the leading parallel loops (one row of a row pipeline) in place of
    their whole extent."""
    from weir.compiler.targets.llvm_cpu.element_eval import Body
    kv = low.kv
    view = kv.views[n]
    nin = len(view.inputs)
    sizes = loop_sizes(kv, view)
    out_map = view.maps[nin]
    parallel = [d for d in out_map if d >= 0]
    parallel += [d for d, it in enumerate(view.iterators)
                 if it == "parallel" and d not in parallel]
    reduction = [d for d, it in enumerate(view.iterators) if it != "parallel"]
    bounds = [(I64(0), low.dim(sizes[d])) for d in parallel]
    if rows is not None:
        bounds[:len(rows)] = rows
    extent: k.Dim = 1
    tile = 1
    if partitioned and parallel:
        red_work = math.prod(sizes[d] if isinstance(sizes[d], int) else 1024 for d in reduction)
        shape = tuple(sizes[d] for d in parallel)
        p, extent, tile = low.grid(shape, red_work)
        bounds[p] = low.partition_bounds(b, low.dim(extent), tile)
    accs = [low.alloca(s.register_type(kv.dtype[o])) for o in view.outputs]
    kept = _kept_input(low, n, view)
    partials = low.alloca(accs[0].type.pointee) \
        if low.reassociate_fp_reductions and _is_sum(view, kv.dtype[view.outputs[0]]) else None

    def outer(bb: ir.IRBuilder, pidx: list[ir.Value]) -> None:
        loops: list[ir.Value] = [I64(0)] * len(view.iterators)
        for d, x in zip(parallel, pidx):
            loops[d] = x
        ctx = Body()
        for i, acc in enumerate(accs):
            bb.store(low.operand(bb, view, nin + i, loops, ctx), acc)

        def step(ib: ir.IRBuilder, ridx: list[ir.Value], into: list[ir.Value]) -> None:
            full = list(loops)
            for d, x in zip(reduction, ridx):
                full[d] = x
            ictx = Body()
            current = [ib.load(a) for a in into]
            results = low.evaluate(ib, view, full, ictx, current)
            if kept is not None:
                v, mem = kept
                _, at = low._operand_at(view, 0, full)  # pyright: ignore[reportPrivateUsage]
                s.store_element(ib, low.element(ib, v, at, ictx), mem.address(ib, at), mem.dtype)
            for acc, value in zip(into, results):
                ib.store(value, acc)
        reduced = [(I64(0), low.dim(sizes[d])) for d in reduction]
        if partials is None:
            for_nest(bb, reduced, lambda ib, ridx: step(ib, ridx, accs), "r")
        else:
            _blocked_sum(low, bb, reduced, accs[0], partials, kv.dtype[view.outputs[0]], step)
        if kept is not None:
            low.memory[kept[0]] = kept[1]  # the epilogue reads the input where it was kept
        for i, (o, acc) in enumerate(zip(view.outputs, accs)):
            mem = low.memory.get((n, i))
            if mem is not None:
                out_idx = [loops[d] if d >= 0 else I64(0) for d in view.maps[nin + i]]
                s.store_element(bb, bb.load(acc), mem.address(bb, out_idx), mem.dtype)
                finish_block(low, bb, n, [(x, bb.add(x, I64(1))) for x in out_idx])
        if kept is not None:
            del low.memory[kept[0]]
    for_nest(b, bounds, outer, "p")
    return extent, tile


def _kept_input(low: EntryLowering, n: int, view: GenericView) -> tuple[ValueRef, Memory] | None:
    """The reduction's input and the epilogue's memory to keep it in, when the epilogue reads
    that input again at the very index it writes (a softmax: the sum of exp(x - max), then
    exp(x - max) / sum): the reduction stores each element it computes there, and the epilogue
    loads it back instead of computing it a second time, then overwrites it with its result.
    Only for an elementwise input of the epilogue's shape and type that the reduction reads
    once per point of its loops."""
    kv = low.kv
    if low.epilogue is None or low.epilogue[0] != n or len(low.epilogue[1]) != 1 or \
            len(view.inputs) != 1 or list(view.maps[0]) != list(range(len(view.iterators))):
        return None
    v = view.inputs[0]
    target, mem, at = low.epilogue[1][0]
    producer = kv.views.get(v[0])
    # The epilogue must read the root where the reduction wrote it, so that the block it
    # finishes after each root element covers the inputs that element summed (and no others).
    if tuple(at) != tuple(view.maps[len(view.inputs)]) or \
            v in low.memory or producer is None or producer.reduces or \
            len(producer.outputs) != 1 or mem is low.memory.get((n, 0)) or \
            kv.shape[v] != kv.shape[target] or kv.dtype[v] != mem.dtype:
        return None
    if root_positions(kv, v[0], n).get(target) != tuple(range(len(kv.shape[v]))):
        return None
    return v, mem


def loop_sizes(kv: KernelValues, view: GenericView) -> list[k.Dim]:
    sizes: list[k.Dim | None] = [None] * len(view.iterators)
    for v, amap in zip(view.inputs + view.outputs, view.maps):
        for j, d in enumerate(amap):
            if d >= 0 and sizes[d] is None:
                sizes[d] = kv.shape[v][j]
    return [1 if x is None else x for x in sizes]


# Elements of the innermost reduced dimension summed into one partial sum before it is added to
# the accumulator. IREE's vectorised reductions sum a tile of the dimension in vector lanes and
# add the tiles' sums in turn; this order does the same, so its rounding lands where IREE's does
# (40960 x 0.001f: 40.96003 where a sequential sum drifts to 40.949 and one row of lanes to
# 40.9585), and LLVM still vectorises the block's loop.
SUM_BLOCK = 512


def _is_sum(view: GenericView, dtype: str) -> bool:
    """A single float output whose body ends in `addf(x, out)`, `out` used nowhere else: the
    body then maps a partial sum p to p + x, so blocks can start from -0.0 and be added up."""
    if len(view.outputs) != 1 or not s.is_float(dtype):
        return False
    out = len(view.inputs)
    base = out + 1
    (y,) = view.yields
    if y < base or view.body[y - base].op != "addf":
        return False
    uses = sum(a == out for op in view.body for a in op.args)
    return uses == 1 and out in view.body[y - base].args


def _blocked_sum(low: EntryLowering, b: ir.IRBuilder, reduced: list[tuple[ir.Value, ir.Value]],
                 acc: ir.Value, partial: ir.Value, dtype: str,
                 step: Callable[[ir.IRBuilder, list[ir.Value], list[ir.Value]], None]) -> None:
    """acc += the reduction, SUM_BLOCK elements of the innermost dimension at a time into a
    partial sum (reassociated inside by LLVM's vectoriser), each partial then added to acc."""
    *outer, (lo, hi) = reduced

    def blocks(ob: ir.IRBuilder, oidx: list[ir.Value]) -> None:
        count = ob.sdiv(ob.add(hi, I64(SUM_BLOCK - 1)), I64(SUM_BLOCK))

        def block(kb: ir.IRBuilder, j: ir.Value) -> None:
            kb.store(ir.Constant(partial.type.pointee, -0.0), partial)
            start = kb.mul(j, I64(SUM_BLOCK))
            for_range(kb, start, smin(kb, kb.add(start, I64(SUM_BLOCK)), hi),
                      lambda ib, r: step(ib, oidx + [r], [partial]), "rb")
            total = s.emit_scalar(kb, "addf", [kb.load(acc), kb.load(partial)], dtype, None,
                                  [dtype, dtype], s.REASSOC)
            kb.store(total, acc)
        for_range(ob, lo, count, block, "blk")
    for_nest(b, outer, blocks, "r")
