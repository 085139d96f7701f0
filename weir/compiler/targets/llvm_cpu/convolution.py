"""Window ops. A convolution (NHWC input, HWCF filter) is, per output row (n, oh), the sum over
window taps (kh, kw) of one GEMM: the OW x C input rows starting at (oh*sh + kh*dh, kw*dw), read
with a row stride of sw*C, times the C x F filter slice of that tap. Rows (n, oh) are the
workgroups. Pooling has no contraction: plain loops, the window innermost."""

from __future__ import annotations

from typing import TYPE_CHECKING

import llvmlite.ir as ir

from weir.compiler.targets.llvm_cpu import scalars as s
from weir.compiler.targets.llvm_cpu.contraction import (
    Strided,
    accumulate_into,
    accumulator,
    copy_back,
    gemm,
    in_memory,
)
from weir.compiler.targets.llvm_cpu.loops import I64, for_nest, for_range
from weir.format import reference_kernel as k
from weir.errors import CompileError

if TYPE_CHECKING:
    from weir.compiler.targets.llvm_cpu.lower_entry import EntryLowering


def lower_conv(low: EntryLowering, b: ir.IRBuilder, n: int, op: k.Conv2D,
               partitioned: bool) -> tuple[k.Dim, int]:
    kv = low.kv
    if op.input_layout != "NHWC" or op.filter_layout != "HWCF":
        raise CompileError(f"llvm-cpu target: convolution layout {op.input_layout}/"
                           f"{op.filter_layout} is not supported (supported: NHWC/HWCF)")
    x, w, init, out = kv.ref(op.input), kv.ref(op.filter), kv.ref(op.init), (n, 0)
    dest = low.memory[out]
    chans = low.dims(x)[3]
    kh_n, kw_n, _, feats = low.dims(w)
    batch, out_h, out_w, _ = low.dims(out)
    (sh, sw), (dh, dw) = op.strides, op.dilations
    acc = accumulator(kv.dtype[x], kv.dtype[w], kv.dtype[out])
    xm, wm = in_memory(low, b, x), in_memory(low, b, w)
    shape = kv.shape[out]
    static_rows = isinstance(shape[0], int) and isinstance(shape[1], int)
    extent: k.Dim = 1
    tile = 1
    lo, hi = I64(0), b.mul(batch, out_h)
    if partitioned and static_rows:
        rows = shape[0] * shape[1]  # type: ignore[operator]
        per_row = 1
        for d in (shape[2], shape[3], *kv.shape[w][:3]):
            per_row *= d if isinstance(d, int) else 64
        _, extent, tile = low.grid((rows,), per_row)
        lo, hi = low.partition_bounds(b, I64(rows), tile)

    def row(rb: ir.IRBuilder, r: ir.Value) -> None:
        bn, oh = rb.sdiv(r, out_h), rb.srem(r, out_h)
        c, scratch = accumulate_into(low, rb, init, dest, [bn, oh], (I64(0), out_w),
                                     (I64(0), feats), acc)

        def tap(tb: ir.IRBuilder, t: list[ir.Value]) -> None:
            kh, kw = t
            ih = tb.add(tb.mul(oh, I64(sh)), tb.mul(kh, I64(dh)))
            a = Strided(xm.address(tb, [bn, ih, tb.mul(kw, I64(dw)), I64(0)]),
                        tb.mul(chans, I64(sw)), xm.dtype)
            f = Strided(wm.address(tb, [kh, kw, I64(0), I64(0)]), feats, wm.dtype)
            gemm(low, tb, out_w, feats, chans, a, f, c)
        for_nest(rb, [(I64(0), kh_n), (I64(0), kw_n)], tap, "tap")
        if scratch:
            copy_back(low, rb, c, dest, [bn, oh], (I64(0), out_w), (I64(0), feats))
    for_range(b, lo, hi, lambda rb, r: low.scoped(rb, lambda: row(rb, r)), "row")
    return extent, tile


def lower_pool(low: EntryLowering, b: ir.IRBuilder, n: int, op: k.Pool2D,
               partitioned: bool) -> tuple[k.Dim, int]:
    from weir.compiler.targets.llvm_cpu.lower_entry import Body
    kv = low.kv
    x, init, out = kv.ref(op.input), kv.ref(op.init), (n, 0)
    dest = low.memory[out]
    dtype = kv.dtype[out]
    shape = kv.shape[out]
    bounds = [(I64(0), d) for d in low.dims(out)]
    extent: k.Dim = 1
    tile = 1
    if partitioned:
        p, extent, tile = low.grid(shape, op.window[0] * op.window[1])
        bounds[p] = low.partition_bounds(b, low.dim(extent), tile)
    h, w = op.layout.index("H"), op.layout.index("W")
    combine = "addf" if op.kind == "sum" else "maximumf"
    if not s.is_float(dtype):
        combine = "addi" if op.kind == "sum" else "maxsi"
    slot = low.alloca(s.register_type(dtype))

    def point(pb: ir.IRBuilder, idx: list[ir.Value]) -> None:
        pb.store(low.convert(pb, low.element(pb, init, idx, Body()), kv.dtype[init], dtype), slot)

        def tap(tb: ir.IRBuilder, t: list[ir.Value]) -> None:
            src = list(idx)
            src[h] = tb.add(tb.mul(idx[h], I64(op.strides[0])), tb.mul(t[0], I64(op.dilations[0])))
            src[w] = tb.add(tb.mul(idx[w], I64(op.strides[1])), tb.mul(t[1], I64(op.dilations[1])))
            value = low.convert(tb, low.element(tb, x, src, Body()), kv.dtype[x], dtype)
            tb.store(s.emit_scalar(tb, combine, [tb.load(slot), value], dtype, None,
                                   [dtype, dtype]), slot)
        for_nest(pb, [(I64(0), I64(op.window[0])), (I64(0), I64(op.window[1]))], tap, "win")
        s.store_element(pb, pb.load(slot), dest.address(pb, idx), dest.dtype)
    for_nest(b, bounds, point, "o")
    return extent, tile
