"""Rows of a convolution's operands between their own layout and the W x C (or W x F) rows the
kernels read and write: an input row brought to W x C scratch, an init row into W x F
accumulators, an accumulator row written back in the output's layout and type."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import llvmlite.ir as ir

from weir.compiler.targets.llvm_cpu import scalars as s
from weir.compiler.targets.llvm_cpu.contraction import Strided
from weir.compiler.targets.llvm_cpu.kernel_values import nchw_to_nhwc, ValueRef
from weir.compiler.targets.llvm_cpu.loops import I64, for_nest, for_range
from weir.compiler.targets.llvm_cpu.padded_input import padded_image, padded_rows
from weir.compiler.targets.llvm_cpu.transpose_rows import write_transposed
from weir.format import kernel_description as k

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
    scratch at a given pointer: for a static image of fewer than 8 channels (an RGB image), 16
    pixels at a time, a vector from each channel's plane interleaved (`_interleave`); otherwise
    8 x 8 elements at a time (`write_transposed`). None for any other input, which
    `copy_input_row` copies element by element (a padded NCHW input too: programs reach NCHW
    kernels only with convert-conv-to-channels-last disabled)."""
    mem = low.memory.get(x)
    if mem is None or low.kv.dtype[x] != "f32":
        return None
    sizes = low.kv.shape[x]
    few = all(isinstance(d, int) for d in sizes) and int(sizes[1]) < 8  # type: ignore[arg-type]

    def copy(b: ir.IRBuilder, bn: ir.Value, ih: ir.Value, line: ir.Value) -> None:
        _, chans, height, width = mem.dims
        start = mem.address(b, [bn, I64(0), ih, I64(0)])
        if few:
            _, c, h, w = (int(d) for d in sizes)  # type: ignore[arg-type]
            _interleave(b, start, h * w, line, c, w)
            return
        write_transposed(b, start, b.mul(height, width), line, chans, chans, width)
    return copy


def transposed_row_copy(low: EntryLowering, x: ValueRef) -> RowCopy | None:
    """For an NHWC input that is the NCHW image of a binding transposed (the exporters' network
    input, which convert-conv-to-channels-last turns into a transpose fused into the first
    convolution's dispatch): the NCHW image's row copy (`nchw_row_copy`). Element by element
    (`copy_input_row`), the 3 x 224 x 224 input of a stem took a sixth of its 3 x 3 stride-2
    convolution on two threads."""
    op = low.kv.ops[x[0]]
    if not nchw_to_nhwc(op) or x in low.memory:
        return None
    image = low.kv.ref(op.input)
    return nchw_row_copy(low, image) or padded_nchw_row_copy(low, image)


def padded_nchw_row_copy(low: EntryLowering, x: ValueRef) -> RowCopy | None:
    """For a pad of an f32 NCHW image in memory (`KernelValues.padded_inputs`: the exporters'
    padded network input, which convert-conv-to-channels-last turns into a transpose of the
    pad), the padded image's row copy: the source's row by `nchw_row_copy` between the pad's
    values, so the stem's dispatch reads the image itself and no dispatch writes the pad."""
    image = padded_image(low, x, "NCHW")
    if image is None:
        return None
    op = low.kv.ops[x[0]]
    assert isinstance(op, k.InsertSlice)  # padded_image's inputs are inserts
    row = nchw_row_copy(low, low.kv.ref(op.source))
    # padded_image found every dimension static.
    return None if row is None else padded_rows(image, int(low.kv.shape[x][1]), row)


# Pixels of a row interleaved at a time by `_interleave`, one vector of each channel.
_INTERLEAVED = 16


def _interleave(b: ir.IRBuilder, planes: ir.Value, plane: int, line: ir.Value, chans: int,
                width: int) -> None:
    """line[w * chans + c] = planes[c * plane + w] for w < width, c < chans (< 8)."""
    f32 = ir.FloatType()
    lanes = _INTERLEAVED
    vector = ir.VectorType(f32, lanes)

    def block(bb: ir.IRBuilder, i: ir.Value) -> None:
        w0 = bb.mul(i, I64(lanes))
        parts = [bb.load(bb.bitcast(bb.gep(planes, [bb.add(w0, I64(c * plane))], inbounds=True),
                                    vector.as_pointer()), align=4) for c in range(chans)]
        # Concatenated pairwise (a shuffle takes two vectors of one width), the missing
        # partner of an odd count undefined, until one vector holds every channel's lanes.
        size = lanes
        while len(parts) > 1:
            if len(parts) % 2:
                parts.append(ir.Constant(parts[0].type, ir.Undefined))
            both = ir.Constant(ir.VectorType(ir.IntType(32), 2 * size), list(range(2 * size)))
            parts = [bb.shuffle_vector(parts[j], parts[j + 1], both)
                     for j in range(0, len(parts), 2)]
            size *= 2
        whole = parts[0]
        order = [c * lanes + w for w in range(lanes) for c in range(chans)]
        mixed = bb.shuffle_vector(whole, ir.Constant(whole.type, ir.Undefined),
                                  ir.Constant(ir.VectorType(ir.IntType(32), len(order)), order))
        at = bb.gep(line, [bb.mul(w0, I64(chans))], inbounds=True)
        bb.store(mixed, bb.bitcast(at, mixed.type.as_pointer()), align=4)
    blocks = width // lanes
    for_range(b, I64(0), I64(blocks), block, "ilv", unroll=False)

    def element(bb: ir.IRBuilder, w: ir.Value) -> None:
        for c in range(chans):
            value = bb.load(bb.gep(planes, [bb.add(w, I64(c * plane))], inbounds=True))
            bb.store(value, bb.gep(line, [bb.add(bb.mul(w, I64(chans)), I64(c))],
                                   inbounds=True))
    for_range(b, I64(blocks * lanes), I64(width), element, "ilw", unroll=False)
