"""The direct convolution microkernel, for f32 convolutions whose channel, window and output
sizes are static: the output pixels of a workgroup range are computed without GEMM calls per
window tap.

A register tile holds `mr` output pixels x `vectors` vectors of output channels. It is loaded
from the accumulators, gains the products of a chunk of window taps (taps kh, kw, then input
channels c: the order the GEMM path sums in, so results are the same bit for bit) and is stored:
KH*KW*C/chunks multiply-adds per element between a load and a store. Each step of k loads
`vectors` filter vectors and broadcasts `mr` input elements. A tile's pixels are consecutive in
(n, oh, ow) order, so it may span output rows: a small image (7 x 7) fills its tiles as well as a
large one, and each pixel has its own input pointer.

The filter is packed one block of nr output channels at a time, into a panel of KH*KW*C lines
of nr channels (the last block zero-padded to whole vectors), so a step of k reads one line; all
the range's pixels then run over that panel before the next block is packed, so the filter is
packed once per workgroup range and each panel line serves every tile. A constant filter comes
already packed (global-optimization's pack-conv-filters) and is read where it lies. The taps
are split into chunks and the pixels into blocks whose input rows stay in L2
(conv_blocking.py). Strides and dilations are in the input addressing. Every size but the pixel
range is a constant of the generated code, so LLVM sees fixed trip counts and offsets. The
register tile is in conv_tiles.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import llvmlite.ir as ir

from weir.compiler.targets.llvm_cpu.conv_blocking import conv_tile, ConvGeometry
from weir.compiler.targets.llvm_cpu.conv_tiles import Pixels, Tiles
from weir.compiler.targets.llvm_cpu.epilogue import input_offsets, VectorEpilogue
from weir.compiler.targets.llvm_cpu.kernel_values import ValueRef
from weir.compiler.targets.llvm_cpu.loops import I64, for_nest, for_range, smin

if TYPE_CHECKING:
    from weir.compiler.targets.llvm_cpu.lower_entry import EntryLowering

_F32 = ir.FloatType()
_PTR = _F32.as_pointer()
_VOID = ir.VoidType()


@dataclass(frozen=True)
class Panel:
    """The filter as the kernel reads it: all its panels, packed at compile time, one after
    another (`prepacked`), or scratch for the panel of one block."""

    ptr: ir.Value
    prepacked: bool


def direct_conv_applies(dtypes: tuple[str, str, str], static: list[object]) -> bool:
    """The kernel covers f32 input, filter and accumulator with every size known."""
    return dtypes == ("f32", "f32", "f32") and all(isinstance(d, int) for d in static)


class DirectConv(Tiles):
    """Writes one convolution's row kernel into the entry's module, and the packing of its filter
    into the entry."""

    def __init__(self, low: EntryLowering, name: str, g: ConvGeometry,
                 epilogue: VectorEpilogue | None = None) -> None:
        self.low, self.g = low, g
        # The entry's epilogue when it is a `vector_epilogue` (ReLU): applied to the
        # accumulators as the last chunk of taps stores them; the caller runs no pass of it.
        self.epilogue = epilogue
        self.blk = conv_tile(low.cpu, g)
        self.full_blocks = g.feats // self.blk.nr
        rest = g.feats - self.full_blocks * self.blk.nr
        # The last, partial block of channels: its vectors and valid channels (0: none).
        self.rest_vectors = -(-rest // self.blk.lanes)
        self.rest = rest
        self.taps = g.kh * g.kw * g.chans  # depth of a panel
        self.full_fn = self._range_function(f"{name}.full", self.blk.vectors, self.blk.nr)
        self.rest_fn = self._range_function(f"{name}.rest", self.rest_vectors, self.rest) \
            if self.rest_vectors else None

    @property
    def blocks(self) -> int:
        """Blocks of nr output channels, the last one partial when nr does not divide F."""
        return self.full_blocks + (1 if self.rest_vectors else 0)

    # -- packing ----------------------------------------------------------------------------

    def _pack_block(self, b: ir.IRBuilder, w: ValueRef, layout: str, panel: ir.Value,
                    block: ir.Value, full: bool) -> None:
        """Block `block` of the filter (any permutation of HWCF, memory or an elementwise
        expression) as the panel at `panel`: KH*KW*C lines of nr channels, or of the rest
        block's vectors (zero past F) when not `full`, each line nr elements after the last."""
        from weir.compiler.targets.llvm_cpu.element_eval import Body
        low, g, nr = self.low, self.g, self.blk.nr

        def store(bb: ir.IRBuilder, value: ir.Value, width: int, tap: list[ir.Value],
                  j: ir.Value) -> None:
            kh, kw, c = tap
            depth = bb.add(bb.mul(bb.add(bb.mul(kh, I64(g.kw)), kw), I64(g.chans)), c)
            at = bb.add(bb.mul(depth, I64(width)), j)
            bb.store(value, bb.gep(panel, [at], inbounds=True))

        def element(bb: ir.IRBuilder, tap: list[ir.Value], f: ir.Value) -> ir.Value:
            letters = {"H": tap[0], "W": tap[1], "C": tap[2], "F": f}
            value = low.element(bb, w, [letters[d] for d in layout], Body())
            return low.convert(bb, value, low.kv.dtype[w], "f32")

        sizes = {"H": g.kh, "W": g.kw, "C": g.chans}
        order = _packing_order(layout)

        def pack(bb: ir.IRBuilder, block: ir.Value, width: int, columns: tuple[int, int],
                 zeros: bool, name: str) -> None:
            """Columns [columns) of one block: the filter's, or zeros past its F."""
            f0 = bb.mul(block, I64(nr))
            bounds = [(I64(columns[0]), I64(columns[1])) if d == "F" else (I64(0), I64(sizes[d]))
                      for d in order]

            def body(ib: ir.IRBuilder, idx: list[ir.Value]) -> None:
                at = dict(zip(order, idx))
                tap = [at["H"], at["W"], at["C"]]
                value = ir.Constant(_F32, 0.0) if zeros else \
                    element(ib, tap, ib.add(f0, at["F"]))
                store(ib, value, width, tap, at["F"])
            for_nest(bb, bounds, body, name)

        if full:
            pack(b, block, nr, (0, nr), False, "pk")
        else:  # lines nr apart, as in a panel packed at compile time (zeros past F)
            width = self.rest_vectors * self.blk.lanes
            pack(b, block, nr, (0, self.rest), False, "pr")
            pack(b, block, nr, (self.rest, width), True, "pz")

    def panel(self, b: ir.IRBuilder, packed: ir.Value | None) -> Panel:
        """Where `run` finds the filter's panels: `packed`, the panels global-optimization
        stored at compile time (the last one padded to nr channels), or else scratch for one block,
        which `run` packs before each block's pixels (allocated here, outside any loop)."""
        if packed is not None:
            return Panel(packed, True)
        return Panel(self.low.scratch_memory(b, "f32", [I64(self.taps * self.blk.nr)]).ptr,
                     False)

    def run(self, b: ir.IRBuilder, w: ValueRef, layout: str, x: Pixels,
            pixels: tuple[ir.Value, ir.Value], c: ir.Value, c_first: ir.Value,
            ldc: ir.Value, panels: Panel, blocks: tuple[ir.Value, ir.Value],
            row: ir.Value | None = None) -> None:
        """Output pixels [pixels) (numbered (n * OH + oh) * OW + ow; whole rows, so that a
        tile whose pixel count divides OW never spans two) of the channel blocks
        [blocks) (of `self.blocks`; the last one may be partial): row p of the f32 accumulator
        at c + (p - c_first) * ldc gains the convolution of the input `x` with the filter `w`
        (dimensions named by `layout`). One block of nr channels at a time: its panel is
        packed into scratch, unless it was packed at compile time, then every pixel runs over
        it, so the filter is packed at most once per call and each panel line loaded serves
        all the pixels' tiles. With a `row` (F values: a bias, `bias_row`), the accumulators
        are not read: each pixel starts from the row instead."""
        def block(bb: ir.IRBuilder, fb: ir.Value, full: bool) -> None:
            if panels.prepacked:
                at = bb.gep(panels.ptr, [bb.mul(fb, I64(self.taps * self.blk.nr))],
                            inbounds=True)
            else:
                self._pack_block(bb, w, layout, panels.ptr, fb, full)
                at = panels.ptr
            fn = self.full_fn if full else self.rest_fn
            assert fn is not None
            col0 = bb.mul(fb, I64(self.blk.nr))
            start = ir.Constant(_PTR, None) if row is None else \
                bb.gep(row, [col0], inbounds=True)
            bb.call(fn, [x.ptr, x.image0, x.image_stride, x.row_stride, *pixels, at, c,
                         c_first, ldc, col0, start, *offsets])
        # Where the epilogue's other tensors (a residual) lie against the output, in bytes.
        offsets = input_offsets(b, self.low, self.epilogue)
        with b.if_then(b.icmp_signed("<", pixels[0], pixels[1])):
            for_range(b, blocks[0], smin(b, blocks[1], I64(self.full_blocks)),
                      lambda bb, fb: block(bb, fb, True), "fb")
            if self.rest_fn is not None:
                with b.if_then(b.icmp_signed(">", blocks[1], I64(self.full_blocks))):
                    block(b, I64(self.full_blocks), False)

    @property
    def pixels_per_block(self) -> int:
        """Pixels whose tiles run over every chunk of taps of a block's panel before the next
        pixels do: enough that each chunk's lines, loaded into L1, serve many tiles, few
        enough that the input rows they read (about KH rows of sw * C per pixel) stay in L2
        (256 KiB of it)."""
        g, mr = self.g, self.blk.mr
        per_pixel = g.sw * g.chans * 4 * g.kh
        return mr * max(1, (256 * 1024) // (per_pixel * mr))

    def _range_function(self, name: str, vectors: int, valid: int) -> ir.Function:
        """The pixels [p_lo, p_hi) over one block's panel (`vectors` vectors wide, `valid`
        channels from column col0), in blocks of pixels, each over every chunk of taps."""
        g, blk = self.g, self.blk
        inputs = 0 if self.epilogue is None else len(self.epilogue.inputs)
        fn = ir.Function(self.low.module, ir.FunctionType(
            _VOID, [_PTR, I64, I64, I64, I64, I64, _PTR, _PTR, I64, I64, I64, _PTR] +
            [I64] * inputs), name)
        fn.linkage = "internal"
        fn.attributes.add("nounwind")
        for i in (6, 7):
            fn.args[i].add_attribute("noalias")
        x, image0, image_stride, row_stride, p_lo, p_hi, panel, c, c_first, ldc, col0, row = \
            fn.args[:12]
        offsets = list(fn.args[12:])
        source = Pixels(x, image0, image_stride, row_stride)
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        slots = [b.alloca(ir.VectorType(_F32, blk.lanes)) for _ in range(blk.mr * vectors)]
        per_chunk = self.taps_per_chunk
        chunks, last = divmod(g.kh * g.kw, per_chunk)
        step = self.pixels_per_block
        blocks_of_pixels = b.sdiv(b.add(b.sub(p_hi, p_lo), I64(step - 1)), I64(step))

        def pixel_block(pb: ir.IRBuilder, i: ir.Value) -> None:
            first = pb.add(p_lo, pb.mul(i, I64(step)))
            end = smin(pb, pb.add(first, I64(step)), p_hi)
            tiles = pb.sdiv(pb.add(pb.sub(end, first), I64(blk.mr - 1)), I64(blk.mr))

            def chunks_of_taps(kb: ir.IRBuilder, prefetch: bool) -> None:
                def chunk(cb: ir.IRBuilder, tap0: ir.Value, count: int) -> None:
                    def tile(tb: ir.IRBuilder, k: ir.Value) -> None:
                        p0 = tb.add(first, tb.mul(k, I64(blk.mr)))
                        self._tile(tb, vectors, valid, source, panel, p0, end, c, c_first,
                                   ldc, col0, slots, tap0, count, row, prefetch, offsets)
                    for_range(cb, I64(0), tiles, tile, "tile")
                for_range(kb, I64(0), I64(chunks),
                          lambda cb, j: chunk(cb, cb.mul(j, I64(per_chunk)), per_chunk),
                          "chunk")
                if last:
                    chunk(kb, I64(chunks * per_chunk), last)
            # The first block of pixels reads the panel from memory: it prefetches each next
            # chunk of taps meanwhile. The blocks after it find the panel in L2.
            with pb.if_else(pb.icmp_signed("==", i, I64(0))) as (streaming, cached):
                with streaming:
                    chunks_of_taps(pb, True)
                with cached:
                    chunks_of_taps(pb, False)
        for_range(b, I64(0), blocks_of_pixels, pixel_block, "pixels")
        b.ret_void()
        return fn


def _packing_order(layout: str) -> str:
    """The loops that pack a block of the filter, outermost first: the filter's own order, so
    reads run along its innermost dimensions, then the block's columns (F) innermost, so each
    innermost loop writes one panel line: a short static loop of contiguous stores. (With F
    further out, as in FCHW, LLVM unrolled the window's loops inside it and vectorised across
    F around them: for a 7 x 7 window one block of 392 loads and 49 stores, whose pairwise
    dependence checks cost seconds of compile time.)"""
    return "".join(d for d in layout if d != "F") + "F"
