"""The kernels of IREE's linalg extension ops on llvm-cpu: `Sort`, `Scan`, `Scatter`, `Gather`.

Each is a root that runs as one workgroup and writes its results' memory: it first copies its
operands there (elementwise producers are computed in that copy, as every root reads them), then
works in place, one line or one batch element at a time in order, so the results are those of the
reference target's whole-array steps:
- sort: a merge sort of each line through scratch memory, an element of the right run taken
  before the left run's only when the body says it may come first and not the other way round
  (stable, as the format defines it); a sort read only up to a prefix selects it in one pass
  instead, its lines split over workgroups (select_prefix.py);
- scan: one pass along each line, reading the previous output back;
- scatter/gather: for each batch element (in order, skipping masked-off ones), the slice's
  elements whose coordinates fall inside the tensor."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import llvmlite.ir as ir

from weir.compiler.targets.llvm_cpu import scalars as s
from weir.compiler.targets.llvm_cpu.loops import I64, for_nest, for_range, smin, while_loop
from weir.compiler.targets.llvm_cpu.select_prefix import select_prefix
from weir.format import kernel_description as k

if TYPE_CHECKING:
    from weir.compiler.targets.llvm_cpu.element_eval import Memory
    from weir.compiler.targets.llvm_cpu.lower_entry import EntryLowering

EXT_OPS = (k.Sort, k.Scan, k.Scatter, k.Gather, k.MapLoad, k.MapStore)


def result_count(op: k.KernelOp) -> int:
    if isinstance(op, k.Sort):
        return len(op.operands)
    return 2 if isinstance(op, k.Scan) else 1


def _body(low: EntryLowering, b: ir.IRBuilder, body: tuple[k.ScalarOp, ...],
          yields: tuple[int, ...], args: list[ir.Value], arg_dtypes: list[str]) -> ir.Value:
    """The body's one yield at `args`."""
    return _yields(low, b, body, yields, args, arg_dtypes)[0]


def _yields(low: EntryLowering, b: ir.IRBuilder, body: tuple[k.ScalarOp, ...],
            yields: tuple[int, ...], args: list[ir.Value], arg_dtypes: list[str]
            ) -> list[ir.Value]:
    """Every yield of the body at `args`."""
    values: dict[int, ir.Value] = dict(enumerate(args))
    dtypes = list(arg_dtypes) + [op.dtype for op in body]
    base = len(args)
    for j, op in enumerate(body):
        if op.op == "push":
            values[base + j] = s.push_scalar(b, low.push[int(op.attr)], op.dtype)  # type: ignore[arg-type]
            continue
        values[base + j] = s.emit_scalar(b, op.op, [values[a] for a in op.args], op.dtype,
                                         op.attr, [dtypes[a] for a in op.args],
                                         native_ldexp=low.cpu.native_ldexp)
    return [values[y] for y in yields]


def _memories(low: EntryLowering, b: ir.IRBuilder, n: int) -> list[Memory]:
    """The results' memory: the bindings they are stored to, scratch for the others."""
    for i in range(result_count(low.kv.ops[n])):
        if (n, i) not in low.memory:
            low.memory[(n, i)] = low.scratch_memory(b, low.kv.dtype[(n, i)], low.dims((n, i)))
    return [low.memory[(n, i)] for i in range(result_count(low.kv.ops[n]))]


def _copy(low: EntryLowering, b: ir.IRBuilder, source: int, mem: Memory) -> None:
    from weir.compiler.targets.llvm_cpu.element_eval import Body
    ref = low.kv.ref(source)
    if low.memory.get(ref) is mem:
        return

    def copy(bb: ir.IRBuilder, idx: list[ir.Value]) -> None:
        s.store_element(bb, low.element(bb, ref, idx, Body()), mem.address(bb, idx), mem.dtype)
    for_nest(b, [(I64(0), d) for d in low.dims(ref)], copy, "copy")


def _lines(b: ir.IRBuilder, dims: list[ir.Value], dim: int,
           body: Callable[[ir.IRBuilder, list[ir.Value]], None]) -> None:
    """Calls `body(index with the line's position left out)` for every line along `dim`."""
    for_nest(b, [(I64(0), d) for i, d in enumerate(dims) if i != dim], body, "line")


def _at(idx: list[ir.Value], dim: int, i: ir.Value) -> list[ir.Value]:
    return idx[:dim] + [i] + idx[dim:]


def lower_ext(low: EntryLowering, b: ir.IRBuilder, n: int,
              partitioned: bool) -> tuple[k.Dim, int]:
    """Emits root `n`; returns its grid (extent, tile): one workgroup, but for a sort that
    selects a prefix and is the entry's only loop nest (`partitioned`), whose lines are split."""
    op = low.kv.ops[n]
    if isinstance(op, k.Sort):
        return _sort(low, b, n, op, partitioned)
    if isinstance(op, k.Scan):
        _scan(low, b, n, op)
    elif isinstance(op, k.MapLoad | k.MapStore):
        _map(low, b, n, op)
    else:
        assert isinstance(op, k.Scatter | k.Gather)
        _indexed(low, b, n, op)
    return 1, 1


def _sort(low: EntryLowering, b: ir.IRBuilder, n: int, op: k.Sort,
          partitioned: bool) -> tuple[k.Dim, int]:
    """A bottom-up merge sort of each line: runs of 1, 2, 4, ... elements merged pairwise into
    scratch and copied back, the left run's element taken unless the right one must come
    first, which keeps equal elements in order (or, when only a prefix is read, a selection:
    select_prefix.py)."""
    mems = _memories(low, b, n)
    d = op.dimension
    dtypes = [m.dtype for m in mems]
    arg_dtypes = [t for t in dtypes for _ in range(2)]

    def must_precede(bb: ir.IRBuilder, x: list[ir.Value], y: list[ir.Value]) -> ir.Value:
        def may(a: list[ir.Value], c: list[ir.Value]) -> ir.Value:
            return _body(low, bb, op.body, op.yields, [v for p in zip(a, c) for v in p],
                         arg_dtypes)
        return bb.and_(may(x, y), bb.not_(may(y, x)))

    line = low.kv.shape[(n, 0)][d]
    if op.prefix is not None and isinstance(line, int) and op.prefix < line:
        return select_prefix(low, b, n, op, op.prefix, mems, must_precede, partitioned)
    for v, mem in zip(op.operands, mems):
        _copy(low, b, v, mem)
    dims = mems[0].dims
    size = dims[d]
    scratch = [low.scratch_memory(b, m.dtype, [size]) for m in mems]
    width_p, lo_p, i_p, j_p, o_p = (low.alloca(I64) for _ in range(5))
    take_p = low.alloca(ir.IntType(1))

    def sort_line(bb: ir.IRBuilder, idx: list[ir.Value]) -> None:
        def at(m: Memory, i: ir.Value, x: ir.IRBuilder) -> ir.Value:
            return m.address(x, _at(idx, d, i))

        def merge_pass(bw: ir.IRBuilder) -> None:
            width = bw.load(width_p)
            bw.store(I64(0), lo_p)

            def merge(bm: ir.IRBuilder) -> None:
                lo = bm.load(lo_p)
                mid = smin(bm, bm.add(lo, width), size)
                hi = smin(bm, bm.add(mid, width), size)
                bm.store(lo, i_p)
                bm.store(mid, j_p)
                bm.store(lo, o_p)

                def step(bs: ir.IRBuilder) -> None:
                    i, j, o = bs.load(i_p), bs.load(j_p), bs.load(o_p)
                    right = bs.icmp_signed("<", j, hi)
                    left = bs.icmp_signed("<", i, mid)
                    with bs.if_else(bs.and_(right, left)) as (both, one):
                        with both:
                            x = [s.load_element(bs, at(m, j, bs), t) for m, t in zip(mems, dtypes)]
                            y = [s.load_element(bs, at(m, i, bs), t) for m, t in zip(mems, dtypes)]
                            bs.store(must_precede(bs, x, y), take_p)
                        with one:
                            bs.store(right, take_p)
                    with bs.if_else(bs.load(take_p)) as (from_right, from_left):
                        with from_right:
                            for m, t, sc in zip(mems, dtypes, scratch):
                                s.store_element(bs, s.load_element(bs, at(m, j, bs), t),
                                                sc.address(bs, [o]), t)
                            bs.store(bs.add(j, I64(1)), j_p)
                        with from_left:
                            for m, t, sc in zip(mems, dtypes, scratch):
                                s.store_element(bs, s.load_element(bs, at(m, i, bs), t),
                                                sc.address(bs, [o]), t)
                            bs.store(bs.add(i, I64(1)), i_p)
                    bs.store(bs.add(o, I64(1)), o_p)
                while_loop(bm, lambda x: x.icmp_signed("<", x.load(o_p), hi), step, "merge")
                bm.store(hi, lo_p)
            while_loop(bw, lambda x: x.icmp_signed("<", x.load(lo_p), size), merge, "runs")

            def back(bc: ir.IRBuilder, i: ir.Value) -> None:
                for m, t, sc in zip(mems, dtypes, scratch):
                    s.store_element(bc, s.load_element(bc, sc.address(bc, [i]), t),
                                    at(m, i, bc), t)
            for_range(bw, I64(0), size, back, "back")
            bw.store(bw.shl(width, I64(1)), width_p)
        bb.store(I64(1), width_p)
        while_loop(bb, lambda x: x.icmp_signed("<", x.load(width_p), size), merge_pass, "pass")
    _lines(b, dims, d, sort_line)
    return 1, 1


def _scan(low: EntryLowering, b: ir.IRBuilder, n: int, op: k.Scan) -> None:
    from weir.compiler.targets.llvm_cpu.element_eval import Body
    out, acc = _memories(low, b, n)
    kv = low.kv
    x_ref, acc_ref = kv.ref(op.input), kv.ref(op.accumulator)
    x_dtype = kv.dtype[x_ref]
    d = op.dimension
    dims = out.dims
    size = dims[d]

    def line(bb: ir.IRBuilder, idx: list[ir.Value]) -> None:
        initial = low.element(bb, acc_ref, idx, Body())
        with bb.if_else(bb.icmp_signed(">", size, I64(0))) as (nonempty, empty):
            with nonempty:
                first = low.element(bb, x_ref, _at(idx, d, I64(0)), Body()) if op.inclusive \
                    else initial
                s.store_element(bb, first, out.address(bb, _at(idx, d, I64(0))), out.dtype)

                def step(bi: ir.IRBuilder, i: ir.Value) -> None:
                    prev = bi.sub(i, I64(1))
                    x = low.element(bi, x_ref, _at(idx, d, i if op.inclusive else prev), Body())
                    running = s.load_element(bi, out.address(bi, _at(idx, d, prev)), out.dtype)
                    value = _body(low, bi, op.body, op.yields, [x, running], [x_dtype, out.dtype])
                    s.store_element(bi, value, out.address(bi, _at(idx, d, i)), out.dtype)
                for_range(bb, I64(1), size, step, "scan")
                last = s.load_element(bb, out.address(bb, _at(idx, d, bb.sub(size, I64(1)))),
                                      out.dtype)
                s.store_element(bb, last, acc.address(bb, idx), acc.dtype)
            with empty:
                s.store_element(bb, initial, acc.address(bb, idx), acc.dtype)
    _lines(b, dims, d, line)


def _indexed(low: EntryLowering, b: ir.IRBuilder, n: int, op: k.Scatter | k.Gather) -> None:
    from weir.compiler.targets.llvm_cpu.element_eval import Body
    kv = low.kv
    (mem,) = _memories(low, b, n)
    scatter = isinstance(op, k.Scatter)
    _copy(low, b, op.original if isinstance(op, k.Scatter) else op.init, mem)
    data = mem if scatter else None
    data_ref = kv.ref(op.source) if isinstance(op, k.Gather) else None
    data_dims = mem.dims if scatter else low.dims(data_ref)  # type: ignore[arg-type]
    slices_ref = kv.ref(op.updates) if isinstance(op, k.Scatter) else (n, 0)
    slice_dims = (low.dims(slices_ref) if scatter else mem.dims)[op.batch_rank:]
    idx_ref = kv.ref(op.indices)
    idx_dtype = kv.dtype[idx_ref]
    idx_rank = len(kv.shape[idx_ref])
    batch_dims = low.dims(idx_ref)[:op.batch_rank]
    rank, sr = len(data_dims), len(slice_dims)

    def batch_body(bb: ir.IRBuilder, batch: list[ir.Value]) -> None:
        def place() -> None:
            start: list[ir.Value] = [I64(0)] * rank
            for j, dim in enumerate(op.dimension_map):
                at = batch + ([I64(j)] if idx_rank > op.batch_rank else [])
                coord = low.element(bb, idx_ref, at, Body())
                start[dim] = low.convert(bb, coord, idx_dtype, "i64")

            def element(bi: ir.IRBuilder, sidx: list[ir.Value]) -> None:
                target = [bi.add(start[dd], sidx[dd - (rank - sr)]) if dd >= rank - sr
                          else start[dd] for dd in range(rank)]
                inside: ir.Value = ir.Constant(ir.IntType(1), 1)
                for t, extent in zip(target, data_dims):
                    inside = bi.and_(inside, bi.and_(bi.icmp_signed(">=", t, I64(0)),
                                                     bi.icmp_signed("<", t, extent)))
                with bi.if_then(inside):
                    if isinstance(op, k.Scatter):
                        assert data is not None
                        update = low.element(bi, slices_ref, batch + sidx, Body())
                        ptr = data.address(bi, target)
                        current = s.load_element(bi, ptr, data.dtype)
                        value = _body(low, bi, op.body, op.yields, [update, current],
                                      [kv.dtype[slices_ref], data.dtype])
                        s.store_element(bi, value, ptr, data.dtype)
                    else:
                        value = low.element(bi, data_ref, target, Body())  # type: ignore[arg-type]
                        s.store_element(bi, value, mem.address(bi, batch + sidx), mem.dtype)
            for_nest(bb, [(I64(0), x) for x in slice_dims], element, "slice")
        if op.mask >= 0:
            flag = low.element(bb, kv.ref(op.mask), batch, Body())
            with bb.if_then(flag):
                place()
        else:
            place()
    for_nest(b, [(I64(0), x) for x in batch_dims], batch_body, "batch")


def _map(low: EntryLowering, b: ir.IRBuilder, n: int, op: k.MapLoad | k.MapStore) -> None:
    """map_load: per output element, the source element the body names or its padding;
    map_store: the init copied, then per input element a store where the body says."""
    from weir.compiler.targets.llvm_cpu.element_eval import Body
    kv = low.kv
    (mem,) = _memories(low, b, n)
    load = isinstance(op, k.MapLoad)
    data = kv.ref(op.source if isinstance(op, k.MapLoad) else op.input)
    if not load:
        _copy(low, b, op.init, mem)
    space = mem.dims if load else low.dims(data)
    target = low.dims(data) if load else mem.dims

    def element(bb: ir.IRBuilder, idx: list[ir.Value]) -> None:
        *coords, last = _yields(low, bb, op.body, op.yields, list(idx), ["index"] * len(idx))
        inside: ir.Value = ir.Constant(ir.IntType(1), 1)
        for c, extent in zip(coords, target):
            inside = bb.and_(inside, bb.and_(bb.icmp_signed(">=", c, I64(0)),
                                             bb.icmp_signed("<", c, extent)))
        if load:
            with bb.if_else(inside) as (hit, miss):
                with hit:
                    s.store_element(bb, low.element(bb, data, coords, Body()),
                                    mem.address(bb, idx), mem.dtype)
                with miss:
                    s.store_element(bb, last, mem.address(bb, idx), mem.dtype)
        else:
            with bb.if_then(bb.and_(inside, last)):
                s.store_element(bb, low.element(bb, data, idx, Body()),
                                mem.address(bb, coords), mem.dtype)
    for_nest(b, [(I64(0), x) for x in space], element, "map")
