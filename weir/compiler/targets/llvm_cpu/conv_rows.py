"""Rows of a convolution's operands between their own layout and the W x C (or W x F) rows the
kernels read and write: an input row brought to W x C scratch, an init row into W x F
accumulators, an accumulator row written back in the output's layout and type."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import llvmlite.ir as ir

from weir.compiler.targets.llvm_cpu import scalars as s
from weir.compiler.targets.llvm_cpu.contraction import Strided
from weir.compiler.targets.llvm_cpu.kernel_values import ValueRef
from weir.compiler.targets.llvm_cpu.loops import I64, for_nest
from weir.compiler.targets.llvm_cpu.transpose_rows import write_transposed

if TYPE_CHECKING:
    from weir.compiler.targets.llvm_cpu.element_eval import Memory
    from weir.compiler.targets.llvm_cpu.lower_entry import EntryLowering


def at_layout(layout: str, letters: dict[str, ir.Value]) -> list[ir.Value]:
    """An index in `layout`'s dimension order from values named by dimension letter."""
    return [letters[c] for c in layout]


def fill_row(low: EntryLowering, b: ir.IRBuilder, init: ValueRef, layout: str, bn: ir.Value,
             oh: ir.Value, out_w: ir.Value, feats: ir.Value, acc: str, row: ir.Value,
             cols: tuple[ir.Value, ir.Value]) -> None:
    """Channels [cols) of output row (bn, oh) of `init` into OW x F memory of the accumulator
    type at `row`."""
    from weir.compiler.targets.llvm_cpu.element_eval import Body
    f0, f1 = cols

    def fill(bb: ir.IRBuilder, ow: ir.Value, j: ir.Value) -> None:
        f = bb.add(f0, j)
        at_init = at_layout(layout, {"N": bn, "H": oh, "W": ow, "F": f})
        value = low.element(bb, init, at_init, Body())
        at = bb.gep(row, [bb.add(bb.mul(ow, feats), f)], inbounds=True)
        s.store_element(bb, low.convert(bb, value, low.kv.dtype[init], acc), at, acc)
    source_order(b, layout, "F", out_w, b.sub(f1, f0), fill, "init")


def write_row(low: EntryLowering, b: ir.IRBuilder, c: Strided, dest: Memory, layout: str,
              bn: ir.Value, oh: ir.Value, out_w: ir.Value,
              cols: tuple[ir.Value, ir.Value]) -> None:
    """Channels [cols) of row (bn, oh) of the W x F accumulator `c` into `dest` in its layout
    and type."""
    f0, f1 = cols
    count = b.sub(f1, f0)
    if layout == "NFHW" and c.dtype == dest.dtype == "f32":
        _, _, out_h, width = dest.dims
        write_transposed(b, b.gep(c.ptr, [f0], inbounds=True), c.ld,
                         dest.address(b, [bn, f0, oh, I64(0)]), b.mul(out_h, width), out_w,
                         count)
        return

    def copy(bb: ir.IRBuilder, ow: ir.Value, j: ir.Value) -> None:
        f = bb.add(f0, j)
        at = bb.gep(c.ptr, [bb.add(bb.mul(ow, c.ld), f)], inbounds=True)
        value = low.convert(bb, s.load_element(bb, at, c.dtype), c.dtype, dest.dtype)
        where = dest.address(bb, at_layout(layout, {"N": bn, "H": oh, "W": ow, "F": f}))
        s.store_element(bb, value, where, dest.dtype)
    source_order(b, layout, "F", out_w, count, copy, "out")


def copy_input_row(low: EntryLowering, b: ir.IRBuilder, x: ValueRef, layout: str,
                   bn: ir.Value, ih: ir.Value, width: ir.Value, chans: ir.Value,
                   line: Memory, step: int = 1) -> None:
    """Input row (bn, ih), of any layout, into `line` as W x C: `width` pixels, every
    `step`-th one of the row."""
    from weir.compiler.targets.llvm_cpu.element_eval import Body

    def copy(bb: ir.IRBuilder, iw: ir.Value, ci: ir.Value) -> None:
        at = iw if step == 1 else bb.mul(iw, I64(step))
        value = low.element(bb, x, at_layout(layout, {"N": bn, "H": ih, "W": at, "C": ci}), Body())
        s.store_element(bb, value, line.address(bb, [iw, ci]), line.dtype)
    source_order(b, layout, "C", width, chans, copy, "line", unroll=False)


def source_order(b: ir.IRBuilder, layout: str, channel: str, width: ir.Value,
                 chans: ir.Value, body: Callable[[ir.IRBuilder, ir.Value, ir.Value], None],
                 name: str, unroll: bool = True) -> None:
    """body(w, c) over a W x C row, the loop over whichever of W and `channel` comes later in
    `layout` innermost: the side in the other layout reads or writes contiguously, the W x C
    scratch side stays in L1 whatever its stride."""
    if layout.index("W") > layout.index(channel):
        for_nest(b, [(I64(0), chans), (I64(0), width)],
                 lambda bb, idx: body(bb, idx[1], idx[0]), name, unroll)
    else:
        for_nest(b, [(I64(0), width), (I64(0), chans)],
                 lambda bb, idx: body(bb, idx[0], idx[1]), name, unroll)


RowCopy = Callable[[ir.IRBuilder, ir.Value, ir.Value, ir.Value], None]


def nchw_row_copy(low: EntryLowering, x: ValueRef) -> RowCopy | None:
    """For an f32 NCHW input in memory (a binding), what copies its row (bn, ih) into W x C
    scratch at a given pointer 8 x 8 elements at a time (`write_transposed`); None for any
    other input, which `copy_input_row` copies element by element (a padded NCHW input too:
    programs reach NCHW kernels only with convert-conv-to-channels-last disabled)."""
    mem = low.memory.get(x)
    if mem is None or low.kv.dtype[x] != "f32":
        return None

    def copy(b: ir.IRBuilder, bn: ir.Value, ih: ir.Value, line: ir.Value) -> None:
        _, chans, height, width = mem.dims
        write_transposed(b, mem.address(b, [bn, I64(0), ih, I64(0)]), b.mul(height, width),
                         line, chans, chans, width)
    return copy
