"""A window op's NHWC input that is a pad of an image in memory (`KernelValues.padded_inputs`):
read through the window's bounds instead of copied whole. Exporters pad every activation
before its 3 x 3 or depthwise convolution, and ResNet's stem before its max pool (with -inf);
as a dispatch of its own, the pad wrote and read again a full copy of the activation (a
MobileNetV2 pad of 112 x 112 x 96 cost as much as the depthwise convolution after it, ResNet's
pad of 112 x 112 x 64 twice the max pool after it).

Kernels read the source image itself, where a tap lands inside it, and the pad's value where
it does not: the direct kernel's input rows are copied into its scratch rows with their pad
(`padded_row_copy`), the depthwise and pooling kernels check the taps of their border pixels
only (depthwise.py, pooling.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

import llvmlite.ir as ir

from weir.compiler.targets.llvm_cpu import scalars as s
from weir.compiler.targets.llvm_cpu.kernel_values import ValueRef
from weir.compiler.targets.llvm_cpu.loops import I64, for_range
from weir.format import kernel_description as k

if TYPE_CHECKING:
    from weir.compiler.targets.llvm_cpu.conv_rows import RowCopy
    from weir.compiler.targets.llvm_cpu.element_eval import Memory
    from weir.compiler.targets.llvm_cpu.lower_entry import EntryLowering


@dataclass(frozen=True)
class PaddedImage:
    """The padded NHWC value is `source` (N x `rows` x `cols` x C in memory) placed at (top,
    left) of a `height` x `width` image of `pad` values, images and channels unpadded."""

    source: Memory
    rows: int
    cols: int
    top: int
    left: int
    height: int
    width: int
    pad: ir.Constant

    def inner_outputs(self, axis: int, out: int, window: int, stride: int,
                      dilation: int) -> tuple[int, int]:
        """The output positions [lo, hi) along H (`axis` 0) or W (1) whose every window tap
        lies inside the source: a kernel checks the taps of the others only."""
        before, size = (self.top, self.rows) if axis == 0 else (self.left, self.cols)
        lo = min(out, -(-before // stride))
        return lo, max(lo, min(out, (size - 1 - (window - 1) * dilation + before) // stride + 1))

    def pad_lanes(self, width: int) -> ir.Constant:
        """The pad's value in each of `width` f32 lanes (the scalar itself for one lane): what
        a vector tap outside the source reads."""
        if width == 1:
            return self.pad
        return ir.Constant(ir.VectorType(ir.FloatType(), width), [self.pad.constant] * width)


def inside(b: ir.IRBuilder, x: ir.Value, size: int | ir.Value,
           within: ir.Value | None = None) -> tuple[ir.Value, ir.Value]:
    """Whether a tap's index x lies in the source's [0, size) (and, given `within`, whether
    the tap's other indices do too), and x clamped there (an address that exists, to load
    from before the pad's value is selected instead)."""
    ok = b.and_(b.icmp_signed(">=", x, I64(0)),
                b.icmp_signed("<", x, I64(size) if isinstance(size, int) else size))
    return ok if within is None else b.and_(within, ok), b.select(ok, x, I64(0))


def by_border_rows(b: ir.IRBuilder, image: PaddedImage | None, oh: ir.Value, out_h: int,
                   window: int, stride: int, dilation: int,
                   run: Callable[[ir.IRBuilder, bool], None]) -> None:
    """run(b, check_h) for output row `oh`: with check_h only where the row's window crosses
    the padded image's top or bottom border (every row of an input that is no pad runs
    unchecked), so the rows in between check no tap's row."""
    if image is None:
        run(b, False)
        return
    lo, hi = image.inner_outputs(0, out_h, window, stride, dilation)
    inner = b.and_(b.icmp_signed(">=", oh, I64(lo)), b.icmp_signed("<", oh, I64(hi)))
    with b.if_else(inner) as (then, otherwise):
        with then:
            run(b, False)
        with otherwise:
            run(b, True)


def padded_image(low: EntryLowering, x: ValueRef, layout: str = "NHWC") -> PaddedImage | None:
    """`x` as a padded image in memory of `layout` (NHWC, or NCHW) when it is one, else
    None."""
    kv = low.kv
    if x[0] not in kv.padded_inputs:
        return None
    op = kv.ops[x[0]]
    assert isinstance(op, k.InsertSlice)
    source = low.memory.get(kv.ref(op.source))
    fill = kv.ops[op.dest]
    assert isinstance(fill, k.Fill)
    inner, outer = kv.shape[kv.ref(op.source)], kv.shape[x]
    n, h, w, c = (layout.index(d) for d in "NHWC")
    if source is None or len(outer) != 4 or op.offsets[n] != 0 or op.offsets[c] != 0 or \
            inner[n] != outer[n] or inner[c] != outer[c] or \
            not all(isinstance(d, int) for d in outer):
        return None
    return PaddedImage(source, int(inner[h]), int(inner[w]), int(op.offsets[h]),
                       int(op.offsets[w]), int(outer[h]), int(outer[w]),
                       s.constant(kv.dtype[x], fill.value))


def padded_row_copy(low: EntryLowering, x: ValueRef) -> RowCopy | None:
    """What copies row (bn, ih) of the padded NHWC input `x` into W x C scratch: the pad's
    value left and right of the source's row, and all along rows above or below it."""
    image = padded_image(low, x)
    if image is None:
        return None
    source, chans = image.source, int(image.source.dims[3].constant)
    inner = image.cols * chans

    def row(b: ir.IRBuilder, bn: ir.Value, ih: ir.Value, line: ir.Value) -> None:
        start = source.address(b, [bn, ih, I64(0), I64(0)])

        def move(mb: ir.IRBuilder, i: ir.Value) -> None:
            value = s.load_element(mb, mb.gep(start, [i], inbounds=True), source.dtype)
            s.store_element(mb, value, mb.gep(line, [i], inbounds=True), source.dtype)
        for_range(b, I64(0), I64(inner), move, "row", unroll=False)
    return padded_rows(image, chans, row)


def padded_rows(image: PaddedImage, chans: int, row: RowCopy) -> RowCopy:
    """What copies row (bn, ih) of `image` into W x C scratch: the pad's value left and right
    of the source's row, which row(bn, source row, where its first pixel goes) copies, and all
    along rows above or below it."""
    left, right = image.left * chans, (image.width - image.left - image.cols) * chans
    dtype = image.source.dtype

    def fill(b: ir.IRBuilder, line: ir.Value, lo: int, count: int) -> None:
        for_range(b, I64(lo), I64(lo + count), lambda fb, i: s.store_element(
            fb, image.pad, fb.gep(line, [i], inbounds=True), dtype), "pad", unroll=False)

    def copy(b: ir.IRBuilder, bn: ir.Value, ih: ir.Value, line: ir.Value) -> None:
        source_row = b.sub(ih, I64(image.top))
        with b.if_else(inside(b, source_row, image.rows)[0]) as (then, otherwise):
            with then:
                fill(b, line, 0, left)
                row(b, bn, source_row, b.gep(line, [I64(left)], inbounds=True))
                fill(b, line, left + image.cols * chans, right)
            with otherwise:
                fill(b, line, 0, image.width * chans)
    return copy
