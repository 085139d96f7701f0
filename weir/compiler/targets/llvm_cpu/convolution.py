"""Window ops. An f32 convolution with static channel, window and output sizes runs on the direct
microkernel (conv_kernel.py): per workgroup range of output rows (n, oh), register tiles of
output pixels x output channels accumulate over the window and the input channels, the filter
packed once per range. NHWC input is read in place; other layouts have the input rows the range
reads converted to NHWC scratch once, and outputs in other layouts or types accumulate in f32
scratch rows written back afterwards (to f32 NCHW 8 x 8 at a time: transpose_rows.py).

Any other convolution is, per output row (n, oh), the sum over window taps (kh, kw) of one GEMM:
the OW x C input rows starting at (oh*sh + kh*dh, kw*dw), read with a row stride of sw*C, times
the C x F filter slice of that tap. Other layouts are brought to NHWC/HWCF in scratch (the
filter once per workgroup, the input one row at a time, each output row accumulated in scratch
and written back in its own layout), so every layout keeps the GEMM and the row partitioning.

A 1x1 f32 convolution of channels-first images is one GEMM per image and range of rows,
straight into the output (pointwise_conv.py). Depthwise convolution of f32 with static sizes
is vectorised (depthwise.py); other depthwise convolutions and pooling have no contraction:
plain loops over the output, the window innermost."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import llvmlite.ir as ir

from weir.compiler.targets.llvm_cpu import scalars as s
from weir.compiler.targets.llvm_cpu.epilogue import finish_block
from weir.compiler.targets.llvm_cpu.contraction import (
    Strided,
    accumulate_into,
    accumulator,
    copy_back,
    gemm,
    in_memory,
)
from weir.compiler.targets.llvm_cpu.conv_kernel import (
    ConvGeometry,
    DirectConv,
    Pixels,
    direct_conv_applies,
    panel_width,
)
from weir.compiler.targets.llvm_cpu.depthwise import (
    lower_vector_depthwise,
    vector_depthwise_applies,
)
from weir.compiler.targets.llvm_cpu.kernel_values import ValueRef
from weir.compiler.targets.llvm_cpu.loops import I64, for_nest, for_range, smax, smin
from weir.compiler.targets.llvm_cpu.pointwise_conv import lower_pointwise, pointwise_applies
from weir.compiler.targets.llvm_cpu.strided import packed_source
from weir.compiler.targets.llvm_cpu.transpose_rows import write_transposed
from weir.format import kernel_description as k
from weir.format.packed_weights import conv_panels_permutation, conv_panels_shape

if TYPE_CHECKING:
    from weir.compiler.targets.llvm_cpu.lower_entry import EntryLowering, Memory


def _at(layout: str, letters: dict[str, ir.Value]) -> list[ir.Value]:
    """An index in `layout`'s dimension order from values named by dimension letter."""
    return [letters[c] for c in layout]


def _in_order(low: EntryLowering, b: ir.IRBuilder, v: ValueRef, layout: str,
              order: str) -> Memory:
    """`v` (dimensions named by `layout`) as row-major memory with dimensions in `order`: its
    own memory when the orders agree, else a scratch copy."""
    if layout == order:
        return in_memory(low, b, v)
    from weir.compiler.targets.llvm_cpu.lower_entry import Body
    sizes = dict(zip(layout, low.dims(v)))
    scratch = low.scratch_memory(b, low.kv.dtype[v], [sizes[c] for c in order])

    def copy(bb: ir.IRBuilder, idx: list[ir.Value]) -> None:
        value = low.element(bb, v, _at(layout, dict(zip(order, idx))), Body())
        s.store_element(bb, value, scratch.address(bb, idx), scratch.dtype)
    for_nest(b, [(I64(0), sizes[c]) for c in order], copy, "perm")
    return scratch


def lower_conv(low: EntryLowering, b: ir.IRBuilder, n: int, op: k.Conv2D,
               partitioned: bool) -> tuple[k.Dim, int]:
    if op.depthwise:
        if vector_depthwise_applies(low, op, n):
            return lower_vector_depthwise(low, b, n, op, partitioned)
        return _lower_depthwise(low, b, n, op, partitioned)
    if pointwise_applies(low, n, op):
        return lower_pointwise(low, b, n, op, partitioned)
    kv = low.kv
    x, w, init, out = kv.ref(op.input), kv.ref(op.filter), kv.ref(op.init), (n, 0)
    dest = low.memory[out]
    in_layout, out_layout = op.input_layout, op.output_layout
    xd = dict(zip(in_layout, low.dims(x)))
    wd = dict(zip(op.filter_layout, low.dims(w)))
    od = dict(zip(out_layout, low.dims(out)))
    kh_n, kw_n, feats = wd["H"], wd["W"], wd["F"]
    out_h, out_w = od["H"], od["W"]
    acc = accumulator(kv.dtype[x], kv.dtype[w], kv.dtype[out])
    shape = dict(zip(out_layout, kv.shape[out]))
    direct = _direct_kernel(low, n, op, acc)
    xm = in_memory(low, b, x) if in_layout == "NHWC" else None
    if direct is None:
        wm = _in_order(low, b, w, op.filter_layout, "HWCF")
    extent: k.Dim = 1
    tile = 1
    lo, hi = I64(0), b.mul(od["N"], out_h)
    per_row = 1  # multiply-adds per output row: OW x F x KH x KW x C
    if partitioned and isinstance(shape["N"], int) and isinstance(shape["H"], int):
        rows = shape["N"] * shape["H"]
        wd_static = dict(zip(op.filter_layout, kv.shape[w]))
        for d in (shape["W"], shape["F"], wd_static["H"], wd_static["W"], wd_static["C"]):
            per_row *= d if isinstance(d, int) else 64
        _, extent, tile = low.grid((rows,), per_row)
        lo, hi = low.partition_bounds(b, I64(rows), tile)

    if direct is not None:
        tiles = extent if isinstance(extent, int) and extent > 1 else 0
        groups = _channel_groups(direct, -(-tiles // tile), tile * per_row) if tiles else 1
        if groups > 1:
            _direct_conv(low, b, n, op, direct, xm, acc, tiles, tile, groups)
            return groups * -(-tiles // tile), 1
        _direct_rows(low, b, n, op, direct, xm, (lo, hi), acc)(
            b, (lo, hi), (I64(0), I64(direct.blocks)))
        return extent, tile

    def row(rb: ir.IRBuilder, r: ir.Value) -> None:
        bn, oh = rb.sdiv(r, out_h), rb.srem(r, out_h)
        if out_layout == "NHWF":
            c, scratch = accumulate_into(low, rb, init, dest, [bn, oh], (I64(0), out_w),
                                         (I64(0), feats), acc)
        else:
            c = _row_accumulator(low, rb, init, out_layout, bn, oh, out_w, feats, acc)
        _tap_gemms(low, rb, x, xm, wm, in_layout, bn, oh, op, xd, kh_n, kw_n, out_w, feats, c)
        if out_layout == "NHWF":
            if scratch:
                copy_back(low, rb, c, dest, [bn, oh], (I64(0), out_w), (I64(0), feats))
        else:
            _write_row(low, rb, c, dest, out_layout, bn, oh, out_w, feats)
        spans = {"N": (bn, rb.add(bn, I64(1))), "H": (oh, rb.add(oh, I64(1))),
                 "W": (I64(0), out_w)}
        finish_block(low, rb, n, [spans.get(d, (I64(0), feats)) for d in out_layout])
    for_range(b, lo, hi, lambda rb, r: low.scoped(rb, lambda: row(rb, r)), "row")
    return extent, tile


def _direct_kernel(low: EntryLowering, n: int, op: k.Conv2D, acc: str) -> DirectConv | None:
    """The direct microkernel for this convolution when it covers its types and sizes."""
    kv = low.kv
    x, w = kv.ref(op.input), kv.ref(op.filter)
    xs = dict(zip(op.input_layout, kv.shape[x]))
    ws = dict(zip(op.filter_layout, kv.shape[w]))
    os = dict(zip(op.output_layout, kv.shape[(n, 0)]))
    sizes = (xs["C"], ws["F"], ws["H"], ws["W"], os["H"], os["W"], xs["W"])
    if not direct_conv_applies((kv.dtype[x], kv.dtype[w], acc), list(sizes)):
        return None
    chans, feats, kh, kw, out_h, out_w, _ = (int(d) for d in sizes)
    (sh, sw), (dh, dw) = op.strides, op.dilations
    if kh == kw == 1 and op.input_layout != "NHWC":
        # The input is converted to scratch anyway: keep only the pixels a strided 1 x 1
        # convolution reads there, which the kernel then reads with stride 1.
        sh = sw = 1
    return DirectConv(low, f"{low.symbol}.conv{n}", ConvGeometry(
        chans, feats, kh, kw, out_h, out_w, sh, sw, dh, dw))


def _tap_gemms(low: EntryLowering, b: ir.IRBuilder, x: ValueRef, xm: Memory | None,
               wm: Memory, layout: str, bn: ir.Value, oh: ir.Value, op: k.Conv2D,
               xd: dict[str, ir.Value], kh_n: ir.Value, kw_n: ir.Value, out_w: ir.Value,
               feats: ir.Value, c: Strided) -> None:
    """c += output row (bn, oh) as one GEMM call per window tap: the general path, for any
    element types and dynamic sizes."""
    (sh, sw), (dh, dw) = op.strides, op.dilations
    chans = xd["C"]
    dtype = low.kv.dtype[x]
    line = None if xm is not None else low.scratch_memory(b, dtype, [xd["W"], chans])

    def tap_row(hb: ir.IRBuilder, kh: ir.Value) -> None:
        ih = hb.add(hb.mul(oh, I64(sh)), hb.mul(kh, I64(dh)))
        if line is not None:
            _copy_input_row(low, hb, x, layout, bn, ih, xd["W"], chans, line)

        def tap(tb: ir.IRBuilder, kw: ir.Value) -> None:
            iw = tb.mul(kw, I64(dw))
            if xm is not None:
                start = xm.address(tb, [bn, ih, iw, I64(0)])
            else:
                assert line is not None
                start = line.address(tb, [iw, I64(0)])
            a = Strided(start, tb.mul(chans, I64(sw)), dtype)
            f = Strided(wm.address(tb, [kh, kw, I64(0), I64(0)]), feats, wm.dtype)
            gemm(low, tb, out_w, feats, chans, a, f, c)
        for_range(hb, I64(0), kw_n, tap, "kw")
    for_range(b, I64(0), kh_n, tap_row, "kh")


def _channel_groups(kernel: DirectConv, row_tiles: int, work_per_tile: int) -> int:
    """Into how many groups of output channel blocks to split each range of output rows: 1,
    unless there are too few row ranges to keep several threads evenly busy (a 7 x 7 image
    is 7 rows: 4 + 3 on two threads). A power of two, so that any power-of-two count of
    threads takes whole groups; each group keeps enough work to be worth a thread."""
    from weir.compiler.targets.llvm_cpu.lower_entry import WORK_PER_WORKGROUP
    groups = 1
    while row_tiles * groups < ROW_RANGES and groups * 2 <= kernel.blocks and \
            work_per_tile // (groups * 2) >= WORK_PER_WORKGROUP:
        groups *= 2
    return groups


def _direct_conv(low: EntryLowering, b: ir.IRBuilder, n: int, op: k.Conv2D,
                 kernel: DirectConv, xm: Memory | None, acc: str, rows: int, row_tile: int,
                 groups: int) -> None:
    """Workgroups [begin, end) of `groups` x ceil(rows / row_tile), numbered group-major:
    workgroup g * R + r is rows [r, r + 1) * row_tile of channel group g. The input is
    brought in once for all rows and each group runs its rows of its own channel blocks."""
    tiles = -(-rows // row_tile)
    lo, hi = low.begin, low.end
    g_lo, g_hi = b.sdiv(lo, I64(tiles)), b.sdiv(b.add(hi, I64(tiles - 1)), I64(tiles))
    blocks = kernel.blocks

    def group(gb: ir.IRBuilder, g: ir.Value) -> None:
        first = gb.mul(g, I64(tiles))
        r_lo = gb.mul(smax(gb, gb.sub(lo, first), I64(0)), I64(row_tile))
        r_hi = smin(gb, gb.mul(smin(gb, gb.sub(hi, first), I64(tiles)), I64(row_tile)),
                    I64(rows))
        fb = (gb.sdiv(gb.mul(g, I64(blocks)), I64(groups)),
              gb.sdiv(gb.mul(gb.add(g, I64(1)), I64(blocks)), I64(groups)))
        part(gb, (r_lo, r_hi), fb)
    part = _direct_rows(low, b, n, op, kernel, xm, (I64(0), I64(rows)), acc)
    for_range(b, g_lo, g_hi, group, "group")


# Fewer ranges of output rows than this split the channels too (_channel_groups).
ROW_RANGES = 16

Part = Callable[[ir.IRBuilder, tuple[ir.Value, ir.Value], tuple[ir.Value, ir.Value]], None]


def _direct_rows(low: EntryLowering, b: ir.IRBuilder, n: int, op: k.Conv2D,
                 kernel: DirectConv, xm: Memory | None,
                 hull: tuple[ir.Value, ir.Value], acc: str) -> Part:
    """Prepares output rows [hull) (numbered n * OH + oh) for the direct kernel and returns
    what computes a part of them: rows [lo, hi) within the hull, of the channel blocks
    [fb0, fb1). A part runs in one kernel call over its pixels, so a tile of pixels may span
    rows and each chunk of a panel serves all of them. The accumulators are the output itself
    when it is NHWF in the accumulator type, else scratch rows (for the hull) written back in
    the output's layout and type afterwards."""
    kv = low.kv
    x, w, init, out = kv.ref(op.input), kv.ref(op.filter), kv.ref(op.init), (n, 0)
    dest = low.memory[out]
    layout = op.output_layout
    xd = dict(zip(op.input_layout, low.dims(x)))
    od = dict(zip(layout, low.dims(out)))
    out_h, out_w, feats = od["H"], od["W"], od["F"]
    source = _input_pixels(low, b, x, xm, op, kernel, hull, xd, (out_h, out_w))
    panels = kernel.panel(b, _packed_filter(low, b, op, kernel))
    nr = I64(kernel.blk.nr)
    if layout == "NHWF" and dest.dtype == acc:
        scratch = None
        c, c_first = dest.ptr, I64(0)
    else:
        count = b.sub(hull[1], hull[0])
        count = b.select(b.icmp_signed("<", count, I64(0)), I64(0), count)
        scratch = low.scratch_memory(b, acc, [b.mul(count, out_w), feats])
        c, c_first = scratch.ptr, b.mul(hull[0], out_w)

    def part(pb: ir.IRBuilder, rows: tuple[ir.Value, ir.Value],
             blocks: tuple[ir.Value, ir.Value]) -> None:
        cols = (pb.mul(blocks[0], nr), smin(pb, pb.mul(blocks[1], nr), feats))

        def start(rb: ir.IRBuilder, r: ir.Value) -> None:
            bn, oh = rb.sdiv(r, out_h), rb.srem(r, out_h)
            if scratch is None:
                accumulate_into(low, rb, init, dest, [bn, oh], (I64(0), out_w), cols, acc)
                return
            at = rb.gep(scratch.ptr, [rb.mul(rb.sub(r, hull[0]), rb.mul(out_w, feats))],
                        inbounds=True)
            _fill_row(low, rb, init, layout, bn, oh, out_w, feats, acc, at, cols)
        for_range(pb, rows[0], rows[1], start, "init")
        kernel.run(pb, w, op.filter_layout, source, (pb.mul(rows[0], out_w),
                   pb.mul(rows[1], out_w)), c, c_first, feats, panels, blocks)

        def finish(rb: ir.IRBuilder, r: ir.Value) -> None:
            bn, oh = rb.sdiv(r, out_h), rb.srem(r, out_h)
            if scratch is not None:
                at = rb.gep(scratch.ptr, [rb.mul(rb.sub(r, hull[0]), rb.mul(out_w, feats))],
                            inbounds=True)
                _write_row(low, rb, Strided(at, feats, acc), dest, layout, bn, oh, out_w,
                           feats, cols)
            spans = {"N": (bn, rb.add(bn, I64(1))), "H": (oh, rb.add(oh, I64(1))),
                     "W": (I64(0), out_w)}
            finish_block(low, rb, n, [spans.get(d, cols) for d in layout])
        for_range(pb, rows[0], rows[1], finish, "finish")
    return part


def _packed_filter(low: EntryLowering, b: ir.IRBuilder, op: k.Conv2D,
                   kernel: DirectConv) -> ir.Value | None:
    """The filter's panels when global-optimization packed it at compile time
    (pack_conv_filters.py) for this kernel's panel width."""
    g, nr = kernel.g, panel_width(low.cpu)
    if g.feats % nr:
        return None
    sizes = {"F": g.feats, "H": g.kh, "W": g.kw, "C": g.chans}
    return packed_source(low, b, low.kv.ref(op.filter), conv_panels_permutation(op.filter_layout),
                         conv_panels_shape(sizes, nr))


def _input_pixels(low: EntryLowering, b: ir.IRBuilder, x: ValueRef, xm: Memory | None,
                  op: k.Conv2D, kernel: DirectConv, rows: tuple[ir.Value, ir.Value],
                  xd: dict[str, ir.Value], out: tuple[ir.Value, ir.Value]) -> Pixels:
    """The input as the direct kernel reads it. NHWC memory is read in place. Another layout is
    first brought to NHWC scratch, once per workgroup range and only for the input rows its
    output rows [lo, hi) read; for a strided 1 x 1 convolution (whose kernel then runs with
    stride 1, `_direct_kernel`) only the pixels it reads, OH x OW of them."""
    from weir.compiler.targets.llvm_cpu.lower_entry import Memory
    (sh, sw), (dh, _) = op.strides, op.dilations
    out_h, out_w = out
    sampled = (kernel.g.sh, kernel.g.sw) != (sh, sw)
    height, width = (out_h, out_w) if sampled else (xd["H"], xd["W"])
    row_elements = b.mul(width, xd["C"])
    image_elements = b.mul(height, row_elements)
    if xm is not None:
        return Pixels(xm.ptr, I64(0), image_elements, row_elements)
    lo, hi = rows
    kh_n = I64(dict(zip(op.filter_layout, low.kv.shape[low.kv.ref(op.filter)]))["H"])
    first = b.sdiv(lo, out_h)
    count = b.sub(b.sdiv(b.add(hi, b.sub(out_h, I64(1))), out_h), first)
    count = b.select(b.icmp_signed("<", count, I64(0)), I64(0), count)
    slab = low.scratch_memory(b, low.kv.dtype[x], [count, height, width, xd["C"]])

    def image(ib: ir.IRBuilder, i: ir.Value) -> None:
        bn = ib.add(first, i)
        base = ib.mul(bn, out_h)
        oh_lo = ib.sub(lo, base)
        oh_lo = ib.select(ib.icmp_signed("<", oh_lo, I64(0)), I64(0), oh_lo)
        oh_hi = smin(ib, ib.sub(hi, base), out_h)

        def convert(hb: ir.IRBuilder, row: ir.Value) -> None:
            line = Memory(slab.address(hb, [i, row, I64(0), I64(0)]), slab.dtype,
                          [width, xd["C"]])
            ih = hb.mul(row, I64(sh)) if sampled else row
            _copy_input_row(low, hb, x, op.input_layout, bn, ih, width, xd["C"], line,
                            sw if sampled else 1)
        if sampled:
            for_range(ib, oh_lo, oh_hi, convert, "ih")
            return
        reach = ib.add(ib.mul(ib.sub(oh_hi, I64(1)), I64(sh)),
                       ib.add(ib.mul(ib.sub(kh_n, I64(1)), I64(dh)), I64(1)))
        for_range(ib, ib.mul(oh_lo, I64(sh)), smin(ib, reach, xd["H"]), convert, "ih")
    for_range(b, I64(0), count, image, "image")
    return Pixels(slab.ptr, first, image_elements, row_elements)


def _row_accumulator(low: EntryLowering, b: ir.IRBuilder, init: ValueRef, layout: str,
                     bn: ir.Value, oh: ir.Value, out_w: ir.Value, feats: ir.Value,
                     acc: str) -> Strided:
    """Output row (bn, oh) of `init` (dimensions named by `layout`) as OW x F scratch of the
    accumulator type."""
    scratch = low.scratch_memory(b, acc, [out_w, feats])
    _fill_row(low, b, init, layout, bn, oh, out_w, feats, acc, scratch.ptr)
    return Strided(scratch.ptr, feats, acc)


def _fill_row(low: EntryLowering, b: ir.IRBuilder, init: ValueRef, layout: str, bn: ir.Value,
              oh: ir.Value, out_w: ir.Value, feats: ir.Value, acc: str, row: ir.Value,
              cols: tuple[ir.Value, ir.Value] | None = None) -> None:
    """Output row (bn, oh) of `init` into OW x F memory of the accumulator type at `row`
    (channels [cols) only, where given)."""
    from weir.compiler.targets.llvm_cpu.lower_entry import Body
    f0, f1 = cols or (I64(0), feats)

    def fill(bb: ir.IRBuilder, ow: ir.Value, j: ir.Value) -> None:
        f = j if cols is None else bb.add(f0, j)
        value = low.element(bb, init, _at(layout, {"N": bn, "H": oh, "W": ow, "F": f}), Body())
        at = bb.gep(row, [bb.add(bb.mul(ow, feats), f)], inbounds=True)
        s.store_element(bb, low.convert(bb, value, low.kv.dtype[init], acc), at, acc)
    _source_order(b, layout, "F", out_w, feats if cols is None else b.sub(f1, f0), fill, "init")


def _write_row(low: EntryLowering, b: ir.IRBuilder, c: Strided, dest: Memory, layout: str,
               bn: ir.Value, oh: ir.Value, out_w: ir.Value, feats: ir.Value,
               cols: tuple[ir.Value, ir.Value] | None = None) -> None:
    """Row (bn, oh) of the W x F accumulator `c` into `dest` in its layout and type (channels
    [cols) only, where given)."""
    f0, f1 = cols or (I64(0), feats)
    count = feats if cols is None else b.sub(f1, f0)
    if layout == "NFHW" and c.dtype == dest.dtype == "f32":
        _, _, out_h, width = dest.dims
        write_transposed(b, b.gep(c.ptr, [f0], inbounds=True), c.ld,
                         dest.address(b, [bn, f0, oh, I64(0)]), b.mul(out_h, width), out_w,
                         count)
        return

    def copy(bb: ir.IRBuilder, ow: ir.Value, j: ir.Value) -> None:
        f = j if cols is None else bb.add(f0, j)
        at = bb.gep(c.ptr, [bb.add(bb.mul(ow, c.ld), f)], inbounds=True)
        value = low.convert(bb, s.load_element(bb, at, c.dtype), c.dtype, dest.dtype)
        where = dest.address(bb, _at(layout, {"N": bn, "H": oh, "W": ow, "F": f}))
        s.store_element(bb, value, where, dest.dtype)
    _source_order(b, layout, "F", out_w, count, copy, "out")


def _copy_input_row(low: EntryLowering, b: ir.IRBuilder, x: ValueRef, layout: str,
                    bn: ir.Value, ih: ir.Value, width: ir.Value, chans: ir.Value,
                    line: Memory, step: int = 1) -> None:
    """Input row (bn, ih), of any layout, into `line` as W x C: `width` pixels, every
    `step`-th one of the row."""
    from weir.compiler.targets.llvm_cpu.lower_entry import Body

    def copy(bb: ir.IRBuilder, iw: ir.Value, ci: ir.Value) -> None:
        at = iw if step == 1 else bb.mul(iw, I64(step))
        value = low.element(bb, x, _at(layout, {"N": bn, "H": ih, "W": at, "C": ci}), Body())
        s.store_element(bb, value, line.address(bb, [iw, ci]), line.dtype)
    _source_order(b, layout, "C", width, chans, copy, "line", unroll=False)


def _source_order(b: ir.IRBuilder, layout: str, channel: str, width: ir.Value,
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


# ------------------------------------------------------------------- plain window loops

Combine = Callable[[ir.IRBuilder, ir.Value, ir.Value, dict[str, ir.Value]], ir.Value]


def _window_loops(low: EntryLowering, b: ir.IRBuilder, n: int, x: ValueRef, init: ValueRef,
                  layout: str, window: tuple[ir.Value, ir.Value], work: int,
                  strides: tuple[int, int], dilations: tuple[int, int], combine: Combine,
                  partitioned: bool) -> tuple[k.Dim, int]:
    """For every output element (input and output share `layout`): init, then for each window
    tap `acc = combine(acc, input element, letters)`, where letters name the output position
    (N, C, H, W) and the tap (h, w). Computed in the output's register type."""
    from weir.compiler.targets.llvm_cpu.lower_entry import Body
    kv = low.kv
    out = (n, 0)
    dest = low.memory[out]
    dtype = kv.dtype[out]
    bounds = [(I64(0), d) for d in low.dims(out)]
    extent: k.Dim = 1
    tile = 1
    if partitioned:
        p, extent, tile = low.grid(kv.shape[out], work)
        bounds[p] = low.partition_bounds(b, low.dim(extent), tile)
    h, w = layout.index("H"), layout.index("W")
    slot = low.alloca(s.register_type(dtype))

    def point(pb: ir.IRBuilder, idx: list[ir.Value]) -> None:
        pb.store(low.convert(pb, low.element(pb, init, idx, Body()), kv.dtype[init], dtype), slot)

        def tap(tb: ir.IRBuilder, t: list[ir.Value]) -> None:
            src = list(idx)
            src[h] = tb.add(tb.mul(idx[h], I64(strides[0])), tb.mul(t[0], I64(dilations[0])))
            src[w] = tb.add(tb.mul(idx[w], I64(strides[1])), tb.mul(t[1], I64(dilations[1])))
            value = low.convert(tb, low.element(tb, x, src, Body()), kv.dtype[x], dtype)
            letters = dict(zip(layout, idx)) | {"h": t[0], "w": t[1]}
            tb.store(combine(tb, tb.load(slot), value, letters), slot)
        for_nest(pb, [(I64(0), window[0]), (I64(0), window[1])], tap, "win")
        s.store_element(pb, pb.load(slot), dest.address(pb, idx), dest.dtype)
        finish_block(low, pb, n, [(i, pb.add(i, I64(1))) for i in idx])
    for_nest(b, bounds, point, "o")
    return extent, tile


def _lower_depthwise(low: EntryLowering, b: ir.IRBuilder, n: int, op: k.Conv2D,
                     partitioned: bool) -> tuple[k.Dim, int]:
    from weir.compiler.targets.llvm_cpu.lower_entry import Body
    kv = low.kv
    x, f, init = kv.ref(op.input), kv.ref(op.filter), kv.ref(op.init)
    dtype = kv.dtype[(n, 0)]
    mul, add = ("mulf", "addf") if s.is_float(dtype) else ("muli", "addi")
    wd = dict(zip(op.filter_layout, low.dims(f)))
    shape = dict(zip(op.filter_layout, kv.shape[f]))
    work = (shape["H"] if isinstance(shape["H"], int) else 9) * \
        (shape["W"] if isinstance(shape["W"], int) else 9)

    def combine(tb: ir.IRBuilder, acc: ir.Value, value: ir.Value,
                at: dict[str, ir.Value]) -> ir.Value:
        weight = low.element(tb, f, _at(op.filter_layout, {"H": at["h"], "W": at["w"],
                                                           "C": at["C"]}), Body())
        weight = low.convert(tb, weight, kv.dtype[f], dtype)
        product = s.emit_scalar(tb, mul, [value, weight], dtype, None, [dtype, dtype])
        return s.emit_scalar(tb, add, [acc, product], dtype, None, [dtype, dtype])
    return _window_loops(low, b, n, x, init, op.input_layout, (wd["H"], wd["W"]), work,
                         op.strides, op.dilations, combine, partitioned)


def lower_pool(low: EntryLowering, b: ir.IRBuilder, n: int, op: k.Pool2D,
               partitioned: bool) -> tuple[k.Dim, int]:
    dtype = low.kv.dtype[(n, 0)]
    combine_op = "addf" if op.kind == "sum" else "maximumf"
    if not s.is_float(dtype):
        combine_op = "addi" if op.kind == "sum" else "maxsi"

    def combine(tb: ir.IRBuilder, acc: ir.Value, value: ir.Value,
                at: dict[str, ir.Value]) -> ir.Value:
        return s.emit_scalar(tb, combine_op, [acc, value], dtype, None, [dtype, dtype])
    return _window_loops(low, b, n, low.kv.ref(op.input), low.kv.ref(op.init), op.layout,
                         (I64(op.window[0]), I64(op.window[1])), op.window[0] * op.window[1],
                         op.strides, op.dilations, combine, partitioned)
