"""Contractions: matmul (2-D, or 3-D with a leading batch dimension) and 2-D convolution, all as
calls of the GEMM microkernel (gemm.py) on strided row-major memory; a convolution is the sum
over its window taps of one (OW x C) @ (C x F) product per output row. A matmul's right operand
that is memory under another index (a transpose, reshape or slice of a binding: strided.py) is
read in place; other operands that are elementwise expressions are first written to scratch
memory (for the left operand of a matmul only the rows its workgroup needs), because the
microkernel's packing reads plain memory. Products of at most SMALL_M rows skip the packing
altogether (gemv.py), B row-major or transposed.

The microkernel accumulates f32 for f16/bf16/f32 inputs, i32 for i8, f64 for f64; a result of
another type accumulates in scratch of that type and is converted once at the end, as the
reference target does. Type combinations the microkernel lacks run as plain i-k-j loops."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import llvmlite.ir as ir

from weir.compiler.targets.llvm_cpu import scalars as s
from weir.compiler.targets.llvm_cpu.epilogue import finish_block
from weir.compiler.targets.llvm_cpu.gemm import panel_columns
from weir.compiler.targets.llvm_cpu.gemm_calls import call_gemm, declare_gemv, PREPACKED_TYPES
from weir.compiler.targets.llvm_cpu.kernel_values import ValueRef
from weir.compiler.targets.llvm_cpu.loops import I64, for_nest, for_range
from weir.compiler.targets.llvm_cpu.strided import packed_source, strided_view
from weir.format import kernel_description as k
from weir.format.packed_weights import MATMUL_PANELS_PERMUTATION, matmul_panels_shape

if TYPE_CHECKING:
    from weir.compiler.targets.llvm_cpu.element_eval import Memory
    from weir.compiler.targets.llvm_cpu.lower_entry import EntryLowering

# (lhs, rhs, accumulator) element types the microkernel implements.
GEMM_TYPES = frozenset({("f32", "f32", "f32"), ("f16", "f16", "f32"), ("bf16", "bf16", "f32"),
                        ("i8", "i8", "i32"), ("f64", "f64", "f64")})

# A matmul of at most this many multiply-adds (static sizes) is plain loops: the microkernel's
# call, packing and scratch allocation cost more than a 4x4 product itself.
DIRECT_MACS = 2048
# A matmul with fewer rows than this (and than columns) splits its columns over workgroups, in
# multiples of COLUMN_TILE (a whole number of the microkernel's register-tile widths).
SHORT_M = 256
COLUMN_TILE = 64
# A matmul with at most this many rows reads B in place (gemv.py): each element of B feeds
# so few multiply-adds that packing it costs more than the product. Measured on AVX2 (f32,
# K x N = 256 x 8192 and 1024 x 4096): 3x the GEMM microkernel's speed at M = 1, 1.5x at 3,
# about even at 4 and 5, slower from 6.
SMALL_M = 4


def accumulator(lhs: str, rhs: str, result: str) -> str:
    """Where the products add up: the microkernel's type when it handles the inputs, else the
    result's own type."""
    for acc in ("f32", "i32", "f64"):
        if (lhs, rhs, acc) in GEMM_TYPES and s.register_type(result) == s.register_type(acc):
            return acc
    return result


@dataclass
class Strided:
    """A matrix in memory: first element, row stride in elements, element type."""

    ptr: ir.Value
    ld: ir.Value
    dtype: str


def gemm(low: EntryLowering, b: ir.IRBuilder, M: ir.Value, N: ir.Value, K: ir.Value,
         a: Strided, bm: Strided, c: Strided, direct: bool = False,
         from_zero: bool = False, row: ir.Value | None = None) -> None:
    """c += a @ bm, with c already in the accumulator type; with `from_zero`, c = a @ bm, c's
    contents never read (the microkernel's own variant; the other kernels get c zeroed first);
    with a `row` (N values of the accumulator type), c = row + a @ bm, each of c's rows started
    from the row (`bias_row`).
    `direct`: plain loops even where the microkernel applies (tiny static products, for which
    its packing and scratch cost more than the multiply-adds; LLVM unrolls the loops' constant
    bounds). Up to SMALL_M rows (decided at run time when M is dynamic) B is read in place
    instead of packed."""
    types = (a.dtype, bm.dtype, c.dtype)
    if types in GEMM_TYPES and not direct:
        args = [M, N, K, a.ptr, a.ld, bm.ptr, bm.ld, c.ptr, c.ld]
        low.gemms.add((types, False))

        def few_rows(fb: ir.IRBuilder) -> None:
            start_block(fb, c, M, N, from_zero, row)
            fb.call(declare_gemv(low.module, types, False), args)

        if isinstance(M, ir.Constant):
            if M.constant <= SMALL_M:
                few_rows(b)
            else:
                call_gemm(low, b, types, args, from_zero, row=row)
            return
        with b.if_else(b.icmp_signed("<=", M, I64(SMALL_M))) as (few, many):
            with few:
                few_rows(b)
            with many:
                call_gemm(low, b, types, args, from_zero, row=row)
        return
    start_block(b, c, M, N, from_zero, row)
    acc = c.dtype

    def row(rb: ir.IRBuilder, i: ir.Value) -> None:
        def step(kb: ir.IRBuilder, kk: ir.Value) -> None:
            x = low.convert(kb, s.load_element(kb, kb.gep(a.ptr, [kb.add(kb.mul(i, a.ld), kk)],
                                                          inbounds=True), a.dtype), a.dtype, acc)

            def col(cb: ir.IRBuilder, j: ir.Value) -> None:
                y = low.convert(cb, s.load_element(cb, cb.gep(
                    bm.ptr, [cb.add(cb.mul(kk, bm.ld), j)], inbounds=True), bm.dtype), bm.dtype, acc)
                cp = cb.gep(c.ptr, [cb.add(cb.mul(i, c.ld), j)], inbounds=True)
                old = s.load_element(cb, cp, acc)
                if s.is_float(acc):
                    new = cb.fadd(old, cb.fmul(x, y, flags=("contract",)), flags=("contract",))
                else:
                    new = cb.add(old, cb.mul(x, y))
                s.store_element(cb, new, cp, acc)
            for_range(kb, I64(0), N, col, "j")
        for_range(rb, I64(0), K, step, "k")
    for_range(b, I64(0), M, row, "i")


def zero_block(b: ir.IRBuilder, c: Strided, rows: ir.Value, cols: ir.Value) -> None:
    """c[rows x cols] = +0 (what a fill with zero leaves), for kernels that only accumulate."""
    def store(bb: ir.IRBuilder, idx: list[ir.Value]) -> None:
        r, col = idx
        at = bb.gep(c.ptr, [bb.add(bb.mul(r, c.ld), col)], inbounds=True)
        s.store_element(bb, s.constant(c.dtype, 0), at, c.dtype)
    for_nest(b, [(I64(0), rows), (I64(0), cols)], store, "zero")


def start_block(b: ir.IRBuilder, c: Strided, rows: ir.Value, cols: ir.Value, from_zero: bool,
                row: ir.Value | None) -> None:
    """What a kernel that only accumulates starts from: c's rows = `row`, or +0 `from_zero`;
    nothing (c as it is) otherwise."""
    if row is None:
        if from_zero:
            zero_block(b, c, rows, cols)
        return

    def store(bb: ir.IRBuilder, idx: list[ir.Value]) -> None:
        r, col = idx
        value = s.load_element(bb, bb.gep(row, [col], inbounds=True), c.dtype)
        s.store_element(bb, value, bb.gep(c.ptr, [bb.add(bb.mul(r, c.ld), col)], inbounds=True),
                        c.dtype)
    for_nest(b, [(I64(0), rows), (I64(0), cols)], store, "row")


def bias_row(low: EntryLowering, init: ValueRef, acc: str) -> ir.Value | None:
    """The row a contraction's init repeats, as a pointer to its first value, when the init is
    a broadcast of a vector in memory of the accumulator type along the output's last
    dimension (a bias): the product then starts each row of its tiles from the row
    (`gemm(row=...)`) instead of a pass that writes the broadcast into the output first."""
    op = low.kv.ops[init[0]]
    if init in low.memory or not isinstance(op, k.Broadcast):
        return None
    vector = low.kv.ref(op.input)
    rank = len(low.kv.shape[init])
    mem = low.memory.get(vector)
    if mem is None or low.kv.dtype[vector] != acc or len(low.kv.shape[vector]) != 1 or \
            op.dimensions != tuple(range(rank - 1)):
        return None
    return mem.ptr


def starts_from_zero(low: EntryLowering, init: ValueRef) -> bool:
    """Whether a contraction's init is all +0 without being memory (a fill with zero, or an
    empty tensor, which reads as zeros): the product may then overwrite its output instead of
    filling it and adding to it. Not -0: a sum started from it may keep its sign."""
    if init in low.memory:
        return False
    op = low.kv.ops[init[0]]
    if isinstance(op, k.Empty):
        return True
    return isinstance(op, k.Fill) and isinstance(op.value, (int, float)) and \
        op.value == 0 and math.copysign(1.0, op.value) > 0


def in_memory(low: EntryLowering, b: ir.IRBuilder, v: ValueRef) -> Memory:
    """`v` as row-major memory: its own, or a scratch copy of an elementwise expression."""
    from weir.compiler.targets.llvm_cpu.element_eval import Body
    mem = low.memory.get(v)
    if mem is not None:
        return mem
    dims = low.dims(v)
    scratch = low.scratch_memory(b, low.kv.dtype[v], dims)

    def copy(bb: ir.IRBuilder, idx: list[ir.Value]) -> None:
        s.store_element(bb, low.element(bb, v, idx, Body()), scratch.address(bb, idx),
                        scratch.dtype)
    for_nest(b, [(I64(0), d) for d in dims], copy, "m")
    return scratch


def _rows_in_memory(low: EntryLowering, b: ir.IRBuilder, v: ValueRef, prefix: list[ir.Value],
                    lo: ir.Value, hi: ir.Value) -> Strided:
    """Rows [lo, hi) of the matrix v[prefix...] as strided memory starting at row lo; an
    elementwise expression is materialised for those rows only."""
    from weir.compiler.targets.llvm_cpu.element_eval import Body
    dims = low.dims(v)
    cols = dims[-1]
    mem = low.memory.get(v)
    if mem is not None:
        return Strided(mem.address(b, prefix + [lo, I64(0)]), cols, mem.dtype)
    scratch = low.scratch_memory(b, low.kv.dtype[v], [b.sub(hi, lo), cols])

    def copy(bb: ir.IRBuilder, idx: list[ir.Value]) -> None:
        r, c = idx
        value = low.element(bb, v, prefix + [bb.add(r, lo), c], Body())
        s.store_element(bb, value, scratch.address(bb, [r, c]), scratch.dtype)
    for_nest(b, [(I64(0), b.sub(hi, lo)), (I64(0), cols)], copy, "m")
    return Strided(scratch.ptr, cols, scratch.dtype)


Span = tuple[ir.Value, ir.Value]  # [begin, end)


def accumulate_into(low: EntryLowering, b: ir.IRBuilder, init: ValueRef, dest: Memory,
                    prefix: list[ir.Value], rows: Span, cols: Span,
                    acc: str, fill: bool = True) -> tuple[Strided, bool]:
    """Memory holding the block init[prefix][rows, cols] in the accumulator type: the
    destination itself when it has that type, else scratch that `copy_back` must store (second
    result True). Without `fill`, the memory is left as it is, for a product that overwrites
    it."""
    from weir.compiler.targets.llvm_cpu.element_eval import Body
    (lo, hi), (c0, c1) = rows, cols
    direct = dest.dtype == acc
    if direct:
        target = Strided(dest.address(b, prefix + [lo, c0]), dest.dims[-1], acc)
    else:
        width = b.sub(c1, c0)
        target = Strided(low.scratch_memory(b, acc, [b.sub(hi, lo), width]).ptr, width, acc)
    if fill and not (direct and low.memory.get(init) is dest):
        def fill(bb: ir.IRBuilder, idx: list[ir.Value]) -> None:
            r, c = idx
            at_init = prefix + [bb.add(r, lo), bb.add(c, c0)]
            value = low.convert(bb, low.element(bb, init, at_init, Body()), low.kv.dtype[init], acc)
            at = bb.gep(target.ptr, [bb.add(bb.mul(r, target.ld), c)], inbounds=True)
            s.store_element(bb, value, at, acc)
        for_nest(b, [(I64(0), b.sub(hi, lo)), (I64(0), b.sub(c1, c0))], fill, "init")
    return target, not direct


def copy_back(low: EntryLowering, b: ir.IRBuilder, acc: Strided, dest: Memory,
              prefix: list[ir.Value], rows: Span, cols: Span) -> None:
    (lo, hi), (c0, c1) = rows, cols

    def copy(bb: ir.IRBuilder, idx: list[ir.Value]) -> None:
        r, c = idx
        value = s.load_element(bb, bb.gep(acc.ptr, [bb.add(bb.mul(r, acc.ld), c)],
                                          inbounds=True), acc.dtype)
        value = low.convert(bb, value, acc.dtype, dest.dtype)
        at = dest.address(bb, prefix + [bb.add(r, lo), bb.add(c, c0)])
        s.store_element(bb, value, at, dest.dtype)
    for_nest(b, [(I64(0), b.sub(hi, lo)), (I64(0), b.sub(c1, c0))], copy, "out")


def _extent(b: ir.IRBuilder, span: Span) -> ir.Value:
    """end - begin, a constant when both are (so that kernels can be chosen by it)."""
    lo, hi = span
    if isinstance(lo, ir.Constant) and isinstance(hi, ir.Constant):
        return I64(hi.constant - lo.constant)
    return b.sub(hi, lo)


def _rhs_in_place(low: EntryLowering, b: ir.IRBuilder, rhs: ValueRef, prefix: list[ir.Value],
                  col: ir.Value) -> tuple[Strided, bool] | None:
    """The right operand from column `col` on, read where it lies: (B row-major, False) when
    its columns are contiguous, (Bt, True) when its k is (a transpose: row n of Bt holds
    column n of B); None when neither (it is then copied to scratch)."""
    view = strided_view(low, b, rhs)
    if view is None:
        return None
    k_stride, n_stride = view.strides[-2:]
    start = view.address(b, prefix + [I64(0), col])
    if isinstance(n_stride, int) and n_stride == 1:
        return Strided(start, k_stride if isinstance(k_stride, ir.Value) else I64(k_stride),
                       view.dtype), False
    if isinstance(k_stride, int) and k_stride == 1:
        return Strided(start, n_stride if isinstance(n_stride, ir.Value) else I64(n_stride),
                       view.dtype), True
    return None


def _prepacked_rhs(low: EntryLowering, b: ir.IRBuilder, rhs: ValueRef) -> ir.Value | None:
    """The first panel of B when B is `collapse_shape(transpose(P x K x NR, [1, 0, 2]))` of
    contiguous memory with this CPU's panel width NR, or its first N columns (the last panel
    padded): constant weights that global-optimization stored in the microkernel's panel
    layout (pack_matmul_weights.py)."""
    shape = low.kv.shape[rhs]
    nr = panel_columns(low.cpu, "f32")
    if len(shape) != 2 or not all(isinstance(d, int) for d in shape):
        return None
    return packed_source(low, b, rhs, MATMUL_PANELS_PERMUTATION,
                         matmul_panels_shape(int(shape[0]), int(shape[1]), nr))  # type: ignore[arg-type]


def _product(low: EntryLowering, b: ir.IRBuilder, rhs: ValueRef, prefix: list[ir.Value],
             a: Strided, c: Strided, m: ir.Value, width: ir.Value, K: ir.Value, col: ir.Value,
             direct: bool, from_zero: bool, row: ir.Value | None = None) -> None:
    """c (+)= a @ rhs[prefix][:, col:col + width] through the kernel that reads rhs best: the
    prepacked microkernel on panels stored at compile time, dot products on a transposed rhs of
    few rows, the microkernel on rhs in place or (an expression) on a copy of it. With a `row`
    (a bias: `bias_row`), c = row[col:col + width] + the product."""
    row_at = None if row is None else b.gep(row, [col], inbounds=True)
    panels = None if direct or prefix or (a.dtype, "f32", c.dtype) != PREPACKED_TYPES \
        else _prepacked_rhs(low, b, rhs)
    if panels is not None:
        # Column blocks start at whole panels (multiples of COLUMN_TILE, or 0); ldb = K.
        first = b.gep(panels, [b.mul(col, K)], inbounds=True)
        call_gemm(low, b, PREPACKED_TYPES, [m, width, K, a.ptr, a.ld, first, K, c.ptr, c.ld],
                  from_zero, True, row_at)
        return
    view = None if direct else _rhs_in_place(low, b, rhs, prefix, col)
    if view is not None and not view[1]:
        gemm(low, b, m, width, K, a, view[0], c, direct, from_zero, row_at)
        return
    if view is not None:  # Bt: its rows are dot products for few rows only
        bt = view[0]
        types = (a.dtype, bt.dtype, c.dtype)
        if types in GEMM_TYPES and isinstance(m, ir.Constant) and m.constant <= SMALL_M:
            low.gemms.add((types, False))
            start_block(b, c, m, width, from_zero, row_at)
            b.call(declare_gemv(low.module, types, True),
                   [m, width, K, a.ptr, a.ld, bt.ptr, bt.ld, c.ptr, c.ld])
            return
    # More rows run the GEMM on a copy of rhs, as does an rhs that is an expression.
    rb = _rows_in_memory(low, b, rhs, prefix, I64(0), K)
    gemm(low, b, m, width, K, a, Strided(b.gep(rb.ptr, [col], inbounds=True), rb.ld, rb.dtype),
         c, direct, from_zero, row_at)


def lower_contraction(low: EntryLowering, b: ir.IRBuilder, n: int,
                      partitioned: bool) -> tuple[k.Dim, int]:
    op = low.kv.ops[n]
    if isinstance(op, k.Matmul):
        return _matmul(low, b, n, op, partitioned)
    from weir.compiler.targets.llvm_cpu.convolution import lower_conv, lower_pool
    if isinstance(op, k.Conv2D):
        return lower_conv(low, b, n, op, partitioned)
    assert isinstance(op, k.Pool2D)
    return lower_pool(low, b, n, op, partitioned)


def _matmul(low: EntryLowering, b: ir.IRBuilder, n: int, op: k.Matmul,
            partitioned: bool) -> tuple[k.Dim, int]:
    kv = low.kv
    lhs, rhs, init, out = kv.ref(op.lhs), kv.ref(op.rhs), kv.ref(op.init), (n, 0)
    shape = kv.shape[out]
    m_dim, n_dim, k_dim = shape[-2], shape[-1], kv.shape[lhs][-1]
    dest = low.memory[out]
    M, N, K = low.dim(m_dim), low.dim(n_dim), low.dim(k_dim)
    # An f16/bf16 matmul accumulates in its own type, rounding after each step of k as IREE's
    # does (the i-k-j loops; --weir-accumulate-f16-in-f32 makes it an f32 matmul in the input
    # phase, for the microkernel's speed and f32's precision).
    acc = kv.dtype[out] if kv.dtype[out] in ("f16", "bf16") else \
        accumulator(kv.dtype[lhs], kv.dtype[rhs], kv.dtype[out])
    # Multiply-adds per result row, to size workgroups (dynamic sizes guessed).
    work = (n_dim if isinstance(n_dim, int) else 256) * (k_dim if isinstance(k_dim, int) else 256)
    direct = isinstance(m_dim, int) and isinstance(n_dim, int) and isinstance(k_dim, int) and \
        m_dim * n_dim * k_dim <= DIRECT_MACS

    # A product into zeros overwrites its block instead: no pass to fill it, no loads of it;
    # so does a product into a broadcast bias, its tiles started from the bias.
    from_zero = starts_from_zero(low, init)
    row = None if from_zero or direct else bias_row(low, init, acc)

    def block(bb: ir.IRBuilder, prefix: list[ir.Value], rows: Span, cols: Span) -> None:
        c, scratch = accumulate_into(low, bb, init, dest, prefix, rows, cols, acc,
                                     fill=not from_zero and row is None)
        a = _rows_in_memory(low, bb, lhs, prefix, *rows)
        m, width = _extent(bb, rows), _extent(bb, cols)
        _product(low, bb, rhs, prefix, a, c, m, width, K, cols[0], direct, from_zero, row)
        if scratch:
            copy_back(low, bb, c, dest, prefix, rows, cols)
        finish_block(low, bb, n, [(i, bb.add(i, I64(1))) for i in prefix] + [rows, cols])

    if len(shape) == 3:
        extent: k.Dim = 1
        tile = 1
        lo, hi = I64(0), low.dim(shape[0])
        if partitioned:
            m_work = m_dim if isinstance(m_dim, int) else 256
            _, extent, tile = low.grid(shape[:1], work * m_work)
            lo, hi = low.partition_bounds(b, hi, tile)
        for_range(b, lo, hi, lambda bb, bi: low.scoped(
            bb, lambda: block(bb, [bi], (I64(0), M), (I64(0), N))), "batch")
        return extent, tile
    if not partitioned:
        block(b, [], (I64(0), M), (I64(0), N))
        return 1, 1
    if isinstance(m_dim, int) and isinstance(n_dim, int) and m_dim < min(n_dim, SHORT_M):
        # Few rows: split the columns instead, so each thread packs only its part of B.
        rows_work = m_dim * (k_dim if isinstance(k_dim, int) else 256)
        _, extent, tile = low.grid((n_dim,), rows_work)
        tile = -(-max(tile, COLUMN_TILE) // COLUMN_TILE) * COLUMN_TILE
        c0, c1 = low.partition_bounds(b, N, tile)
        block(b, [], (I64(0), M), (c0, c1))
        return extent, tile
    _, extent, tile = low.grid((m_dim,), work)
    lo, hi = low.partition_bounds(b, M, tile)
    block(b, [], (lo, hi), (I64(0), N))
    return extent, tile
