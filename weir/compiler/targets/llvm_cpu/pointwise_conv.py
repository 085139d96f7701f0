"""1x1 convolutions of channels-first f32 images (NCHW input, FCHW filter, stride 1) as one GEMM
per image and workgroup block, written straight into the NFHW output.

Why: channels first, a 1x1 convolution is a matrix product whose operands already lie in
memory as the GEMM reads them: out[n] (F x OH*OW) = filter (F x C) @ input[n] (C x H*W), each
channel's pixels contiguous, and a range of output rows is a contiguous range of columns, so
workgroups split it as a matmul is split, by pixels or by output channels. The
direct kernel would first bring the rows to NHWC scratch and transpose its result back, which
for the expansions of an inverted-residual network (16 -> 96 channels over 112 x 112 pixels,
K = 16) costs several times the arithmetic."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import llvmlite.ir as ir

from weir.compiler.targets.llvm_cpu import scalars as s
from weir.compiler.targets.llvm_cpu.contraction import (
    COLUMN_TILE,
    SHORT_M,
    Strided,
    gemm,
    in_memory,
)
from weir.compiler.targets.llvm_cpu.epilogue import finish_block
from weir.compiler.targets.llvm_cpu.kernel_values import ValueRef
from weir.compiler.targets.llvm_cpu.loops import I64, for_nest, for_range
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
    from weir.compiler.targets.llvm_cpu.lower_entry import Body
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
    from weir.compiler.targets.llvm_cpu.lower_entry import Body
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

