"""An entry whose stores are all elementwise values of one shape: one loop nest over that
shape, each element computed where it is stored (element_eval.py),
its outermost non-unit dimension split into workgroups.

Workgroups are sized by the work of an element, not by elements alone: an element whose chain
runs exponentials, hyperbolic tangents or divisions (an LSTM's gates: three sigmoids, two
tanh) costs tens of simple operations, so a few thousand of them are worth both threads of a
device, where as many additions are not. (One 8 x 256 LSTM gate dispatch took 8.7 us on one
thread while the other waited for it, once per step.)

A store of f32 memory read through a transpose that moves its innermost dimension (an NHWC
result handed back as NCHW) is a copy between two dimensions that are each contiguous on one
side: it moves 8 x 8 blocks through registers (transpose_rows.py), each block's reads and
writes whole vectors, rather than the element loop's one line read per element written (NHWC
111 x 111 x 64 to NCHW took 3.5 ms on one thread, a 3 MB copy)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import llvmlite.ir as ir

from weir.compiler.targets.llvm_cpu import scalars as s
from weir.compiler.targets.llvm_cpu.kernel_values import KernelValues
from weir.compiler.targets.llvm_cpu.loops import I64, for_nest
from weir.compiler.targets.llvm_cpu.strided import strided_view
from weir.compiler.targets.llvm_cpu.transpose_rows import write_transposed
from weir.format import kernel_description as k

if TYPE_CHECKING:
    from weir.compiler.targets.llvm_cpu.lower_entry import EntryLowering

# Scalar ops that vector code computes with a polynomial, a division or a sequence of tens of
# instructions, and how many simple operations each counts as.
COSTLY_OPS = frozenset({
    "divf", "remf", "exp", "exp2", "log", "log2", "log1p", "tanh", "sqrt", "rsqrt", "pow",
    "sin", "cos", "erf", "expm1", "atan", "atan2", "acos", "acosh", "asin", "asinh", "atanh",
    "cbrt", "cosh", "sinh", "tan"})
COSTLY_OP_WORK = 16


def element_work(kv: KernelValues) -> int:
    """Work per element of an entry's elementwise chain: one for the element, and each
    operation of its generics' bodies, the costly ones weighted."""
    return 1 + sum(COSTLY_OP_WORK if op.op in COSTLY_OPS else 1
                   for g in kv.ops if isinstance(g, k.Generic) for op in g.body
                   if op.op not in ("constant", "index", "push"))


def lower_elementwise(low: EntryLowering, b: ir.IRBuilder, stores: list[k.Store],
                      partitioned: bool) -> tuple[k.Dim, int]:
    """The stores' values (one shape) element by element; (grid extent, tile) when
    `partitioned`, else one workgroup."""
    from weir.compiler.targets.llvm_cpu.element_eval import Body
    kv = low.kv
    shape = kv.shape[kv.ref(stores[0].value)]
    bounds = [(I64(0), low.dim(d)) for d in shape]
    extent: k.Dim = 1
    tile = 1
    if partitioned and shape:
        p, extent, tile = low.grid(shape, element_work(kv))
        bounds[p] = low.partition_bounds(b, low.dim(extent), tile)
    if _transposed_copy(low, b, stores, bounds):
        return extent, tile
    targets = [low.store_memory(b, st) for st in stores]

    def body(bb: ir.IRBuilder, idx: list[ir.Value]) -> None:
        ctx = Body()
        for v, mem in targets:
            s.store_element(bb, low.element(bb, v, idx, ctx), mem.address(bb, idx), mem.dtype)

    runs = [s.write_ahead_bytes(*bounds[-1], mem.dims, mem.dtype) if bounds else None
            for _, mem in targets]

    def ahead(bb: ir.IRBuilder, outer: list[ir.Value]) -> None:
        for (_, mem), run in zip(targets, runs):
            assert run is not None
            s.prefetch_run_for_write(bb, mem.address(bb, outer + [bounds[-1][0]]), run)
    for_nest(b, bounds, body, per_run=ahead if runs and all(runs) else None)
    return extent, tile


# Below this many elements along either of the two dimensions, blocks of 8 x 8 would be mostly
# edges: the element loop serves.
_BLOCK = 8


def _transposed_copy(low: EntryLowering, b: ir.IRBuilder, stores: list[k.Store],
                     bounds: list[tuple[ir.Value, ir.Value]]) -> bool:
    """Writes the part `bounds` of the one store of a static f32 view of memory whose
    contiguous dimension is not the result's innermost one, as 8 x 8 register transposes
    between those two dimensions for each index of the others; False (nothing written) for any
    other entry."""
    if len(stores) != 1:
        return False
    kv = low.kv
    v = kv.ref(stores[0].value)
    shape = kv.shape[v]
    if kv.dtype[v] != "f32" or len(shape) < 2 or v in low.memory or \
            not all(isinstance(d, int) for d in shape):
        return False
    sizes = [int(d) for d in shape]  # type: ignore[arg-type]
    view = strided_view(low, b, v)
    if view is None or not all(isinstance(st, int) for st in view.strides):
        return False
    strides = [int(st) for st in view.strides]  # type: ignore[arg-type]
    last = len(sizes) - 1
    inner = next((d for d in range(last) if strides[d] == 1 and sizes[d] >= _BLOCK), None)
    if inner is None or strides[last] == 1 or sizes[last] < _BLOCK:
        return False
    _, mem = low.store_memory(b, stores[0])
    outer = [d for d in range(len(sizes)) if d not in (inner, last)]
    out_stride = math.prod(sizes[inner + 1:])  # the result's, along the source's contiguous dim

    def block(bb: ir.IRBuilder, at: list[ir.Value]) -> None:
        idx = [lo for lo, _ in bounds]
        for d, i in zip(outer, at):
            idx[d] = i
        write_transposed(bb, view.address(bb, idx), I64(strides[last]), mem.address(bb, idx),
                         I64(out_stride), bb.sub(bounds[last][1], bounds[last][0]),
                         bb.sub(bounds[inner][1], bounds[inner][0]))
    for_nest(b, [bounds[d] for d in outer], block, "tro")
    return True
