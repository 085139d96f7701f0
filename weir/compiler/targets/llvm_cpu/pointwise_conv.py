"""1x1 convolutions with stride 1 of f32 images as GEMMs: channels first (NCHW input, FCHW
filter) one per image and workgroup block, written straight into the NFHW output; channels
last (NHWC input, HWCF filter) one per workgroup block of pixels, the pixels the GEMM's rows.

Why: channels first, a 1x1 convolution is a matrix product whose operands already lie in
memory as the GEMM reads them: out[n] (F x OH*OW) = filter (F x C) @ input[n] (C x H*W), each
channel's pixels contiguous, and a range of output rows is a contiguous range of columns, so
workgroups split it as a matmul is split, by pixels or by output channels. The
direct kernel would first bring the rows to NHWC scratch and transpose its result back, which
for the expansions of an inverted-residual network (16 -> 96 channels over 112 x 112 pixels,
K = 16) costs several times the arithmetic.

Channels last, the pixels are the rows of an (N*H*W) x C matrix and the output an (N*H*W) x F
one, and the filter is the GEMM's packed operand: read as the panels global-optimization
stored at compile time (its panels of a 1 x 1 filter are the GEMM's, P x C x NR) or packed per
workgroup. The direct kernel, built for windows, pays per row of pixels for what the GEMM pays
once: MobileNetV2's 16 -> 96 expansion at 112 x 112 with its bias and ReLU took 2.1 ms as a
direct convolution and 1.3-1.6 ms written as a linalg.matmul of the same operands, one thread;
the whole network 0.87x (local-sync) and 0.89x (local-task) of its time before it ran NHWC."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import llvmlite.ir as ir

from weir.compiler.targets.llvm_cpu import scalars as s
from weir.compiler.targets.llvm_cpu.contraction import (
    bias_row,
    COLUMN_TILE,
    gemm,
    in_memory,
    SHORT_M,
    starts_from_zero,
    Strided,
)
from weir.compiler.targets.llvm_cpu.conv_blocking import ConvGeometry, panel_width, wide_gemm
from weir.compiler.targets.llvm_cpu.gemm_calls import call_gemm, call_gemm_epilogue, PREPACKED_TYPES
from weir.compiler.targets.llvm_cpu.epilogue import finish_block, input_offsets, vector_epilogue
from weir.compiler.targets.llvm_cpu.kernel_values import ValueRef
from weir.compiler.targets.llvm_cpu.loops import I64, for_nest, for_range, smax, smin
from weir.format import kernel_description as k

if TYPE_CHECKING:
    from weir.compiler.targets.llvm_cpu.lower_entry import EntryLowering


# Output channels a workgroup takes at least when channels split: whole register tiles of the
# GEMM (6 rows on 16-register targets, 12 on AVX-512) and enough of them that each workgroup's
# pass over the input's pixels serves many channels (one channel each is a matrix-vector
# product per workgroup, reading the whole input every time).
CHANNEL_TILE = 24


def pointwise_applies(low: EntryLowering, n: int, op: k.Conv2D) -> bool:
    kv = low.kv
    x, w = kv.ref(op.input), kv.ref(op.filter)
    filter_sizes = dict(zip(op.filter_layout, kv.shape[w]))
    return (op.input_layout, op.filter_layout) == ("NCHW", "FCHW") and \
        op.strides == (1, 1) and filter_sizes["H"] == 1 and filter_sizes["W"] == 1 and \
        kv.dtype[x] == kv.dtype[w] == kv.dtype[(n, 0)] == "f32"


# Output bytes of a chunk of a 1x1 convolution's rows (and input bytes, when the input is an
# expression computed into scratch): the chunk stays in L2 (2 MiB on the cores in use, 512 KiB
# on AMD Zen) between its product and its epilogue.
CHUNK_BYTES = 256 << 10
# A filter larger than this does not stay in L2 from one chunk's GEMM to the next.
FILTER_IN_L2 = 1 << 20


def chunk_rows(width: int, feats: int, chans: int, input_in_memory: bool) -> int:
    """Output rows per chunk: about CHUNK_BYTES of what must stay in cache, the output, and the
    input when it is computed into scratch (an input in memory is only read, by the GEMM's
    packing of A: sizing chunks by it too cut ResNet-50's 1024 -> 256 convolutions at 14 x 14
    into chunks of 56 pixels, each streaming the whole 1 MB filter again; by the output alone,
    ResNet-50 took 0.97x the time on local-task, MobileNetV2 0.965x). And when the C x F
    filter is too large to stay in L2, at least C pixels. Each chunk's GEMM then streams the
    whole filter from L3 or memory, which with as many pixels as channels costs no more than
    writing the chunk's P x F output. (SqueezeNet's last 1 x 1 convolution, 512 -> 1000
    channels over 169 pixels, took its 2 MB filter in three chunks of 65 pixels: 1.13 ms where
    one chunk takes 0.96, on one thread.)"""
    kept = feats if input_in_memory else max(feats, chans)
    by_bytes = max(1, CHUNK_BYTES // (4 * width * kept))
    if 4 * chans * feats <= FILTER_IN_L2:
        return by_bytes
    return max(by_bytes, -(-chans // width))


def pointwise_nhwc_applies(low: EntryLowering, n: int, op: k.Conv2D) -> bool:
    """Fewer output channels than a register tile's width (SqueezeNet's squeezes to 16) run on
    the direct kernel instead: the GEMM would pack every pixel's channels for a tile it fills
    by half, where the direct kernel reads them in place (55 x 55 x 128 -> 16: 134 -> 101 us)."""
    kv = low.kv
    refs = (kv.ref(op.input), kv.ref(op.filter), kv.ref(op.init), (n, 0))
    filter_sizes = dict(zip(op.filter_layout, kv.shape[kv.ref(op.filter)]))
    return (op.input_layout, op.filter_layout, op.output_layout) == ("NHWC", "HWCF", "NHWF") \
        and op.strides == (1, 1) and filter_sizes["H"] == 1 and filter_sizes["W"] == 1 and \
        isinstance(filter_sizes["F"], int) and filter_sizes["F"] >= panel_width(low.cpu) and \
        all(kv.dtype[v] == "f32" for v in refs) and \
        all(isinstance(d, int) for v in refs for d in kv.shape[v])


def lower_pointwise_nhwc(low: EntryLowering, b: ir.IRBuilder, n: int, op: k.Conv2D,
                         partitioned: bool) -> tuple[k.Dim, int]:
    """Workgroups take whole output rows (n, oh), so that each block is W pixels times a count
    of rows, a box of the output for the epilogue. A workgroup's rows go in chunks of about
    CHUNK_BYTES of output, and per chunk: the init into the output (unless it is zero or a
    bias: the GEMM then writes from zero, or from the bias), the input expression for its
    pixels (when the input is not memory), the GEMM of its pixels by the filter onto it, the
    epilogue row by row while the chunk is still in cache. (In one piece, a MobileNetV2
    expansion's ReLU6 read its 112 x 112 x 96 output back from memory: 40% on top of the
    product.) A vector epilogue (ReLU, ReLU6, a residual add) the GEMM stores instead, as its
    last depth block's tiles store C: the pass over the chunk took 16-20% of a 16 -> 96
    expansion's time."""
    from weir.compiler.targets.llvm_cpu.direct_conv import packed_filter
    from weir.compiler.targets.llvm_cpu.element_eval import Body
    kv = low.kv
    x, init, out = kv.ref(op.input), kv.ref(op.init), (n, 0)
    images, height, width, feats = (int(d) for d in kv.shape[out])  # type: ignore[arg-type]
    chans = int(kv.shape[x][3])  # type: ignore[arg-type]
    dest = low.memory[out]
    rows = images * height
    extent: k.Dim = 1
    tile = 1
    lo, hi = I64(0), I64(rows)
    if partitioned:
        _, extent, tile = low.grid((rows,), width * feats * chans)
        lo, hi = low.partition_bounds(b, I64(rows), tile)
    xm = low.memory.get(x)
    chunk = chunk_rows(width, feats, chans, xm is not None)
    from_zero = starts_from_zero(low, init)
    # A bias starts the GEMM's tiles: no pass writing it into the output first.
    row = None if from_zero else bias_row(low, init, "f32")
    # An expression is evaluated for a chunk's pixels only (scratch made outside the loop
    # below, since the entry frees it at its end).
    scratch = None if xm is not None else \
        low.scratch_memory(b, "f32", [I64(chunk * width), I64(chans)])
    # Many pixels run in the GEMM's wide tiles, over the wide panels pack-conv-filters stored
    # (its width and this one: `panel_width` of the geometry, as a GEMM).
    g = ConvGeometry(chans, feats, 1, 1, height, width, 1, 1, 1, 1)
    wide = wide_gemm(low.cpu, g)
    panels = packed_filter(low, b, op, panel_width(low.cpu, g, pointwise=True))
    wm = None if panels is not None else in_memory(low, b, kv.ref(op.filter))
    # An epilogue of a few exact ops (ReLU, a residual add) is stored by the GEMM's last tiles
    # (a ReLU6 pass after a 16 -> 96 expansion took a fifth of the convolution's time).
    epilogue = vector_epilogue(low, n) if panels is not None and chans > 0 else None
    offsets = input_offsets(b, low, epilogue)

    def part(cb: ir.IRBuilder, j: ir.Value) -> None:
        r0 = cb.add(lo, cb.mul(j, I64(chunk)))
        r1 = smin(cb, cb.add(r0, I64(chunk)), hi)
        first = cb.mul(r0, I64(width))
        count = cb.mul(cb.sub(r1, r0), I64(width))

        def pixel_rows(body: Callable[[ir.IRBuilder, list[ir.Value]], None], extra: ir.Value,
                       name: str) -> None:
            """body(n, h, w, j) for every pixel of the chunk and j < extra."""
            def each(pb: ir.IRBuilder, idx: list[ir.Value]) -> None:
                r, w, j = idx
                body(pb, [pb.sdiv(r, I64(height)), pb.srem(r, I64(height)), w, j])
            for_nest(cb, [(r0, r1), (I64(0), I64(width)), (I64(0), extra)], each, name)

        if not from_zero and row is None and low.memory.get(init) is not dest:
            pixel_rows(lambda pb, at: s.store_element(
                pb, low.element(pb, init, at, Body()), dest.address(pb, at), "f32"),
                I64(feats), "init")
        if xm is not None:
            a = Strided(cb.gep(xm.ptr, [cb.mul(first, I64(chans))], inbounds=True), I64(chans),
                        "f32")
        else:
            assert scratch is not None

            def evaluate(pb: ir.IRBuilder, at: list[ir.Value]) -> None:
                p = pb.sub(pb.add(pb.mul(pb.add(pb.mul(at[0], I64(height)), at[1]),
                                         I64(width)), at[2]), first)
                s.store_element(pb, low.element(pb, x, at, Body()),
                                scratch.address(pb, [p, at[3]]), "f32")
            pixel_rows(evaluate, I64(chans), "px")
            a = Strided(scratch.ptr, I64(chans), "f32")
        c = Strided(cb.gep(dest.ptr, [cb.mul(first, I64(feats))], inbounds=True), I64(feats),
                    "f32")
        if panels is not None:
            args = [count, I64(feats), I64(chans), a.ptr, a.ld, panels, I64(chans), c.ptr, c.ld]
            if epilogue is not None:
                call_gemm_epilogue(low, cb, args, from_zero or row is not None, row,
                                   epilogue.program, offsets, wide)
            else:
                call_gemm(low, cb, PREPACKED_TYPES, args, from_zero, True, row, wide)
        else:
            assert wm is not None
            gemm(low, cb, count, I64(feats), I64(chans), a, Strided(wm.ptr, I64(feats), "f32"),
                 c, False, from_zero, row)

        def finish(rb: ir.IRBuilder, r: ir.Value) -> None:
            bn, oh = rb.sdiv(r, I64(height)), rb.srem(r, I64(height))
            finish_block(low, rb, n, [(bn, rb.add(bn, I64(1))), (oh, rb.add(oh, I64(1))),
                                      (I64(0), I64(width)), (I64(0), I64(feats))])
        if epilogue is None:
            for_range(cb, r0, r1, finish, "epilogue")
    chunks = b.sdiv(b.add(smax(b, b.sub(hi, lo), I64(0)), I64(chunk - 1)), I64(chunk))
    for_range(b, I64(0), chunks, part, "chunk", unroll=False)
    return extent, tile


def lower_pointwise(low: EntryLowering, b: ir.IRBuilder, n: int, op: k.Conv2D,
                    partitioned: bool) -> tuple[k.Dim, int]:
    """Split as a matmul of F rows by OH*OW columns is (contraction.py): few output channels
    next to many pixels split the pixels, in whole output rows so that each workgroup's block
    is a box of the output (the epilogue's unit); otherwise the channels split. Every
    workgroup runs its block for every image."""
    kv = low.kv
    out = (n, 0)
    _, feats, height, width = kv.shape[out]
    chans = kv.shape[kv.ref(op.input)][1]
    static = all(isinstance(d, int) for d in (feats, height, width, chans))
    if not (partitioned and static):
        _blocks(low, b, n, op, None, None)
        return 1, 1
    assert isinstance(feats, int) and isinstance(height, int) and isinstance(width, int) and \
        isinstance(chans, int)
    pixels = height * width
    if feats < min(pixels, SHORT_M):
        _, _, columns = low.grid((pixels,), feats * chans)
        columns = -(-max(columns, COLUMN_TILE) // COLUMN_TILE) * COLUMN_TILE
        tile = max(1, -(-columns // width))
        _blocks(low, b, n, op, low.partition_bounds(b, I64(height), tile), None)
        return height, tile
    _, _, tile = low.grid((feats,), pixels * chans)
    tile = -(-max(tile, CHANNEL_TILE) // CHANNEL_TILE) * CHANNEL_TILE
    _blocks(low, b, n, op, None, low.partition_bounds(b, I64(feats), tile))
    return feats, tile


Span = tuple[ir.Value, ir.Value]


def _blocks(low: EntryLowering, b: ir.IRBuilder, n: int, op: k.Conv2D, rows: Span | None,
            channels: Span | None) -> None:
    """Output rows `rows` (all when None) of output channels `channels` (all when None) of
    every image: the init's block into the output, the GEMM adding onto it, then the epilogue
    over the same block. With stride 1 and a 1x1 window the output's rows are the input's
    (OH = H, OW = W), so a block's pixels are contiguous in both."""
    from weir.compiler.targets.llvm_cpu.element_eval import Body
    kv = low.kv
    x, init, out = kv.ref(op.input), kv.ref(op.init), (n, 0)
    dest = low.memory[out]
    wm = in_memory(low, b, kv.ref(op.filter))
    images, feats, out_h, out_w = dest.dims
    chans = low.dims(x)[1]
    plane = b.mul(out_h, out_w)
    oh_lo, oh_hi = rows or (I64(0), out_h)
    f_lo, f_hi = channels or (I64(0), feats)
    pixels = _block_pixels(low, b, x, rows, (oh_lo, oh_hi), out_w)

    def image(ib: ir.IRBuilder, bn: ir.Value) -> None:
        target = dest.address(ib, [bn, f_lo, oh_lo, I64(0)])
        if low.memory.get(init) is not dest:
            def fill(fb: ir.IRBuilder, idx: list[ir.Value]) -> None:
                at = [bn, *idx]
                s.store_element(fb, low.element(fb, init, at, Body()), dest.address(fb, at),
                                "f32")
            for_nest(ib, [(f_lo, f_hi), (oh_lo, oh_hi), (I64(0), out_w)], fill, "init")
        gemm(low, ib, ib.sub(f_hi, f_lo), ib.mul(ib.sub(oh_hi, oh_lo), out_w), chans,
             Strided(wm.address(ib, [f_lo, I64(0), I64(0), I64(0)]), chans, "f32"),
             pixels(ib, bn), Strided(target, plane, "f32"))
        finish_block(low, ib, n, [(bn, ib.add(bn, I64(1))), (f_lo, f_hi), (oh_lo, oh_hi),
                                  (I64(0), out_w)])
    with_rows = b.icmp_signed("<", oh_lo, oh_hi)
    with_channels = b.icmp_signed("<", f_lo, f_hi)
    with b.if_then(b.and_(with_rows, with_channels)):
        for_range(b, I64(0), images, lambda ib, bn: low.scoped(ib, lambda: image(ib, bn)),
                  "image")


def _block_pixels(low: EntryLowering, b: ir.IRBuilder, x: ValueRef, rows: Span | None,
                  span: Span, out_w: ir.Value) -> Callable[[ir.IRBuilder, ir.Value], Strided]:
    """What gives the GEMM's right operand for an image: the C x pixels of the block's rows
    `span`, read in place when the input is memory. An input that is an expression (DenseNet's
    batch norm and ReLU before each convolution) is evaluated into scratch: for a block of rows
    only those rows, so the workgroups of a split over pixels share the work instead of each
    evaluating the whole input."""
    from weir.compiler.targets.llvm_cpu.element_eval import Body
    mem = low.memory.get(x)
    if mem is None and rows is None:
        mem = in_memory(low, b, x)
    if mem is not None:
        plane = b.mul(mem.dims[2], mem.dims[3])
        return lambda ib, bn: Strided(mem.address(ib, [bn, I64(0), span[0], I64(0)]), plane,
                                      "f32")
    chans = low.dims(x)[1]
    count = b.sub(span[1], span[0])
    count = b.select(b.icmp_signed("<", count, I64(0)), I64(0), count)
    width = b.mul(count, out_w)
    scratch = low.scratch_memory(b, "f32", [chans, width])

    def evaluate(ib: ir.IRBuilder, bn: ir.Value) -> Strided:
        def copy(cb: ir.IRBuilder, idx: list[ir.Value]) -> None:
            c, r, w = idx
            value = low.element(cb, x, [bn, c, cb.add(span[0], r), w], Body())
            s.store_element(cb, value, cb.gep(scratch.ptr, [cb.add(cb.mul(c, width),
                                                                  cb.add(cb.mul(r, out_w), w))],
                                              inbounds=True), "f32")
        for_nest(ib, [(I64(0), chans), (I64(0), count), (I64(0), out_w)], copy, "px")
        return Strided(scratch.ptr, width, "f32")
    return evaluate

