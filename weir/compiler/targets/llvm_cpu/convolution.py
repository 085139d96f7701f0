"""Window ops. An f32 convolution with static channel, window and output sizes runs on the direct
microkernel (direct_conv.py, conv_kernel.py).

Any other convolution is, per output row (n, oh), the sum over window taps (kh, kw) of one GEMM:
the OW x C input rows starting at (oh*sh + kh*dh, kw*dw), read with a row stride of sw*C, times
the C x F filter slice of that tap. Other layouts are brought to NHWC/HWCF in scratch (the
filter once per workgroup, the input one row at a time, each output row accumulated in scratch
and written back in its own layout), so every layout keeps the GEMM and the row partitioning.

A 1x1 f32 convolution of channels-first images is one GEMM per image and range of rows,
straight into the output (pointwise_conv.py). Depthwise convolution of f32 with static sizes
is vectorised (depthwise.py), and so is NHWC pooling of f32 with static sizes (pooling.py);
other depthwise convolutions and poolings have no contraction: plain loops over the output,
the window innermost, reading a padded input element by element through its bounds."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import llvmlite.ir as ir

from weir.compiler.targets.llvm_cpu import scalars as s
from weir.compiler.targets.llvm_cpu.epilogue import finish_block
from weir.compiler.targets.llvm_cpu.contraction import (
    Strided,
    accumulate_into,
    accumulator,
    copy_back,
    gemm,
    in_memory,
)
from weir.compiler.targets.llvm_cpu.conv_rows import (
    at_layout,
    copy_input_row,
    fill_row,
    transposed_row_copy,
    write_row,
)
from weir.compiler.targets.llvm_cpu.depthwise import (
    lower_vector_depthwise,
    vector_depthwise_applies,
)
from weir.compiler.targets.llvm_cpu.direct_conv import direct_kernel, lower_direct
from weir.compiler.targets.llvm_cpu.kernel_values import ValueRef
from weir.compiler.targets.llvm_cpu.loops import I64, for_nest, for_range
from weir.compiler.targets.llvm_cpu.pooling import lower_vector_pool, vector_pool_applies
from weir.compiler.targets.llvm_cpu.pointwise_conv import (
    lower_pointwise,
    lower_pointwise_nhwc,
    pointwise_applies,
    pointwise_nhwc_applies,
)
from weir.format import kernel_description as k

if TYPE_CHECKING:
    from weir.compiler.targets.llvm_cpu.element_eval import Memory
    from weir.compiler.targets.llvm_cpu.lower_entry import EntryLowering


def _in_order(low: EntryLowering, b: ir.IRBuilder, v: ValueRef, layout: str,
              order: str) -> Memory:
    """`v` (dimensions named by `layout`) as row-major memory with dimensions in `order`: its
    own memory when the orders agree, else a scratch copy."""
    if layout == order:
        return in_memory(low, b, v)
    from weir.compiler.targets.llvm_cpu.element_eval import Body
    sizes = dict(zip(layout, low.dims(v)))
    scratch = low.scratch_memory(b, low.kv.dtype[v], [sizes[c] for c in order])

    def copy(bb: ir.IRBuilder, idx: list[ir.Value]) -> None:
        value = low.element(bb, v, at_layout(layout, dict(zip(order, idx))), Body())
        s.store_element(bb, value, scratch.address(bb, idx), scratch.dtype)
    for_nest(b, [(I64(0), sizes[c]) for c in order], copy, "perm")
    return scratch


def lower_conv(low: EntryLowering, b: ir.IRBuilder, n: int, op: k.Conv2D,
               partitioned: bool) -> tuple[k.Dim, int]:
    if op.depthwise:
        if vector_depthwise_applies(low, op, n):
            return lower_vector_depthwise(low, b, n, op, partitioned)
        return _lower_depthwise(low, b, n, op, partitioned)
    if pointwise_applies(low, n, op):
        return lower_pointwise(low, b, n, op, partitioned)
    if pointwise_nhwc_applies(low, n, op):
        return lower_pointwise_nhwc(low, b, n, op, partitioned)
    kv = low.kv
    x, w, init, out = kv.ref(op.input), kv.ref(op.filter), kv.ref(op.init), (n, 0)
    dest = low.memory[out]
    in_layout, out_layout = op.input_layout, op.output_layout
    xd = dict(zip(in_layout, low.dims(x)))
    wd = dict(zip(op.filter_layout, low.dims(w)))
    od = dict(zip(out_layout, low.dims(out)))
    kh_n, kw_n, feats = wd["H"], wd["W"], wd["F"]
    out_h, out_w = od["H"], od["W"]
    acc = accumulator(kv.dtype[x], kv.dtype[w], kv.dtype[out])
    shape = dict(zip(out_layout, kv.shape[out]))
    direct = direct_kernel(low, n, op, acc)
    # A padded input is read through its bounds, row by row, and the direct kernel brings in an
    # NCHW image transposed to NHWC by the rows each workgroup reads: neither is materialised
    # whole (which every workgroup did, element by element: a sixth of a 3 x 3 stem's time).
    by_rows = x[0] in kv.padded_inputs or \
        (direct is not None and transposed_row_copy(low, x) is not None)
    xm = in_memory(low, b, x) if in_layout == "NHWC" and not by_rows else None
    if direct is None:
        wm = _in_order(low, b, w, op.filter_layout, "HWCF")
    extent: k.Dim = 1
    tile = 1
    lo, hi = I64(0), b.mul(od["N"], out_h)
    per_row = 1  # multiply-adds per output row: OW x F x KH x KW x C
    if partitioned and isinstance(shape["N"], int) and isinstance(shape["H"], int):
        rows = shape["N"] * shape["H"]
        wd_static = dict(zip(op.filter_layout, kv.shape[w]))
        for d in (shape["W"], shape["F"], wd_static["H"], wd_static["W"], wd_static["C"]):
            per_row *= d if isinstance(d, int) else 64
        _, extent, tile = low.grid((rows,), per_row)
        lo, hi = low.partition_bounds(b, I64(rows), tile)

    if direct is not None:
        return lower_direct(low, b, n, op, direct, xm, acc, (extent, tile), (lo, hi), per_row)

    def row(rb: ir.IRBuilder, r: ir.Value) -> None:
        bn, oh = rb.sdiv(r, out_h), rb.srem(r, out_h)
        if out_layout == "NHWF":
            c, scratch = accumulate_into(low, rb, init, dest, [bn, oh], (I64(0), out_w),
                                         (I64(0), feats), acc)
        else:
            c = _row_accumulator(low, rb, init, out_layout, bn, oh, out_w, feats, acc)
        _tap_gemms(low, rb, x, xm, wm, in_layout, bn, oh, op, xd, kh_n, kw_n, out_w, feats, c)
        if out_layout == "NHWF":
            if scratch:
                copy_back(low, rb, c, dest, [bn, oh], (I64(0), out_w), (I64(0), feats))
        else:
            write_row(low, rb, c, dest, out_layout, bn, oh, out_w, (I64(0), feats))
        spans = {"N": (bn, rb.add(bn, I64(1))), "H": (oh, rb.add(oh, I64(1))),
                 "W": (I64(0), out_w)}
        finish_block(low, rb, n, [spans.get(d, (I64(0), feats)) for d in out_layout])
    for_range(b, lo, hi, lambda rb, r: low.scoped(rb, lambda: row(rb, r)), "row")
    return extent, tile


def _tap_gemms(low: EntryLowering, b: ir.IRBuilder, x: ValueRef, xm: Memory | None,
               wm: Memory, layout: str, bn: ir.Value, oh: ir.Value, op: k.Conv2D,
               xd: dict[str, ir.Value], kh_n: ir.Value, kw_n: ir.Value, out_w: ir.Value,
               feats: ir.Value, c: Strided) -> None:
    """c += output row (bn, oh) as one GEMM call per window tap: the general path, for any
    element types and dynamic sizes."""
    (sh, sw), (dh, dw) = op.strides, op.dilations
    chans = xd["C"]
    dtype = low.kv.dtype[x]
    line = None if xm is not None else low.scratch_memory(b, dtype, [xd["W"], chans])

    def tap_row(hb: ir.IRBuilder, kh: ir.Value) -> None:
        ih = hb.add(hb.mul(oh, I64(sh)), hb.mul(kh, I64(dh)))
        if line is not None:
            copy_input_row(low, hb, x, layout, bn, ih, xd["W"], chans, line)

        def tap(tb: ir.IRBuilder, kw: ir.Value) -> None:
            iw = tb.mul(kw, I64(dw))
            if xm is not None:
                start = xm.address(tb, [bn, ih, iw, I64(0)])
            else:
                assert line is not None
                start = line.address(tb, [iw, I64(0)])
            a = Strided(start, tb.mul(chans, I64(sw)), dtype)
            f = Strided(wm.address(tb, [kh, kw, I64(0), I64(0)]), feats, wm.dtype)
            gemm(low, tb, out_w, feats, chans, a, f, c)
        for_range(hb, I64(0), kw_n, tap, "kw")
    for_range(b, I64(0), kh_n, tap_row, "kh")


def _row_accumulator(low: EntryLowering, b: ir.IRBuilder, init: ValueRef, layout: str,
                     bn: ir.Value, oh: ir.Value, out_w: ir.Value, feats: ir.Value,
                     acc: str) -> Strided:
    """Output row (bn, oh) of `init` (dimensions named by `layout`) as OW x F scratch of the
    accumulator type."""
    scratch = low.scratch_memory(b, acc, [out_w, feats])
    fill_row(low, b, init, layout, bn, oh, out_w, feats, acc, scratch.ptr, (I64(0), feats))
    return Strided(scratch.ptr, feats, acc)


# ------------------------------------------------------------------- plain window loops

Combine = Callable[[ir.IRBuilder, ir.Value, ir.Value, dict[str, ir.Value]], ir.Value]


def _window_loops(low: EntryLowering, b: ir.IRBuilder, n: int, x: ValueRef, init: ValueRef,
                  layout: str, window: tuple[ir.Value, ir.Value], work: int,
                  strides: tuple[int, int], dilations: tuple[int, int], combine: Combine,
                  partitioned: bool) -> tuple[k.Dim, int]:
    """For every output element (input and output share `layout`): init, then for each window
    tap `acc = combine(acc, input element, letters)`, where letters name the output position
    (N, C, H, W) and the tap (h, w). Computed in the output's register type."""
    from weir.compiler.targets.llvm_cpu.element_eval import Body
    kv = low.kv
    out = (n, 0)
    dest = low.memory[out]
    dtype = kv.dtype[out]
    bounds = [(I64(0), d) for d in low.dims(out)]
    extent: k.Dim = 1
    tile = 1
    if partitioned:
        p, extent, tile = low.grid(kv.shape[out], work)
        bounds[p] = low.partition_bounds(b, low.dim(extent), tile)
    h, w = layout.index("H"), layout.index("W")
    slot = low.alloca(s.register_type(dtype))

    def point(pb: ir.IRBuilder, idx: list[ir.Value]) -> None:
        pb.store(low.convert(pb, low.element(pb, init, idx, Body()), kv.dtype[init], dtype), slot)

        def tap(tb: ir.IRBuilder, t: list[ir.Value]) -> None:
            src = list(idx)
            src[h] = tb.add(tb.mul(idx[h], I64(strides[0])), tb.mul(t[0], I64(dilations[0])))
            src[w] = tb.add(tb.mul(idx[w], I64(strides[1])), tb.mul(t[1], I64(dilations[1])))
            value = low.convert(tb, low.element(tb, x, src, Body()), kv.dtype[x], dtype)
            letters = dict(zip(layout, idx)) | {"h": t[0], "w": t[1]}
            tb.store(combine(tb, tb.load(slot), value, letters), slot)
        for_nest(pb, [(I64(0), window[0]), (I64(0), window[1])], tap, "win")
        s.store_element(pb, pb.load(slot), dest.address(pb, idx), dest.dtype)
        finish_block(low, pb, n, [(i, pb.add(i, I64(1))) for i in idx])
    for_nest(b, bounds, point, "o")
    return extent, tile


def _lower_depthwise(low: EntryLowering, b: ir.IRBuilder, n: int, op: k.Conv2D,
                     partitioned: bool) -> tuple[k.Dim, int]:
    from weir.compiler.targets.llvm_cpu.element_eval import Body
    kv = low.kv
    x, f, init = kv.ref(op.input), kv.ref(op.filter), kv.ref(op.init)
    dtype = kv.dtype[(n, 0)]
    mul, add = ("mulf", "addf") if s.is_float(dtype) else ("muli", "addi")
    wd = dict(zip(op.filter_layout, low.dims(f)))
    shape = dict(zip(op.filter_layout, kv.shape[f]))
    work = (shape["H"] if isinstance(shape["H"], int) else 9) * \
        (shape["W"] if isinstance(shape["W"], int) else 9)

    def combine(tb: ir.IRBuilder, acc: ir.Value, value: ir.Value,
                at: dict[str, ir.Value]) -> ir.Value:
        letters = {"H": at["h"], "W": at["w"], "C": at["C"]}
        weight = low.element(tb, f, at_layout(op.filter_layout, letters), Body())
        weight = low.convert(tb, weight, kv.dtype[f], dtype)
        product = s.emit_scalar(tb, mul, [value, weight], dtype, None, [dtype, dtype])
        return s.emit_scalar(tb, add, [acc, product], dtype, None, [dtype, dtype])
    return _window_loops(low, b, n, x, init, op.input_layout, (wd["H"], wd["W"]), work,
                         op.strides, op.dilations, combine, partitioned)


def lower_pool(low: EntryLowering, b: ir.IRBuilder, n: int, op: k.Pool2D,
               partitioned: bool) -> tuple[k.Dim, int]:
    if vector_pool_applies(low, n, op):
        return lower_vector_pool(low, b, n, op, partitioned)
    dtype = low.kv.dtype[(n, 0)]
    combine_op = "addf" if op.kind == "sum" else "maximumf"
    if not s.is_float(dtype):
        combine_op = "addi" if op.kind == "sum" else "maxsi"

    def combine(tb: ir.IRBuilder, acc: ir.Value, value: ir.Value,
                at: dict[str, ir.Value]) -> ir.Value:
        return s.emit_scalar(tb, combine_op, [acc, value], dtype, None, [dtype, dtype])
    return _window_loops(low, b, n, low.kv.ref(op.input), low.kv.ref(op.init), op.layout,
                         (I64(op.window[0]), I64(op.window[1])), op.window[0] * op.window[1],
                         op.strides, op.dilations, combine, partitioned)
