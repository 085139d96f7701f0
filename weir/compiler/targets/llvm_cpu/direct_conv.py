"""The direct convolution kernel (conv_kernel.py) driven over a workgroup's output rows: per
workgroup range of output rows (n, oh), register tiles of output pixels x output channels
accumulate over the window and the input channels, from the filter's panels (packed at compile
time, or once per range). NHWC input is read in place; other layouts have the input rows the
range reads converted to NHWC scratch once, and outputs in other layouts or types accumulate in
f32 scratch rows written back afterwards (to f32 NCHW 8 x 8 at a time: transpose_rows.py).

Workgroups split the output rows; with fewer than ROW_RANGES ranges of rows they split the
output channels too (`channel_groups`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import llvmlite.ir as ir

from weir.compiler.targets.llvm_cpu.contraction import Strided, accumulate_into, bias_row
from weir.compiler.targets.llvm_cpu.conv_blocking import ConvGeometry
from weir.compiler.targets.llvm_cpu.conv_kernel import DirectConv, direct_conv_applies
from weir.compiler.targets.llvm_cpu.conv_tiles import Pixels
from weir.compiler.targets.llvm_cpu.conv_rows import (
    copy_input_row,
    fill_row,
    nchw_row_copy,
    RowCopy,
    transposed_row_copy,
    write_row,
)
from weir.compiler.targets.llvm_cpu.epilogue import finish_block, vector_epilogue
from weir.compiler.targets.llvm_cpu.loops import I64, for_range, smax, smin
from weir.compiler.targets.llvm_cpu.padded_input import padded_row_copy
from weir.compiler.targets.llvm_cpu.strided import packed_source
from weir.format import kernel_description as k
from weir.format.packed_weights import conv_panels_permutation, conv_panels_shape

if TYPE_CHECKING:
    from weir.compiler.targets.llvm_cpu.element_eval import Memory
    from weir.compiler.targets.llvm_cpu.lower_entry import EntryLowering


def lower_direct(low: EntryLowering, b: ir.IRBuilder, n: int, op: k.Conv2D, kernel: DirectConv,
                 xm: Memory | None, acc: str, grid: tuple[k.Dim, int],
                 rows: tuple[ir.Value, ir.Value], per_row: int) -> tuple[k.Dim, int]:
    """The convolution over the workgroup's rows [rows) of the row grid `grid` (extent, tile;
    `per_row` multiply-adds each), or, for few row ranges, over its part of a grid of channel
    groups x row ranges; returns the grid the entry runs."""
    extent, tile = grid
    rows_total = extent if isinstance(extent, int) and extent > 1 else 0
    ranges = -(-rows_total // tile)
    groups = channel_groups(kernel, ranges, tile * per_row) if rows_total else 1
    if groups > 1:
        direct_conv(low, b, n, op, kernel, xm, acc, rows_total, tile, groups)
        return groups * ranges, 1
    direct_rows(low, b, n, op, kernel, xm, rows, acc)(b, rows, (I64(0), I64(kernel.blocks)))
    return extent, tile


def direct_kernel(low: EntryLowering, n: int, op: k.Conv2D, acc: str) -> DirectConv | None:
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
    # Where the accumulators are the output itself, an epilogue of a few exact ops (ReLU) is
    # applied as the kernel stores them, with no pass of its own.
    return DirectConv(low, f"{low.symbol}.conv{n}", ConvGeometry(
        chans, feats, kh, kw, out_h, out_w, sh, sw, dh, dw),
        vector_epilogue(low, n) if accumulates_in_output(low, n, op, acc) else None)


def accumulates_in_output(low: EntryLowering, n: int, op: k.Conv2D, acc: str) -> bool:
    """Whether the kernel accumulates in the output itself (NHWF in the accumulator type);
    otherwise in scratch rows written back in the output's layout and type."""
    dest = low.memory.get((n, 0))
    return op.output_layout == "NHWF" and dest is not None and dest.dtype == acc


def channel_groups(kernel: DirectConv, row_tiles: int, work_per_tile: int) -> int:
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


def direct_conv(low: EntryLowering, b: ir.IRBuilder, n: int, op: k.Conv2D,
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
    part = direct_rows(low, b, n, op, kernel, xm, (I64(0), I64(rows)), acc)
    for_range(b, g_lo, g_hi, group, "group")


# Fewer ranges of output rows than this split the channels too (`channel_groups`).
ROW_RANGES = 16

Part = Callable[[ir.IRBuilder, tuple[ir.Value, ir.Value], tuple[ir.Value, ir.Value]], None]


def direct_rows(low: EntryLowering, b: ir.IRBuilder, n: int, op: k.Conv2D,
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
    panels = kernel.panel(b, packed_filter(low, b, op, kernel.blk.nr))
    band = _band_rows(low, b, x, xm, op, kernel, xd, od) if panels.prepacked else None
    source = _input_pixels(low, b, x, xm, op, kernel, hull, xd, (out_h, out_w)) \
        if band is None else None
    nr = I64(kernel.blk.nr)
    row = None
    if accumulates_in_output(low, n, op, acc):
        scratch = None
        c, c_first = dest.ptr, I64(0)
        # A bias starts the kernel's tiles: no pass writing it into the output first.
        row = bias_row(low, init, acc)
    else:
        count = b.sub(hull[1], hull[0])
        count = b.select(b.icmp_signed("<", count, I64(0)), I64(0), count)
        scratch = low.scratch_memory(b, acc, [b.mul(count, out_w), feats])
        c, c_first = scratch.ptr, b.mul(hull[0], out_w)

    def part(pb: ir.IRBuilder, rows: tuple[ir.Value, ir.Value],
             blocks: tuple[ir.Value, ir.Value]) -> None:
        cols = (pb.mul(blocks[0], nr), smin(pb, pb.mul(blocks[1], nr), feats))
        if band is None:
            assert source is not None
            rows_of(pb, rows, blocks, cols, source)
            return
        # Bands of rows, each start to end (its input rows, the kernel, the epilogue) while
        # its input and output are in L2.
        per, band_scratch = band

        def image(ib: ir.IRBuilder, bn: ir.Value) -> None:
            base = ib.mul(bn, out_h)
            oh_lo = smax(ib, ib.sub(rows[0], base), I64(0))
            oh_hi = smin(ib, ib.sub(rows[1], base), out_h)
            count = ib.sdiv(ib.add(ib.sub(oh_hi, oh_lo), I64(per - 1)), I64(per))

            def one(cb: ir.IRBuilder, j: ir.Value) -> None:
                oh0 = cb.add(oh_lo, cb.mul(j, I64(per)))
                oh1 = smin(cb, cb.add(oh0, I64(per)), oh_hi)
                pixels = _band_pixels(low, cb, x, xm, op, kernel, xd, band_scratch, bn, (oh0, oh1))
                rows_of(cb, (cb.add(base, oh0), cb.add(base, oh1)), blocks, cols, pixels)
            for_range(ib, I64(0), smax(ib, count, I64(0)), one, "band")
        for_range(pb, pb.sdiv(rows[0], out_h),
                  pb.sdiv(pb.add(rows[1], pb.sub(out_h, I64(1))), out_h), image, "image")

    def rows_of(pb: ir.IRBuilder, rows: tuple[ir.Value, ir.Value],
                blocks: tuple[ir.Value, ir.Value], cols: tuple[ir.Value, ir.Value],
                source: Pixels) -> None:
        """Output rows [rows) of the channel blocks [blocks): init, kernel, epilogue."""
        def start(rb: ir.IRBuilder, r: ir.Value) -> None:
            bn, oh = rb.sdiv(r, out_h), rb.srem(r, out_h)
            if scratch is None:
                accumulate_into(low, rb, init, dest, [bn, oh], (I64(0), out_w), cols, acc)
                return
            at = rb.gep(scratch.ptr, [rb.mul(rb.sub(r, hull[0]), rb.mul(out_w, feats))],
                        inbounds=True)
            fill_row(low, rb, init, layout, bn, oh, out_w, feats, acc, at, cols)
        if row is None:
            for_range(pb, rows[0], rows[1], start, "init")
        kernel.run(pb, w, op.filter_layout, source, (pb.mul(rows[0], out_w),
                   pb.mul(rows[1], out_w)), c, c_first, feats, panels, blocks, row)

        def finish(rb: ir.IRBuilder, r: ir.Value) -> None:
            bn, oh = rb.sdiv(r, out_h), rb.srem(r, out_h)
            if scratch is not None:
                at = rb.gep(scratch.ptr, [rb.mul(rb.sub(r, hull[0]), rb.mul(out_w, feats))],
                            inbounds=True)
                write_row(low, rb, Strided(at, feats, acc), dest, layout, bn, oh, out_w, cols)
            spans = {"N": (bn, rb.add(bn, I64(1))), "H": (oh, rb.add(oh, I64(1))),
                     "W": (I64(0), out_w)}
            finish_block(low, rb, n, [spans.get(d, cols) for d in layout])
        # An epilogue the kernel applied as it stored the output leaves nothing to finish.
        if kernel.epilogue is None:
            for_range(pb, rows[0], rows[1], finish, "finish")
    return part


# What a band of output rows keeps in L2 (of 2 MiB or more): its input rows, and its output
# rows again. A whole large image did not: VGG's 224 x 224 x 64 layer wrote a 13 MB padded
# copy of its input and read it back, and its ReLU read and wrote the 13 MB output a second time.
BAND_BYTES = 512 * 1024


def _band_rows(low: EntryLowering, b: ir.IRBuilder, x: ValueRef, xm: Memory | None,
               op: k.Conv2D,
               kernel: DirectConv, xd: dict[str, ir.Value], od: dict[str, ir.Value]
               ) -> tuple[int, tuple[Memory, RowCopy] | None] | None:
    """(output rows per band, scratch for a band's input rows, None when the input is read in
    place) for a convolution whose image is larger than BAND_BYTES, read in place, through its
    pad (`padded_row_copy`) or as the transpose of an NCHW image (`transposed_row_copy`); None
    for one that runs whole (a small image: bands would cut its register tiles, which may span
    rows and images)."""
    g = kernel.g
    copy = None if xm is not None else padded_row_copy(low, x) or transposed_row_copy(low, x)
    sizes = [getattr(d, "constant", None) for d in (xd["H"], xd["W"], xd["C"], od["W"], od["F"])]
    if not all(isinstance(v, int) for v in sizes) or op.input_layout != "NHWC" or \
            (g.sh, g.sw) != op.strides or (xm is None and copy is None):
        return None
    in_h, in_w, chans, out_w, feats = (int(v) for v in sizes)  # type: ignore[arg-type]
    in_row, out_row = in_w * chans * 4, out_w * feats * 4
    if max(in_h * in_row, g.out_h * out_row) <= BAND_BYTES:
        return None
    reach = (g.kh - 1) * g.dh + 1  # input rows the first output row of a band reads
    per = max(1, min(BAND_BYTES // out_row, (BAND_BYTES // in_row - reach) // g.sh + 1))
    if per >= g.out_h:
        return None
    if xm is not None:
        return per, None
    assert copy is not None
    slab_rows = (per - 1) * g.sh + reach
    return per, (low.scratch_memory(b, "f32", [I64(slab_rows), xd["W"], xd["C"]]), copy)


def _band_pixels(low: EntryLowering, b: ir.IRBuilder, x: ValueRef, xm: Memory | None,
                 op: k.Conv2D, kernel: DirectConv, xd: dict[str, ir.Value],
                 scratch: tuple[Memory, RowCopy] | None, bn: ir.Value,
                 band: tuple[ir.Value, ir.Value]) -> Pixels:
    """The input as the kernel reads it for output rows [band) of image bn: in place, or its
    rows copied with their pad into `scratch` (slab and row copy), addressed as if the slab were
    the whole image."""
    row_elements = b.mul(xd["W"], xd["C"])
    image_elements = b.mul(xd["H"], row_elements)
    if scratch is None:
        assert xm is not None
        return Pixels(xm.ptr, I64(0), image_elements, row_elements)
    g = kernel.g
    slab, copy = scratch
    ih0 = b.mul(band[0], I64(g.sh))
    reach = b.add(b.mul(b.sub(band[1], I64(1)), I64(g.sh)), I64((g.kh - 1) * g.dh + 1))
    ih1 = smin(b, reach, xd["H"])
    for_range(b, ih0, ih1, lambda rb, ih: copy(
        rb, bn, ih, rb.gep(slab.ptr, [rb.mul(rb.sub(ih, ih0), row_elements)], inbounds=True)),
        "ih")
    # Row ih of image bn at slab + (ih - ih0) rows: the kernel computes offsets from image
    # bn's row 0, ih0 rows before the slab's first.
    return Pixels(b.gep(slab.ptr, [b.neg(b.mul(ih0, row_elements))]), bn, image_elements,
                  row_elements)


def packed_filter(low: EntryLowering, b: ir.IRBuilder, op: k.Conv2D,
                  nr: int) -> ir.Value | None:
    """The filter's panels when global-optimization packed it at compile time
    (pack_conv_filters.py) in panels of `nr` channels, the kernel's."""
    sizes = dict(zip(op.filter_layout, low.kv.shape[low.kv.ref(op.filter)]))
    if not all(isinstance(d, int) for d in sizes.values()):
        return None
    return packed_source(low, b, low.kv.ref(op.filter), conv_panels_permutation(op.filter_layout),
                         conv_panels_shape(sizes, nr))  # type: ignore[arg-type]


def _input_pixels(low: EntryLowering, b: ir.IRBuilder, x: ValueRef, xm: Memory | None,
                  op: k.Conv2D, kernel: DirectConv, rows: tuple[ir.Value, ir.Value],
                  xd: dict[str, ir.Value], out: tuple[ir.Value, ir.Value]) -> Pixels:
    """The input as the direct kernel reads it. NHWC memory is read in place. Another layout,
    a padded input (padded_input.py) or an NCHW image transposed (`transposed_row_copy`), is
    first brought to NHWC scratch, once per workgroup
    range and only for the input rows its output rows [lo, hi) read; for a strided 1 x 1
    convolution (whose kernel then runs with stride 1, `direct_kernel`) only the pixels it
    reads, OH x OW of them."""
    from weir.compiler.targets.llvm_cpu.element_eval import Memory
    (sh, sw), (dh, _) = op.strides, op.dilations
    out_h, out_w = out
    sampled = (kernel.g.sh, kernel.g.sw) != (sh, sw)
    height, width = (out_h, out_w) if sampled else (xd["H"], xd["W"])
    row_elements = b.mul(width, xd["C"])
    image_elements = b.mul(height, row_elements)
    if xm is not None:
        return Pixels(xm.ptr, I64(0), image_elements, row_elements)
    lo, hi = rows
    first = b.sdiv(lo, out_h)
    count = b.sub(b.sdiv(b.add(hi, b.sub(out_h, I64(1))), out_h), first)
    count = b.select(b.icmp_signed("<", count, I64(0)), I64(0), count)
    slab = low.scratch_memory(b, low.kv.dtype[x], [count, height, width, xd["C"]])
    fast = None if sampled else nchw_row_copy(low, x) if op.input_layout == "NCHW" else \
        padded_row_copy(low, x) or transposed_row_copy(low, x) \
        if op.input_layout == "NHWC" else None

    def image(ib: ir.IRBuilder, i: ir.Value) -> None:
        bn = ib.add(first, i)
        base = ib.mul(bn, out_h)
        oh_lo = ib.sub(lo, base)
        oh_lo = ib.select(ib.icmp_signed("<", oh_lo, I64(0)), I64(0), oh_lo)
        oh_hi = smin(ib, ib.sub(hi, base), out_h)

        def convert(hb: ir.IRBuilder, row: ir.Value) -> None:
            line = Memory(slab.address(hb, [i, row, I64(0), I64(0)]), slab.dtype,
                          [width, xd["C"]])
            if fast is not None:
                fast(hb, bn, row, line.ptr)
                return
            ih = hb.mul(row, I64(sh)) if sampled else row
            copy_input_row(low, hb, x, op.input_layout, bn, ih, width, xd["C"], line,
                           sw if sampled else 1)
        if sampled:
            for_range(ib, oh_lo, oh_hi, convert, "ih")
            return
        reach = ib.add(ib.mul(ib.sub(oh_hi, I64(1)), I64(sh)),
                       ib.add(ib.mul(ib.sub(I64(kernel.g.kh), I64(1)), I64(dh)), I64(1)))
        for_range(ib, ib.mul(oh_lo, I64(sh)), smin(ib, reach, xd["H"]), convert, "ih")
    for_range(b, I64(0), count, image, "image")
    return Pixels(slab.ptr, first, image_elements, row_elements)
