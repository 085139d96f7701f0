"""The direct convolution microkernel: one output row (n, oh) of an f32 convolution whose sizes
are all static, computed without going through GEMM calls per window tap.

A register tile holds `mr` output pixels x `vectors` vectors of output channels. It is loaded
from the accumulator row once, then gains every product of the window (taps kh, kw, then input
channels c, the order the GEMM path sums in, so results are the same bit for bit) and is stored
once: K = KH*KW*C multiply-adds per element with no write back between taps. Each step of k
loads `vectors` filter vectors and broadcasts `mr` input elements, so the filter is read once per
tile rather than once per (tile, tap) GEMM call, and nothing is packed per tap.

The filter is packed once per workgroup range into panels of `nr` output channels,
panel[block][kh][kw][c][0:nr] (the last block zero-padded to whole vectors), so a step of k reads
one contiguous line. Strides and dilations are in the input addressing: pixel i of a tile at tap
(kh, kw) is input row kh (given by the caller: `row0 + kh * tap_stride`), column
(ow0 + i) * sw + kw * dw. Every size is a constant of the generated code, so LLVM sees fixed trip
counts and offsets."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import llvmlite.ir as ir

from weir.compiler.targets.llvm_cpu.kernel_values import ValueRef
from weir.compiler.targets.llvm_cpu.loops import I64, for_nest, for_range
from weir.compiler.targets.llvm_cpu.machine import CpuTarget

if TYPE_CHECKING:
    from weir.compiler.targets.llvm_cpu.lower_entry import EntryLowering

_F32 = ir.FloatType()
_I1 = ir.IntType(1)
_I32 = ir.IntType(32)
_PTR = _F32.as_pointer()
_VOID = ir.VoidType()


@dataclass(frozen=True)
class ConvGeometry:
    """The static sizes of one convolution, as the kernel reads them: input rows are W x C
    (pixel stride C), the accumulator row OW x F (row stride given at run time)."""

    chans: int
    feats: int
    kh: int
    kw: int
    out_w: int
    sw: int
    dw: int


@dataclass(frozen=True)
class _Blocking:
    lanes: int    # f32 elements per vector register
    mr: int       # output pixels per register tile
    vectors: int  # vectors of output channels per register tile

    @property
    def nr(self) -> int:
        return self.lanes * self.vectors


def _blocking(cpu: CpuTarget) -> _Blocking:
    """16 vector registers (SSE2, AVX2) hold 6 x 2 accumulators, the two filter vectors and a
    broadcast; AVX-512's 32 hold 12 x 2 of them."""
    return _Blocking(lanes=cpu.vector_bits // 32, mr=12 if cpu.vector_bits == 512 else 6,
                     vectors=2)


def direct_conv_applies(dtypes: tuple[str, str, str], static: list[object]) -> bool:
    """The kernel covers f32 input, filter and accumulator with every size known."""
    return dtypes == ("f32", "f32", "f32") and all(isinstance(d, int) for d in static)


class DirectConv:
    """Writes one convolution's row kernel into the entry's module, and the packing of its filter
    into the entry."""

    def __init__(self, low: EntryLowering, name: str, g: ConvGeometry) -> None:
        self.low, self.g = low, g
        self.blk = _blocking(low.cpu)
        self.full_blocks = g.feats // self.blk.nr
        rest = g.feats - self.full_blocks * self.blk.nr
        # The last, partial block of channels: its vectors and valid channels (0: none).
        self.rest_vectors = -(-rest // self.blk.lanes)
        self.rest = rest
        self.taps = g.kh * g.kw * g.chans  # depth of a panel
        self.fn = self._row_function(name)

    @property
    def taps_per_chunk(self) -> int:
        """Window taps whose filter panel (C x nr per tap) fits in half of a 32 KiB L1 along
        with the input rows the tiles sweep: all the tiles of a row run over one chunk of taps
        before the next, so the panel is read from L1, not streamed from L2 once per tile. C
        is stored and reloaded between chunks, which keeps the sum in (kh, kw, c) order."""
        taps = self.g.kh * self.g.kw
        most = max(1, (16 * 1024) // (self.g.chans * self.blk.nr * 4))
        return -(-taps // -(-taps // most))  # as even as chunks of at most `most` go

    @property
    def panel_elements(self) -> int:
        return self.taps * (self.full_blocks * self.blk.nr + self.rest_vectors * self.blk.lanes)

    # -- packing ----------------------------------------------------------------------------

    def pack_filter(self, b: ir.IRBuilder, w: ValueRef, layout: str) -> ir.Value:
        """The filter (any permutation of HWCF, memory or an elementwise expression) as panels
        in scratch that lives as long as the caller's scope."""
        from weir.compiler.targets.llvm_cpu.lower_entry import Body
        low, g, nr = self.low, self.g, self.blk.nr
        panel = low.scratch_memory(b, "f32", [I64(self.panel_elements)]).ptr

        def store(bb: ir.IRBuilder, value: ir.Value, block: ir.Value, width: int,
                  tap: list[ir.Value], j: ir.Value) -> None:
            kh, kw, c = tap
            depth = bb.add(bb.mul(bb.add(bb.mul(kh, I64(g.kw)), kw), I64(g.chans)), c)
            at = bb.add(bb.mul(block, I64(self.taps * nr)), bb.add(bb.mul(depth, I64(width)), j))
            bb.store(value, bb.gep(panel, [at], inbounds=True))

        def element(bb: ir.IRBuilder, tap: list[ir.Value], f: ir.Value) -> ir.Value:
            letters = {"H": tap[0], "W": tap[1], "C": tap[2], "F": f}
            value = low.element(bb, w, [letters[d] for d in layout], Body())
            return low.convert(bb, value, low.kv.dtype[w], "f32")

        window = [(I64(0), I64(g.kh)), (I64(0), I64(g.kw)), (I64(0), I64(g.chans))]

        def full(bb: ir.IRBuilder, idx: list[ir.Value]) -> None:
            block, *tap, j = idx
            f = bb.add(bb.mul(block, I64(nr)), j)
            store(bb, element(bb, tap, f), block, nr, tap, j)
        for_nest(b, [(I64(0), I64(self.full_blocks))] + window + [(I64(0), I64(nr))], full, "pk")
        if self.rest_vectors:
            width = self.rest_vectors * self.blk.lanes
            block = I64(self.full_blocks)

            def rest(bb: ir.IRBuilder, idx: list[ir.Value]) -> None:
                *tap, j = idx
                f = bb.add(I64(self.full_blocks * nr), j)
                store(bb, element(bb, tap, f), block, width, tap, j)

            def pad(bb: ir.IRBuilder, idx: list[ir.Value]) -> None:
                *tap, j = idx
                store(bb, ir.Constant(_F32, 0.0), block, width, tap, j)
            for_nest(b, window + [(I64(0), I64(self.rest))], rest, "pr")
            for_nest(b, window + [(I64(self.rest), I64(width))], pad, "pz")
        return panel

    # -- the row kernel -----------------------------------------------------------------------

    def call(self, b: ir.IRBuilder, row0: ir.Value, tap_stride: ir.Value, panel: ir.Value,
             c: ir.Value, ldc: ir.Value) -> None:
        """c[0:OW, 0:F] (f32, rows ldc apart) += the convolution of input rows row0 +
        kh * tap_stride (each W x C) with the packed filter."""
        b.call(self.fn, [row0, tap_stride, panel, c, ldc])

    def _row_function(self, name: str) -> ir.Function:
        g, blk = self.g, self.blk
        fn = ir.Function(self.low.module, ir.FunctionType(_VOID, [_PTR, I64, _PTR, _PTR, I64]),
                         name)
        fn.linkage = "internal"
        fn.attributes.add("nounwind")
        for i in (2, 3):
            fn.args[i].add_attribute("noalias")
        x, tap_stride, panel, c, ldc = fn.args
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        slots = [b.alloca(ir.VectorType(_F32, blk.lanes)) for _ in range(blk.mr * blk.vectors)]
        whole, left = divmod(g.out_w, blk.mr)

        per_chunk = self.taps_per_chunk
        chunks, last = divmod(g.kh * g.kw, per_chunk)

        def blocks(bb: ir.IRBuilder, vectors: int, valid: int, block: ir.Value) -> None:
            weights = bb.gep(panel, [bb.mul(block, I64(self.taps * blk.nr))], inbounds=True)
            cols = bb.mul(block, I64(blk.nr))

            def chunk(cb: ir.IRBuilder, tap0: ir.Value, count: int) -> None:
                def tiles(tb: ir.IRBuilder, t: ir.Value) -> None:
                    self._tile(tb, blk.mr, vectors, valid, x, tap_stride, weights,
                               tb.mul(t, I64(blk.mr)), c, ldc, cols, slots, tap0, count)
                for_range(cb, I64(0), I64(whole), tiles, "ow")
                if left:
                    self._tile(cb, left, vectors, valid, x, tap_stride, weights,
                               I64(whole * blk.mr), c, ldc, cols, slots, tap0, count)
            for_range(bb, I64(0), I64(chunks),
                      lambda cb, i: chunk(cb, cb.mul(i, I64(per_chunk)), per_chunk), "chunk")
            if last:
                chunk(bb, I64(chunks * per_chunk), last)

        for_range(b, I64(0), I64(self.full_blocks),
                  lambda bb, fb: blocks(bb, blk.vectors, blk.nr, fb), "fb")
        if self.rest_vectors:
            blocks(b, self.rest_vectors, self.rest, I64(self.full_blocks))
        b.ret_void()
        return fn

    def _tile(self, b: ir.IRBuilder, rows: int, vectors: int, valid: int, x: ir.Value,
              tap_stride: ir.Value, weights: ir.Value, ow0: ir.Value, c: ir.Value,
              ldc: ir.Value, col0: ir.Value, slots: list[ir.Value], tap0: ir.Value,
              taps: int) -> None:
        """Output pixels ow0 .. ow0+rows-1, channels col0 .. col0+valid-1 (in `vectors`
        vectors; the filter panel at `weights` is vectors*lanes wide), window taps tap0 ..
        tap0+taps-1 (numbered kh * KW + kw)."""
        g, lanes = self.g, self.blk.lanes
        width = vectors * lanes
        vtype = ir.VectorType(_F32, lanes)
        c_rows = [b.gep(c, [b.add(b.mul(b.add(ow0, I64(i)), ldc), col0)], inbounds=True)
                  for i in range(rows)]
        for i in range(rows):
            for j in range(vectors):
                b.store(self._load_c(b, c_rows[i], j, valid), slots[i * vectors + j])
        pixel0 = b.mul(ow0, I64(g.sw * g.chans))

        def tap(tb: ir.IRBuilder, t: ir.Value) -> None:
            kh, kw = tb.udiv(t, I64(g.kw)), tb.urem(t, I64(g.kw))
            row = tb.gep(x, [tb.add(tb.mul(kh, tap_stride),
                                    tb.add(pixel0, tb.mul(kw, I64(g.dw * g.chans))))],
                         inbounds=True)
            depth0 = tb.mul(t, I64(g.chans))

            def step(sb: ir.IRBuilder, ci: ir.Value) -> None:
                line = sb.gep(weights, [sb.mul(sb.add(depth0, ci), I64(width))], inbounds=True)
                ws = [sb.load(sb.bitcast(sb.gep(line, [I64(j * lanes)], inbounds=True),
                                         vtype.as_pointer()), align=4)
                      for j in range(vectors)]
                for i in range(rows):
                    at = sb.gep(row, [sb.add(ci, I64(i * g.sw * g.chans))], inbounds=True)
                    a = splat(sb, sb.load(at, align=4), lanes)
                    for j in range(vectors):
                        slot = slots[i * vectors + j]
                        sb.store(fmuladd(sb, a, ws[j], sb.load(slot)), slot)
            for_range(tb, I64(0), I64(g.chans), step, "ci")
        for_range(b, tap0, b.add(tap0, I64(taps)), tap, "tap")
        for i in range(rows):
            for j in range(vectors):
                self._store_c(b, b.load(slots[i * vectors + j]), c_rows[i], j, valid)

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
