"""The direct convolution kernel's register tile (conv_kernel.py writes the rest): `mr` output
pixels x `vectors` vectors of output channels, loaded from the accumulators, run over a chunk of
window taps (kh, kw, then input channels c, several steps per iteration) and stored, with the
entry's vector epilogue applied at the last chunk's store. A tile inside one output row reads
its pixels at fixed distances from one pointer; one spanning two rows, a pointer per pixel.
Also the vector helpers the depthwise and pooling kernels share with it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import llvmlite.ir as ir

from weir.compiler.targets.llvm_cpu.conv_blocking import (
    Blocking,
    chunk_taps,
    ConvGeometry,
    merges_window_rows,
    UNROLLED_STEPS,
)
from weir.compiler.targets.llvm_cpu.epilogue import apply_epilogue, VectorEpilogue
from weir.compiler.targets.llvm_cpu.epilogue_program import at_offset
from weir.compiler.targets.llvm_cpu.loops import I64, for_range, smin
from weir.compiler.targets.llvm_cpu.scalars import prefetch_l2

if TYPE_CHECKING:
    from weir.compiler.targets.llvm_cpu.lower_entry import EntryLowering

_F32 = ir.FloatType()
_I32 = ir.IntType(32)


@dataclass(frozen=True)
class Pixels:
    """The input as the kernel reads it: NHWC rows (W x C each) of images image0, image0 + 1,
    ... starting at ptr, `image_stride` elements between images and `row_stride` between rows
    (the input itself, or NHWC scratch holding some of its images)."""

    ptr: ir.Value
    image0: ir.Value
    image_stride: ir.Value
    row_stride: ir.Value


class Tiles:
    """The register tile of one convolution's kernel; `DirectConv` (conv_kernel.py) sets what
    it reads."""

    low: EntryLowering
    g: ConvGeometry
    blk: Blocking
    epilogue: VectorEpilogue | None

    @property
    def taps_per_chunk(self) -> int:
        return chunk_taps(self.g, self.blk.nr, self.blk.mr)

    def _tile(self, b: ir.IRBuilder, vectors: int, valid: int, x: Pixels, weights: ir.Value,
              p0: ir.Value, end: ir.Value, c: ir.Value, c_first: ir.Value, ldc: ir.Value,
              col0: ir.Value, slots: list[ir.Value], tap0: ir.Value, taps: int,
              row: ir.Value, prefetch: bool, offsets: list[ir.Value]) -> None:
        """Output pixels p0 .. p0+mr-1 below `end` (the tile's rows past it repeat pixel
        end-1 and are not stored), channels col0 .. col0+valid-1 (in `vectors` vectors, read
        from the filter panel's lines of nr at `weights`), window taps tap0 .. tap0+taps-1
        (numbered kh * KW + kw). The first chunk of taps starts from `row` (the block's
        channels of a bias) unless it is null; every other from the accumulators."""
        g, rows = self.g, self.blk.mr
        pixels = [smin(b, b.add(p0, I64(i)), b.sub(end, I64(1))) for i in range(rows)]
        c_rows = [b.gep(c, [b.add(b.mul(b.sub(p, c_first), ldc), col0)]) for p in pixels]
        from_row = b.and_(b.icmp_unsigned("!=", b.ptrtoint(row, I64), I64(0)),
                          b.icmp_signed("==", tap0, I64(0)))
        with b.if_else(from_row) as (given, accumulated):
            with given:
                values = [self._load_c(b, row, j, valid) for j in range(vectors)]
                for i in range(rows):
                    for j in range(vectors):
                        b.store(values[j], slots[i * vectors + j])
            with accumulated:
                for i in range(rows):
                    for j in range(vectors):
                        b.store(self._load_c(b, c_rows[i], j, valid), slots[i * vectors + j])
        # A tile inside one output row (every tile, where `tile_pixels` found a count that
        # divides the row) reads its pixels at fixed distances from the first: one base
        # pointer with constant offsets. Twelve pointers of their own (a tile spanning rows)
        # leave too few registers for the loop, which then spills them and the broadcasts (a
        # 3 x 3 stem of 3 channels ran at a quarter of peak).
        def in_row() -> None:
            start = self._input_offset(b, x, p0)
            self._taps(b, vectors, x, weights, slots, tap0, taps,
                       [b.add(start, I64(i * g.sw * g.chans)) for i in range(rows)], prefetch)
        # Tiles whose pixel count divides the rows never span two (`run` takes whole rows):
        # no code for those that do, which halves the tap loops LLVM compiles.
        if g.out_w % rows == 0:
            in_row()
        else:
            one_row = b.and_(b.icmp_signed("<=", b.add(p0, I64(rows)), end),
                             b.icmp_signed("==", b.udiv(p0, I64(g.out_w)),
                                           b.udiv(b.add(p0, I64(rows - 1)), I64(g.out_w))))
            with b.if_else(one_row) as (within, spanning):
                with within:
                    in_row()
                with spanning:
                    self._taps(b, vectors, x, weights, slots, tap0, taps,
                               [self._input_offset(b, x, p) for p in pixels], prefetch)
        final = None if self.epilogue is None else \
            b.icmp_signed("==", b.add(tap0, I64(taps)), I64(g.kh * g.kw))
        for i in range(rows):
            def store(sb: ir.IRBuilder, i: int = i) -> None:
                for j in range(vectors):
                    value = sb.load(slots[i * vectors + j])
                    if final is not None and self.epilogue is not None:
                        value = self._finished(sb, value, final, c_rows[i], j, valid, offsets)
                    self._store_c(sb, value, c_rows[i], j, valid)
            if i == 0:
                store(b)
            else:
                with b.if_then(b.icmp_signed("<", b.add(p0, I64(i)), end)):
                    store(b)

    def _taps(self, b: ir.IRBuilder, vectors: int, x: Pixels, weights: ir.Value,
              slots: list[ir.Value], tap0: ir.Value, taps: int, starts: list[ir.Value],
              prefetch: bool) -> None:
        """Adds window taps tap0 .. tap0+taps-1 of the tile's pixels (whose tap (0, 0) inputs
        are at `starts`) into the accumulators `slots`."""
        g, lanes, rows = self.g, self.blk.lanes, self.blk.mr
        width, stride = vectors * lanes, self.blk.nr  # what a line holds, where the next is
        vtype = ir.VectorType(_F32, lanes)
        # The same panel line one chunk of taps on: prefetched into L2 while this chunk's
        # tiles run, so the next chunk's lines (streamed from memory once per call, for each
        # block of channels) are not waited for by its first tile.
        ahead = self.taps_per_chunk * g.chans * stride
        # With dw = 1 the taps of one window row read KW * C consecutive input elements and
        # panel lines: one loop over them (same order, same sums) instead of KW loops of C,
        # where conv_blocking found that faster.
        unit = g.kw if merges_window_rows(g) and _whole_window_rows(self, taps) else 1

        def tap(tb: ir.IRBuilder, u: ir.Value) -> None:
            t = tb.mul(u, I64(unit))
            kh, kw = tb.udiv(t, I64(g.kw)), tb.urem(t, I64(g.kw))
            offset = tb.add(tb.mul(kh, tb.mul(x.row_stride, I64(g.dh))),
                            tb.mul(kw, I64(g.dw * g.chans)))
            inputs = [tb.gep(x.ptr, [tb.add(start, offset)]) for start in starts]
            depth0 = tb.mul(t, I64(g.chans))

            def step(sb: ir.IRBuilder, ci: ir.Value) -> None:
                line = sb.gep(weights, [sb.mul(sb.add(depth0, ci), I64(stride))], inbounds=True)
                for cache_line in range(0, width * 4 if prefetch else 0, 64):
                    prefetch_l2(sb, sb.gep(line, [I64(ahead + cache_line // 4)]))
                ws = [sb.load(sb.bitcast(sb.gep(line, [I64(j * lanes)], inbounds=True),
                                         vtype.as_pointer()), align=4)
                      for j in range(vectors)]
                for i in range(rows):
                    a = splat(sb, sb.load(sb.gep(inputs[i], [ci]), align=4), lanes)
                    for j in range(vectors):
                        slot = slots[i * vectors + j]
                        sb.store(fmuladd(sb, a, ws[j], sb.load(slot)), slot)
            # Several steps per iteration (UNROLLED_STEPS): the loop's own instructions take
            # issue slots from the multiply-adds.
            depth = unit * g.chans
            count = next(u for u in UNROLLED_STEPS if depth % u == 0)

            def steps(sb: ir.IRBuilder, h: ir.Value) -> None:
                for q in range(count):
                    step(sb, sb.add(sb.mul(h, I64(count)), I64(q)))
            for_range(tb, I64(0), I64(depth // count), steps, "ci")
        first = b.udiv(tap0, I64(unit))
        for_range(b, first, b.add(first, I64(taps // unit)), tap, "tap")

    def _input_offset(self, b: ir.IRBuilder, x: Pixels, p: ir.Value) -> ir.Value:
        """Elements from x.ptr to the first input element output pixel p reads (tap 0, 0)."""
        g = self.g
        per_image = g.out_h * g.out_w
        image, within = b.udiv(p, I64(per_image)), b.urem(p, I64(per_image))
        oh, ow = b.udiv(within, I64(g.out_w)), b.urem(within, I64(g.out_w))
        return b.add(b.mul(b.sub(image, x.image0), x.image_stride),
                     b.add(b.mul(b.mul(oh, I64(g.sh)), x.row_stride),
                           b.mul(ow, I64(g.sw * g.chans))))

    def _load_c(self, b: ir.IRBuilder, row: ir.Value, j: int, valid: int) -> ir.Value:
        lanes = self.blk.lanes
        vtype = ir.VectorType(_F32, lanes)
        at = b.gep(row, [I64(j * lanes)], inbounds=True)
        count = min(lanes, valid - j * lanes)
        if count == lanes:
            return b.load(b.bitcast(at, vtype.as_pointer()), align=4)
        value: ir.Value = ir.Constant(vtype, None)
        for lane in range(count):
            element = b.load(b.gep(at, [I64(lane)], inbounds=True), align=4)
            value = b.insert_element(value, element, ir.Constant(_I32, lane))
        return value

    def _finished(self, b: ir.IRBuilder, value: ir.Value, final: ir.Value, row: ir.Value,
                  j: int, valid: int, offsets: list[ir.Value]) -> ir.Value:
        """`value`, vector j of the accumulator row at `row`, with the epilogue applied when
        this is the `final` store; its other tensors' elements (a residual), `offsets` bytes
        from the output's, are read only then."""
        assert self.epilogue is not None
        if not offsets:
            return b.select(final, apply_epilogue(b, value, self.epilogue), value)
        before = b.block
        with b.if_then(final):
            inputs = [self._load_c(b, at_offset(b, row, offset), j, valid) for offset in offsets]
            done = apply_epilogue(b, value, self.epilogue, inputs)
            last = b.block
        joined = b.phi(value.type)
        joined.add_incoming(done, last)
        joined.add_incoming(value, before)
        return joined

    def _store_c(self, b: ir.IRBuilder, value: ir.Value, row: ir.Value, j: int,
                 valid: int) -> None:
        lanes = self.blk.lanes
        at = b.gep(row, [I64(j * lanes)], inbounds=True)
        count = min(lanes, valid - j * lanes)
        if count == lanes:
            b.store(value, b.bitcast(at, value.type.as_pointer()), align=4)
            return
        for lane in range(count):
            b.store(b.extract_element(value, ir.Constant(_I32, lane)),
                    b.gep(at, [I64(lane)], inbounds=True), align=4)


def _whole_window_rows(kernel: Tiles, taps: int) -> bool:
    """Whether every chunk of taps, `taps` long, starts and ends on a whole window row."""
    return kernel.taps_per_chunk % kernel.g.kw == 0 and taps % kernel.g.kw == 0


def splat(b: ir.IRBuilder, value: ir.Value, lanes: int) -> ir.Value:
    """`value` in every lane of a vector (a vector broadcast from memory once LLVM sees the
    load); `value` itself for one lane."""
    if lanes == 1:
        return value
    undef = ir.Constant(ir.VectorType(value.type, lanes), ir.Undefined)
    first = b.insert_element(undef, value, ir.Constant(_I32, 0))
    return b.shuffle_vector(first, undef, ir.Constant(ir.VectorType(_I32, lanes), [0] * lanes))


def fmuladd(b: ir.IRBuilder, x: ir.Value, y: ir.Value, z: ir.Value) -> ir.Value:
    """x * y + z of f32 scalars or vectors. fmuladd rather than fma: it fuses where the CPU has
    FMA and stays a multiply and an add, rather than a libm call, where it has not."""
    vector = isinstance(x.type, ir.VectorType)
    name = f"llvm.fmuladd.v{x.type.count}f32" if vector else "llvm.fmuladd.f32"
    fn = b.module.globals.get(name)
    if not isinstance(fn, ir.Function):
        fn = ir.Function(b.module, ir.FunctionType(x.type, [x.type] * 3), name)
    return b.call(fn, [x, y, z])
