"""The kernels of IREE's linalg extension ops on llvm-cpu: `Sort`, `Scan`, `Scatter`, `Gather`.

Each is a root that runs as one workgroup and writes its results' memory: it first copies its
operands there (elementwise producers are computed in that copy, as every root reads them), then
works in place, one line or one batch element at a time in order, so the results are those of the
reference target's whole-array steps:
- sort: an insertion sort of each line, an element moving before its neighbour only while the body
  says it may come first and not the other way round (stable, as the format defines it);
- scan: one pass along each line, reading the previous output back;
- scatter/gather: for each batch element (in order, skipping masked-off ones), the slice's
  elements whose coordinates fall inside the tensor."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import llvmlite.ir as ir

from weir.compiler.targets.llvm_cpu import scalars as s
from weir.compiler.targets.llvm_cpu.loops import I64, for_nest, for_range
from weir.format import reference_kernel as k

if TYPE_CHECKING:
    from weir.compiler.targets.llvm_cpu.lower_entry import EntryLowering, Memory

EXT_OPS = (k.Sort, k.Scan, k.Scatter, k.Gather)


def result_count(op: k.KernelOp) -> int:
    if isinstance(op, k.Sort):
        return len(op.operands)
    return 2 if isinstance(op, k.Scan) else 1


def _body(low: EntryLowering, b: ir.IRBuilder, body: tuple[k.ScalarOp, ...],
          yields: tuple[int, ...], args: list[ir.Value], arg_dtypes: list[str]) -> ir.Value:
    """The body's one yield at `args`."""
    values: dict[int, ir.Value] = dict(enumerate(args))
    dtypes = list(arg_dtypes) + [op.dtype for op in body]
    base = len(args)
    for j, op in enumerate(body):
        if op.op == "push":
            values[base + j] = s.push_scalar(b, low.push[int(op.attr)], op.dtype)  # type: ignore[arg-type]
            continue
        values[base + j] = s.emit_scalar(b, op.op, [values[a] for a in op.args], op.dtype,
                                         op.attr, [dtypes[a] for a in op.args])
    return values[yields[0]]


def _memories(low: EntryLowering, b: ir.IRBuilder, n: int) -> list[Memory]:
    """The results' memory: the bindings they are stored to, scratch for the others."""
    for i in range(result_count(low.kv.ops[n])):
        if (n, i) not in low.memory:
            low.memory[(n, i)] = low.scratch_memory(b, low.kv.dtype[(n, i)], low.dims((n, i)))
    return [low.memory[(n, i)] for i in range(result_count(low.kv.ops[n]))]


def _copy(low: EntryLowering, b: ir.IRBuilder, source: int, mem: Memory) -> None:
    from weir.compiler.targets.llvm_cpu.lower_entry import Body
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


def lower_ext(low: EntryLowering, b: ir.IRBuilder, n: int) -> tuple[k.Dim, int]:
    op = low.kv.ops[n]
    if isinstance(op, k.Sort):
        _sort(low, b, n, op)
    elif isinstance(op, k.Scan):
        _scan(low, b, n, op)
    else:
        assert isinstance(op, k.Scatter | k.Gather)
        _indexed(low, b, n, op)
    return 1, 1


def _sort(low: EntryLowering, b: ir.IRBuilder, n: int, op: k.Sort) -> None:
    mems = _memories(low, b, n)
    for v, mem in zip(op.operands, mems):
        _copy(low, b, v, mem)
    dims = mems[0].dims
    d = op.dimension
    dtypes = [m.dtype for m in mems]
    arg_dtypes = [t for t in dtypes for _ in range(2)]

    def may_precede(bb: ir.IRBuilder, x: list[ir.Value], y: list[ir.Value]) -> ir.Value:
        args = [v for pair in zip(x, y) for v in pair]
        return _body(low, bb, op.body, op.yields, args, arg_dtypes)

    def line(bb: ir.IRBuilder, idx: list[ir.Value]) -> None:
        def insert(bi: ir.IRBuilder, i: ir.Value) -> None:
            # while j > 0 and x[j] must go before x[j-1]: swap them, j -= 1.
            pre = bi.block
            header = bi.append_basic_block("sift.header")
            test = bi.append_basic_block("sift.test")
            swap = bi.append_basic_block("sift.swap")
            done = bi.append_basic_block("sift.exit")
            bi.branch(header)
            bi.position_at_end(header)
            j = bi.phi(I64, "j")
            j.add_incoming(i, pre)
            bi.cbranch(bi.icmp_signed(">", j, I64(0)), test, done)
            bi.position_at_end(test)
            prev = bi.sub(j, I64(1))
            here_ptrs = [m.address(bi, _at(idx, d, j)) for m in mems]
            prev_ptrs = [m.address(bi, _at(idx, d, prev)) for m in mems]
            here = [s.load_element(bi, p, t) for p, t in zip(here_ptrs, dtypes)]
            before = [s.load_element(bi, p, t) for p, t in zip(prev_ptrs, dtypes)]
            first = bi.and_(may_precede(bi, here, before),
                            bi.not_(may_precede(bi, before, here)))
            bi.cbranch(first, swap, done)
            bi.position_at_end(swap)
            for p, q, x, y, t in zip(here_ptrs, prev_ptrs, here, before, dtypes):
                s.store_element(bi, y, p, t)
                s.store_element(bi, x, q, t)
            j.add_incoming(prev, swap)
            bi.branch(header)
            bi.position_at_end(done)
        for_range(bb, I64(1), dims[d], insert, "ins")
    _lines(b, dims, d, line)


def _scan(low: EntryLowering, b: ir.IRBuilder, n: int, op: k.Scan) -> None:
    from weir.compiler.targets.llvm_cpu.lower_entry import Body
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
    from weir.compiler.targets.llvm_cpu.lower_entry import Body
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
