"""An f32 W x F accumulator row written into an output whose rows run along W (NCHW), 8 x 8
elements at a time through registers.

Why: a convolution with an NCHW output accumulates each output row as W x F scratch (the
layout its register tiles write) and stores it transposed. Element by element that is a load
and a store per output element, about as long as a 1x1 convolution's whole arithmetic when its
input has few channels (ResNet's 64 -> 256 expansions). Eight W-vectors of 8 channels loaded,
transposed by shuffles and stored as eight F-rows of 8 pixels move 64 elements with 16 memory
instructions. The edges (W or F not a multiple of 8) go element by element."""

from __future__ import annotations

import llvmlite.ir as ir

from weir.compiler.targets.llvm_cpu.loops import I64, for_nest, for_range

_F32 = ir.FloatType()
_I32 = ir.IntType(32)
_LANES = 8
_VEC = ir.VectorType(_F32, _LANES)


def write_transposed(b: ir.IRBuilder, src: ir.Value, ld: ir.Value, dest: ir.Value,
                     f_stride: ir.Value, width: ir.Value, feats: ir.Value) -> None:
    """dest[f * f_stride + w] = src[w * ld + f] for w < width, f < feats (f32 pointers)."""
    f_blocks = b.sdiv(feats, I64(_LANES))
    w_blocks = b.sdiv(width, I64(_LANES))
    w_edge = b.mul(w_blocks, I64(_LANES))

    def block(bb: ir.IRBuilder, idx: list[ir.Value]) -> None:
        f0, w0 = bb.mul(idx[0], I64(_LANES)), bb.mul(idx[1], I64(_LANES))
        rows = [_load(bb, src, bb.add(bb.mul(bb.add(w0, I64(i)), ld), f0))
                for i in range(_LANES)]
        for j, column in enumerate(_transpose(bb, rows)):
            at = bb.add(bb.mul(bb.add(f0, I64(j)), f_stride), w0)
            _store(bb, column, dest, at)
    for_nest(b, [(I64(0), f_blocks), (I64(0), w_blocks)], block, "tr")

    def element(bb: ir.IRBuilder, f: ir.Value, w: ir.Value) -> None:
        value = bb.load(bb.gep(src, [bb.add(bb.mul(w, ld), f)], inbounds=True))
        bb.store(value, bb.gep(dest, [bb.add(bb.mul(f, f_stride), w)], inbounds=True))
    f_edge = b.mul(f_blocks, I64(_LANES))
    # The pixels past the last whole block of W, for the channels of whole blocks; then every
    # pixel of the channels past the last whole block of F.
    # Rolled: unrolled and vectorised, an edge of 64 strided elements was one block of 128
    # loads, which LLVM takes long over for a few elements' worth of work.
    for_nest(b, [(I64(0), f_edge), (w_edge, width)],
             lambda bb, idx: element(bb, idx[0], idx[1]), "trw", unroll=False)
    for_range(b, f_edge, feats,
              lambda fb, f: for_range(fb, I64(0), width, lambda wb, w: element(wb, f, w), "trf",
                                      unroll=False),
              "trc", unroll=False)


def _load(b: ir.IRBuilder, base: ir.Value, at: ir.Value) -> ir.Value:
    ptr = b.bitcast(b.gep(base, [at], inbounds=True), _VEC.as_pointer())
    return b.load(ptr, align=4)


def _store(b: ir.IRBuilder, value: ir.Value, base: ir.Value, at: ir.Value) -> None:
    ptr = b.bitcast(b.gep(base, [at], inbounds=True), _VEC.as_pointer())
    b.store(value, ptr, align=4)


def _shuffle(b: ir.IRBuilder, x: ir.Value, y: ir.Value, mask: list[int]) -> ir.Value:
    return b.shuffle_vector(x, y, ir.Constant(ir.VectorType(_I32, _LANES), mask))


def _transpose(b: ir.IRBuilder, rows: list[ir.Value]) -> list[ir.Value]:
    """The columns of an 8 x 8 block given as 8 row vectors: interleave pairs of rows, then
    pairs of pairs, then the 128-bit halves (three shuffle stages, AVX's unpack/shuffle/
    permute pattern)."""
    lo, hi = [0, 8, 1, 9, 4, 12, 5, 13], [2, 10, 3, 11, 6, 14, 7, 15]
    t = []
    for i in range(0, _LANES, 2):
        t += [_shuffle(b, rows[i], rows[i + 1], lo), _shuffle(b, rows[i], rows[i + 1], hi)]
    # t: (r0r1 lo, r0r1 hi, r2r3 lo, r2r3 hi, r4r5 lo, ...)
    pair_lo, pair_hi = [0, 1, 8, 9, 4, 5, 12, 13], [2, 3, 10, 11, 6, 7, 14, 15]
    u = []
    for base in (0, 4):
        for k in (0, 1):
            u += [_shuffle(b, t[base + k], t[base + k + 2], pair_lo),
                  _shuffle(b, t[base + k], t[base + k + 2], pair_hi)]
    # u: columns (0, 1, 2, 3) of rows 0-3 in u[0:4], of rows 4-7 in u[4:8], per 128-bit half.
    first, second = [0, 1, 2, 3, 8, 9, 10, 11], [4, 5, 6, 7, 12, 13, 14, 15]
    return [_shuffle(b, u[j], u[j + 4], first) for j in range(4)] + \
        [_shuffle(b, u[j], u[j + 4], second) for j in range(4)]
