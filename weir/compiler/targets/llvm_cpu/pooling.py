"""NHWC pooling of f32 with static sizes, in vectors along channels. A pooling has no
contraction: each output element combines (max or add) the KH x KW input elements of its
window, so it is bound by memory and by the moves of its data. As plain loops over output
elements with the window innermost (convolution.py's `_window_loops`), it moved one scalar at a
time; here each output pixel combines vectors of its channels, which are contiguous in the input
and in the output alike.

Each output vector starts from the init (a splat of a constant fill, else the init's row copied
into the output row first), then takes the taps in (kh, kw) order, `acc = combine(acc, tap)`,
the very operations and order of the scalar loops, lane by lane: a sum adds its taps in the
same order, so the results are the same bit for bit. A pixel's channels run as GROUP vectors side
by side (independent chains whose latencies overlap), the channels past the last whole vector as
narrower vectors, halving down to one lane.

An input that is a pad of an image (padded_input.py) is read from the image: only the border
pixels and rows check their taps against its bounds, and a tap outside it combines the pad's
value into the sum or maximum, as the padded copy's element would have been. Output rows (n, oh)
are the workgroups, as for the scalar loops. An epilogue (an average's division) finishes each
block of channels right after its store: LLVM then takes the block's values from the store
rather than loading them back, and stores each element once. Finished per row, or per pixel,
the epilogue stored every element twice (DenseNet's average pools ran up to a third slower
than the scalar loops, which LLVM had vectorised with their epilogue)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

import llvmlite.ir as ir

from weir.compiler.targets.llvm_cpu import scalars as s
from weir.compiler.targets.llvm_cpu.contraction import Strided, accumulate_into
from weir.compiler.targets.llvm_cpu.conv_tiles import splat
from weir.compiler.targets.llvm_cpu.depthwise import load_f32, store_f32
from weir.compiler.targets.llvm_cpu.epilogue import finish_block
from weir.compiler.targets.llvm_cpu.loops import I64, for_range
from weir.compiler.targets.llvm_cpu.padded_input import (
    by_border_rows,
    inside,
    PaddedImage,
    padded_image,
)
from weir.format import kernel_description as k

if TYPE_CHECKING:
    from weir.compiler.targets.llvm_cpu.element_eval import Memory
    from weir.compiler.targets.llvm_cpu.lower_entry import EntryLowering

# Channel vectors of one pixel that one loop iteration combines side by side.
GROUP = 4


def vector_pool_applies(low: EntryLowering, n: int, op: k.Pool2D) -> bool:
    """NHWC, f32 throughout, static sizes, and an input the kernel can read directly: memory,
    or a pad of an image in memory. Anything else keeps the scalar loops, which evaluate an
    elementwise input per tap rather than materialise it whole in every workgroup."""
    kv = low.kv
    x = kv.ref(op.input)
    refs = (x, kv.ref(op.init), (n, 0))
    return op.layout == "NHWC" and all(kv.dtype[v] == "f32" for v in refs) and \
        all(isinstance(d, int) for v in refs for d in kv.shape[v]) and \
        (x in low.memory or padded_image(low, x) is not None)


@dataclass(frozen=True)
class _Row:
    """What the taps of one output row (bn, oh) read and write."""

    op: k.Pool2D
    source: Memory  # the input, or the image a padded input pads
    image: PaddedImage | None
    out: Strided  # the output row: OW x C
    bn: ir.Value
    oh: ir.Value
    start: ir.Constant | None  # the init's constant, else the output row holds the init
    chans: int
    # The epilogue of output pixel ow's channels [ch, ch + width).
    finish: Callable[[ir.IRBuilder, ir.Value, ir.Value, int], None]


def lower_vector_pool(low: EntryLowering, b: ir.IRBuilder, n: int, op: k.Pool2D,
                      partitioned: bool) -> tuple[k.Dim, int]:
    kv = low.kv
    x, init, out = kv.ref(op.input), kv.ref(op.init), (n, 0)
    images, out_h, out_w, chans = (int(d) for d in kv.shape[out])
    rows = images * out_h
    extent: k.Dim = 1
    tile = 1
    lo, hi = I64(0), I64(rows)
    if partitioned:
        _, extent, tile = low.grid((rows,), out_w * chans * op.window[0] * op.window[1])
        lo, hi = low.partition_bounds(b, I64(rows), tile)
    image = padded_image(low, x)
    source = image.source if image is not None else low.memory[x]
    fill = kv.ops[init[0]]
    start = s.constant("f32", fill.value) if isinstance(fill, k.Fill) and \
        init not in low.memory else None
    dest = low.memory[out]
    lanes = low.cpu.vector_bits // 32

    def row(rb: ir.IRBuilder, r: ir.Value) -> None:
        bn, oh = rb.sdiv(r, I64(out_h)), rb.srem(r, I64(out_h))
        c, _ = accumulate_into(low, rb, init, dest, [bn, oh], (I64(0), I64(out_w)),
                               (I64(0), I64(chans)), "f32", fill=start is None)

        def finish(pb: ir.IRBuilder, ow: ir.Value, ch: ir.Value, width: int) -> None:
            finish_block(low, pb, n, [(bn, pb.add(bn, I64(1))), (oh, pb.add(oh, I64(1))),
                                      (ow, pb.add(ow, I64(1))), (ch, pb.add(ch, I64(width)))])
        at = _Row(op, source, image, c, bn, oh, start, chans, finish)
        by_border_rows(rb, image, oh, out_h, op.window[0], op.strides[0], op.dilations[0],
                       lambda hb, check_h: _pixels(hb, at, out_w, lanes, check_h))
    for_range(b, lo, hi, lambda rb, r: low.scoped(rb, lambda: row(rb, r)), "row")
    return extent, tile


def _pixels(b: ir.IRBuilder, at: _Row, out_w: int, lanes: int, check_h: bool) -> None:
    """The output row's pixels: those whose window crosses the image's left or right border
    check their taps' columns, the others read straight on."""
    image, op = at.image, at.op
    inner_lo, inner_hi = (0, out_w) if image is None else image.inner_outputs(
        1, out_w, op.window[1], op.strides[1], op.dilations[1])
    for first, last, check_w in ((0, inner_lo, True), (inner_lo, inner_hi, False),
                                 (inner_hi, out_w, True)):
        if first < last:
            for_range(b, I64(first), I64(last),
                      lambda pb, ow, check_w=check_w: _pixel(pb, at, ow, lanes, check_h,
                                                             check_w), "ow")


def _pixel(b: ir.IRBuilder, at: _Row, ow: ir.Value, lanes: int, check_h: bool,
           check_w: bool) -> None:
    """Output pixel (bn, oh, ow): GROUP whole vectors of channels per loop iteration, then the
    whole vectors left over and the last channels in narrower vectors, side by side."""
    whole = at.chans // lanes
    groups = whole // GROUP
    if groups:
        def group(gb: ir.IRBuilder, g: ir.Value) -> None:
            first = gb.mul(g, I64(GROUP * lanes))
            _taps(gb, at, ow, [(gb.add(first, I64(j * lanes)), lanes) for j in range(GROUP)],
                  check_h, check_w)
        for_range(b, I64(0), I64(groups), group, "cg")
    rest = [(I64(ch), lanes) for ch in range(groups * GROUP * lanes, whole * lanes, lanes)]
    ch, width = whole * lanes, lanes
    while width > 1:
        width //= 2
        if (at.chans - ch) & width:
            rest.append((I64(ch), width))
            ch += width
    if rest:
        _taps(b, at, ow, rest, check_h, check_w)


def _taps(b: ir.IRBuilder, at: _Row, ow: ir.Value, blocks: list[tuple[ir.Value, int]],
          check_h: bool, check_w: bool) -> None:
    """Channel blocks (first channel, width) of output pixel ow: each starts from the init,
    combines its window's taps in (kh, kw) order and is stored. With `check_h` / `check_w` a
    tap's row / column is checked against the padded image's source, and a tap outside it is
    the pad's value."""
    op, image = at.op, at.image
    (sh, sw), (dh, dw) = op.strides, op.dilations
    top, left = (image.top, image.left) if image is not None else (0, 0)
    kind = "maximumf" if op.kind == "max" else "addf"
    outs = [b.gep(at.out.ptr, [b.add(b.mul(ow, I64(at.chans)), ch)], inbounds=True)
            for ch, _ in blocks]
    accs = [load_f32(b, out, width) if at.start is None else splat(b, at.start, width)
            for out, (_, width) in zip(outs, blocks)]
    for kh in range(op.window[0]):
        ih = b.add(b.mul(at.oh, I64(sh)), I64(kh * dh - top))
        row_ok = None
        if check_h:
            assert image is not None
            row_ok, ih = inside(b, ih, image.rows)
        for kw in range(op.window[1]):
            iw = b.add(b.mul(ow, I64(sw)), I64(kw * dw - left))
            ok = row_ok
            if check_w:
                assert image is not None
                ok, iw = inside(b, iw, image.cols, row_ok)
            pixel = at.source.address(b, [at.bn, ih, iw, I64(0)])
            for j, (ch, width) in enumerate(blocks):
                value = load_f32(b, b.gep(pixel, [ch], inbounds=True), width)
                if ok is not None:
                    assert image is not None
                    value = b.select(ok, value, image.pad_lanes(width))
                accs[j] = s.emit_scalar(b, kind, [accs[j], value], "f32", None, ["f32", "f32"])
    for acc, out, (_, width) in zip(accs, outs, blocks):
        store_f32(b, acc, out, width)
    for ch, width in blocks:
        at.finish(b, ow, ch, width)
