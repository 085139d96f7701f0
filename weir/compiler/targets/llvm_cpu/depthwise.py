"""Depthwise convolution of f32 with static sizes, in vectors. It has no contraction: each output
element is the sum of KH*KW products, so it is bound by memory, and the point is to move
vectors, not scalars. The vectors run along the dimension that is contiguous in both the input
and the output:

- NHWC (filter HWC): along channels. For each output pixel, a vector of channels of the output
  accumulates the products of the input's vector at each tap with the filter's vector there.
  Rows run in bands: each block of channels runs over the band's rows before the next, so the
  lines of input a block reads stay in L1 from one output row to the next.
- NCHW (filter CHW): along the output width, one (n, c, oh) row at a time. The input's vector
  at a tap is contiguous when the width stride is 1 (else one load of the span it covers,
  shuffled), the filter's weight a broadcast. LLVM's own vectoriser leaves this form scalar
  when the stride is not 1 (MobileNet's downsampling layers).

Each accumulator vector starts from the bias (NHWC), from zero (NHWC, an init of zeros) or from
the output (initialised from the init, as the other convolutions do), gains the taps in (kh, kw)
order (multiply-adds, which LLVM fuses where the CPU has FMA), and is stored once. Channels or
widths past the last whole vector run the same taps on scalars. Rows are the workgroups.

An NHWC input that is a pad of an image (padded_input.py) is read from the image: only the
border pixels and rows check their taps' bounds."""

from __future__ import annotations

from typing import TYPE_CHECKING

import llvmlite.ir as ir

from weir.compiler.targets.llvm_cpu.contraction import (
    Strided,
    accumulate_into,
    bias_row,
    in_memory,
    starts_from_zero,
)
from weir.compiler.targets.llvm_cpu.conv_tiles import fmuladd, splat
from weir.compiler.targets.llvm_cpu.epilogue import (
    apply_epilogue,
    finish_block,
    input_offsets,
    vector_epilogue,
    VectorEpilogue,
)
from weir.compiler.targets.llvm_cpu.epilogue_program import at_offset
from weir.compiler.targets.llvm_cpu.loops import I64, for_range, smin
from weir.compiler.targets.llvm_cpu.padded_input import (
    by_border_rows,
    inside,
    PaddedImage,
    padded_image,
)
from weir.compiler.targets.llvm_cpu.scalars import prefetch_write
from weir.format import kernel_description as k

if TYPE_CHECKING:
    from weir.compiler.targets.llvm_cpu.element_eval import Memory
    from weir.compiler.targets.llvm_cpu.lower_entry import EntryLowering

_F32 = ir.FloatType()
_I32 = ir.IntType(32)


def vector_depthwise_applies(low: EntryLowering, op: k.Conv2D, n: int) -> bool:
    """f32 throughout, sizes static, and one of the two layouts exporters write."""
    kv = low.kv
    refs = (kv.ref(op.input), kv.ref(op.filter), kv.ref(op.init), (n, 0))
    layouts = {("NHWC", "HWC"), ("NCHW", "CHW")}
    return (all(kv.dtype[v] == "f32" for v in refs)
            and all(isinstance(d, int) for v in refs for d in kv.shape[v])
            and (op.input_layout, op.filter_layout) in layouts)


def lower_vector_depthwise(low: EntryLowering, b: ir.IRBuilder, n: int, op: k.Conv2D,
                           partitioned: bool) -> tuple[k.Dim, int]:
    kv = low.kv
    x, f, init, out = kv.ref(op.input), kv.ref(op.filter), kv.ref(op.init), (n, 0)
    layout = op.input_layout
    shape = dict(zip(layout, kv.shape[out]))
    window = dict(zip(op.filter_layout, kv.shape[f]))
    kh_n, kw_n = int(window["H"]), int(window["W"])
    nchw = layout == "NCHW"
    # The rows that are workgroups: (n, oh), or (n, c, oh) channels first.
    row_dims = "NCH" if nchw else "NH"
    rows = 1
    for d in row_dims:
        rows *= int(shape[d])
    per_row = int(shape["W"]) * kh_n * kw_n * (1 if nchw else int(shape["C"]))
    extent: k.Dim = 1
    tile = 1
    lo, hi = I64(0), I64(rows)
    if partitioned:
        _, extent, tile = low.grid((rows,), per_row)
        lo, hi = low.partition_bounds(b, I64(rows), tile)
    # A padded NHWC input is read from its source through the window's bounds.
    image = padded_image(low, x) if not nchw else None
    xm = image.source if image is not None else in_memory(low, b, x)
    fm = in_memory(low, b, f)
    dest = low.memory[out]
    # A bias starts each pixel's sums, loaded once per channel block like the filter.
    bias = None if nchw else bias_row(low, init, "f32")
    lanes = low.cpu.vector_bits // 32

    def position(rb: ir.IRBuilder, r: ir.Value) -> dict[str, ir.Value]:
        at: dict[str, ir.Value] = {}
        for d in reversed(row_dims):
            size = I64(int(shape[d]))
            at[d] = rb.srem(r, size)
            r = rb.sdiv(r, size)
        return at

    ow_n, c_n = I64(int(shape["W"])), I64(int(shape["C"]))
    if nchw:
        def row(rb: ir.IRBuilder, r: ir.Value) -> None:
            at = position(rb, r)
            c, _ = accumulate_into(low, rb, init, dest, [at["N"], at["C"]], (at["H"],
                                   rb.add(at["H"], I64(1))), (I64(0), ow_n), "f32")
            _nchw_row(rb, op, xm, fm, at, c, int(shape["W"]), kh_n, kw_n, lanes)
            finish_block(low, rb, n, [(at["N"], rb.add(at["N"], I64(1))),
                                      (at["C"], rb.add(at["C"], I64(1))),
                                      (at["H"], rb.add(at["H"], I64(1))), (I64(0), ow_n)])
        for_range(b, lo, hi, lambda rb, r: low.scoped(rb, lambda: row(rb, r)), "row")
        return extent, tile
    # A band of rows runs each block of channels over all its rows before the next block, so
    # the input lines a block reads stay in L1 from one output row to the next (KH rows read
    # each), and the band stays in L2 for the other blocks.
    from_zero = bias is None and starts_from_zero(low, init)
    # An epilogue of a few exact ops (ReLU6) is applied as the sums are stored: no pass of it.
    epilogue = vector_epilogue(low, n)
    # Where its other tensors (a residual) lie against the output, in bytes.
    offsets = input_offsets(b, low, epilogue)
    band = band_rows(int(shape["C"]), int(shape["W"]), int(kv.shape[x][2]))

    def rows_of(rb: ir.IRBuilder, first: ir.Value, last: ir.Value) -> None:
        if bias is None and not from_zero:
            def fill(fb: ir.IRBuilder, r: ir.Value) -> None:
                at = position(fb, r)
                accumulate_into(low, fb, init, dest, [at["N"], at["H"]], (I64(0), ow_n),
                                (I64(0), c_n), "f32")
            for_range(rb, first, last, fill, "fill")

        def one_row(hb: ir.IRBuilder, r: ir.Value, ch: ir.Value, width: int,
                    weights: list[list[ir.Value]]) -> None:
            at = position(hb, r)
            c = Strided(dest.address(hb, [at["N"], at["H"], I64(0), I64(0)]), c_n, "f32")

            def run(eb: ir.IRBuilder, check_h: bool) -> None:
                _nhwc_block(eb, op, xm, at, c, int(shape["W"]), int(shape["C"]), ch, width,
                            weights, image, check_h, bias, from_zero, epilogue, offsets)
            by_border_rows(hb, image, at["H"], int(shape["H"]), kh_n, op.strides[0],
                           op.dilations[0], run)

        def block(cb: ir.IRBuilder, ch: ir.Value, width: int) -> None:
            weights = [[load_f32(cb, fm.address(cb, [I64(kh), I64(kw), ch]), width)
                        for kw in range(kw_n)] for kh in range(kh_n)]
            for_range(cb, first, last, lambda hb, r: one_row(hb, r, ch, width, weights), "row")
        chans = int(shape["C"])
        whole = chans - chans % lanes
        for_range(rb, I64(0), I64(whole // lanes),
                  lambda vb, v: block(vb, vb.mul(v, I64(lanes)), lanes), "cv")
        for_range(rb, I64(whole), I64(chans), lambda sb, ch: block(sb, ch, 1), "cs")

        def finish(fb: ir.IRBuilder, r: ir.Value) -> None:
            at = position(fb, r)
            finish_block(low, fb, n, [(at["N"], fb.add(at["N"], I64(1))),
                                      (at["H"], fb.add(at["H"], I64(1))), (I64(0), ow_n),
                                      (I64(0), c_n)])
        if epilogue is None:
            for_range(rb, first, last, finish, "finish")

    def band_of(bb: ir.IRBuilder, i: ir.Value) -> None:
        first = bb.add(lo, bb.mul(i, I64(band)))
        last = smin(bb, bb.add(first, I64(band)), hi)
        low.scoped(bb, lambda: rows_of(bb, first, last))
    bands = b.sdiv(b.add(b.sub(hi, lo), I64(band - 1)), I64(band))
    for_range(b, I64(0), bands, band_of, "band")
    return extent, tile


def _nhwc_block(b: ir.IRBuilder, op: k.Conv2D, xm: Memory, at: dict[str, ir.Value],
                c: Strided, out_w: int, chans: int, ch: ir.Value, width: int,
                weights: list[list[ir.Value]], image: PaddedImage | None, check_h: bool,
                bias: ir.Value | None, from_zero: bool,
                epilogue: VectorEpilogue | None, offsets: list[ir.Value]) -> None:
    """One block of channels (`width` from `ch`) of one output row, PIXELS output pixels at a
    time, each accumulating its taps, so the multiply-adds of different pixels overlap instead
    of waiting on one another and only the input is loaded per product.

    A padded input (`image`) is read from its source: the pixels whose window crosses the
    left or right border check each tap's column, and a row whose window crosses the top or
    bottom border (`check_h`) each tap's row; a tap outside reads the pad's value. The sums
    start from the `bias` (C values) when there is one, from zero when `from_zero` (an init of
    zeros, which then is never written or read), else from the output row; an `epilogue` is
    applied to them as they are stored."""
    (sh, sw), (dh, dw) = op.strides, op.dilations
    kh_n, kw_n = len(weights), len(weights[0])
    top, left = (image.top, image.left) if image else (0, 0)
    rows, cols = (image.rows, image.cols) if image else (0, 0)
    inner_lo, inner_hi = image.inner_outputs(1, out_w, kw_n, sw, dw) if image else (0, out_w)
    start = None
    if bias is not None:
        start = load_f32(b, b.gep(bias, [ch], inbounds=True), width)
    elif from_zero:
        start = splat(b, ir.Constant(_F32, 0.0), width)
    pad = None if image is None else image.pad_lanes(width)

    def pixels(pb: ir.IRBuilder, first: ir.Value, count: int, check_w: bool) -> None:
        outs = [pb.gep(c.ptr, [pb.add(pb.mul(pb.add(first, I64(u)), c.ld), ch)],
                       inbounds=True) for u in range(count)]
        accs = [load_f32(pb, out, width) if start is None else start for out in outs]
        for kh in range(kh_n):
            ih = pb.add(pb.mul(at["H"], I64(sh)), I64(kh * dh - top))
            row_ok = None
            if check_h:
                row_ok, ih = inside(pb, ih, rows)
            for kw in range(kw_n):
                for u in range(count):
                    iw = pb.add(pb.mul(pb.add(first, I64(u)), I64(sw)), I64(kw * dw - left))
                    ok = row_ok
                    if check_w:
                        ok, iw = inside(pb, iw, cols, row_ok)
                    value = load_f32(pb, xm.address(pb, [at["N"], ih, iw, ch]), width)
                    if ok is not None:
                        assert pad is not None
                        value = pb.select(ok, value, pad)
                    accs[u] = fmuladd(pb, value, weights[kh][kw], accs[u])
        for acc, out in zip(accs, outs):
            if epilogue is not None:
                acc = apply_epilogue(pb, acc, epilogue, [
                    load_f32(pb, at_offset(pb, out, offset), width) for offset in offsets])
            store_f32(pb, acc, out, width)
            # The same line of the next output row, fetched for ownership while this row
            # runs: in a call a depthwise layer's output lines are cold, and each store
            # waited for its line (MobileNetV2's 7 x 7 x 960 layer: 26 us, 20 with the
            # output in cache, 20.6 with this).
            prefetch_write(pb, pb.gep(out, [I64(out_w * chans)]))
    groups = (inner_hi - inner_lo) // PIXELS
    grouped = inner_lo + groups * PIXELS
    if inner_lo > 0:
        for_range(b, I64(0), I64(inner_lo), lambda sb, ow: pixels(sb, ow, 1, True), "owl")
    for_range(b, I64(0), I64(groups), lambda gb, g: pixels(
        gb, gb.add(gb.mul(g, I64(PIXELS)), I64(inner_lo)), PIXELS, False), "ow4")
    for_range(b, I64(grouped), I64(inner_hi), lambda sb, ow: pixels(sb, ow, 1, False), "ow")
    if inner_hi < out_w:
        for_range(b, I64(inner_hi), I64(out_w), lambda sb, ow: pixels(sb, ow, 1, True), "owr")


# Output pixels whose taps one iteration interleaves (independent multiply-add chains).
PIXELS = 4

# The input and output rows a band holds, kept in L2 while its blocks of channels run over it:
# against a row at a time, 0.95-1.00x on 56 x 56 and 112 x 112 images of 64 channels.
BAND_BYTES = 256 * 1024


def band_rows(chans: int, out_w: int, in_w: int) -> int:
    """Output rows per band: as many as BAND_BYTES holds of their input and output rows."""
    return max(1, BAND_BYTES // (4 * chans * (out_w + in_w)))


def _nchw_row(b: ir.IRBuilder, op: k.Conv2D, xm: Memory, fm: Memory, at: dict[str, ir.Value],
              c: Strided, out_w: int, kh_n: int, kw_n: int, lanes: int) -> None:
    (sh, sw), (dh, dw) = op.strides, op.dilations
    whole = out_w - out_w % lanes

    def taps(tb: ir.IRBuilder, ow: ir.Value, width: int) -> None:
        out = tb.gep(c.ptr, [ow], inbounds=True)
        acc = load_f32(tb, out, width)
        for kh in range(kh_n):
            ih = tb.add(tb.mul(at["H"], I64(sh)), I64(kh * dh))
            for kw in range(kw_n):
                iw = tb.add(tb.mul(ow, I64(sw)), I64(kw * dw))
                start = xm.address(tb, [at["N"], at["C"], ih, iw])
                value = load_f32(tb, start, width) if sw == 1 else _gather(tb, start, sw, width)
                weight = tb.load(fm.address(tb, [at["C"], I64(kh), I64(kw)]))
                acc = fmuladd(tb, value, splat(tb, weight, width), acc)
        store_f32(tb, acc, out, width)

    for_range(b, I64(0), I64(whole // lanes),
              lambda vb, v: taps(vb, vb.mul(v, I64(lanes)), lanes), "wv")
    for_range(b, I64(whole), I64(out_w), lambda sb, ow: taps(sb, ow, 1), "ws")


def load_f32(b: ir.IRBuilder, at: ir.Value, width: int) -> ir.Value:
    """`width` f32 values from `at` (a scalar for one), aligned as the elements only."""
    if width == 1:
        return b.load(at, align=4)
    return b.load(b.bitcast(at, ir.VectorType(_F32, width).as_pointer()), align=4)


def store_f32(b: ir.IRBuilder, value: ir.Value, at: ir.Value, width: int) -> None:
    """`value` (`width` f32 lanes, a scalar for one) to `at`."""
    if width == 1:
        b.store(value, at, align=4)
    else:
        b.store(value, b.bitcast(at, value.type.as_pointer()), align=4)


def _gather(b: ir.IRBuilder, start: ir.Value, stride: int, width: int) -> ir.Value:
    """`width` elements `stride` apart from `start`, as a vector: one load of the span they
    cover (no element past the last one read), then a shuffle of every stride-th lane."""
    if width == 1:
        return b.load(start, align=4)
    span = (width - 1) * stride + 1
    whole = b.load(b.bitcast(start, ir.VectorType(_F32, span).as_pointer()), align=4)
    picks = ir.Constant(ir.VectorType(_I32, width), [lane * stride for lane in range(width)])
    return b.shuffle_vector(whole, ir.Constant(whole.type, ir.Undefined), picks)
