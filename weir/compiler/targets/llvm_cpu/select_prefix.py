"""A sort whose readers stop at its first `prefix` elements (`Sort.prefix`) on llvm-cpu: one pass
over each line keeping the best `prefix` in order, instead of sorting the line.

Why: top-k over a vocabulary (k = 50 of 32000) is most of a sampling step, and after the first
few hundred elements almost none enters the kept set. So the line is read in blocks of `BLOCK`
elements: once `prefix` are kept, a block is only looked at element by element when one of its
elements must precede the last kept one (a branch-free test over the block, which LLVM
vectorises); otherwise it is skipped whole. The operands are read where they are (an elementwise
producer, such as the positions a top-k sorts alongside, computed on the way) rather than copied
into the results first, and the lines are split over workgroups when the sort is the entry's
only loop nest. Only the prefix of each result line is written: nothing reads the rest."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import llvmlite.ir as ir

from weir.compiler.targets.llvm_cpu import scalars as s
from weir.compiler.targets.llvm_cpu.loops import I64, for_nest, for_range, while_loop
from weir.format import kernel_description as k

if TYPE_CHECKING:
    from weir.compiler.targets.llvm_cpu.element_eval import Memory
    from weir.compiler.targets.llvm_cpu.lower_entry import EntryLowering

# Elements tested at once before any is looked at alone: two AVX2 vectors of f32.
BLOCK = 16
MustPrecede = Callable[[ir.IRBuilder, list[ir.Value], list[ir.Value]], ir.Value]


def select_prefix(low: EntryLowering, b: ir.IRBuilder, n: int, op: k.Sort, prefix: int,
                  mems: list[Memory], must_precede: MustPrecede,
                  partitioned: bool) -> tuple[k.Dim, int]:
    """The first `prefix` elements of each line's stable sort into `mems`: the best so far are
    kept in order in scratch; an element enters only if it must precede the last kept one (or
    fewer are kept), and goes after every kept element it need not precede, so equal elements
    stay in line order as the stable sort leaves them. Returns the grid (extent, tile)."""
    from weir.compiler.targets.llvm_cpu.element_eval import Body
    refs = [low.kv.ref(v) for v in op.operands]
    dtypes = [m.dtype for m in mems]
    d = op.dimension
    shape = low.kv.shape[(n, 0)]
    size = shape[d]
    assert isinstance(size, int)
    kept = [low.scratch_memory(b, t, [I64(prefix)]) for t in dtypes]
    count_p, lo_p, hi_p = low.alloca(I64), low.alloca(I64), low.alloca(I64)
    enters_p, mask_p = low.alloca(ir.IntType(1)), low.alloca(I64)
    cttz = low.module.globals.get("llvm.cttz.i64") or ir.Function(
        low.module, ir.FunctionType(I64, [I64, ir.IntType(1)]), "llvm.cttz.i64")
    others = [i for i in range(len(shape)) if i != d]
    bounds = [(I64(0), low.dim(shape[i])) for i in others]
    extent: k.Dim = 1
    tile = 1
    if partitioned and others:
        p, extent, tile = low.grid(tuple(shape[i] for i in others), size)
        bounds[p] = low.partition_bounds(b, low.dim(extent), tile)

    def line(bb: ir.IRBuilder, outer: list[ir.Value]) -> None:
        def read(bx: ir.IRBuilder, i: ir.Value) -> list[ir.Value]:
            idx = outer[:d] + [i] + outer[d:]
            ctx = Body()
            return [low.element(bx, r, idx, ctx) for r in refs]

        def kept_at(bk: ir.IRBuilder, j: ir.Value) -> list[ir.Value]:
            return [s.load_element(bk, km.address(bk, [j]), t) for km, t in zip(kept, dtypes)]

        def element(be: ir.IRBuilder, i: ir.Value) -> None:
            x = read(be, i)
            count = be.load(count_p)
            full = be.icmp_signed("==", count, I64(prefix))
            # Full: x enters if it must precede the last kept one, which it then replaces.
            be.store(ir.Constant(ir.IntType(1), 1), enters_p)
            with be.if_then(full):
                be.store(must_precede(be, x, kept_at(be, I64(prefix - 1))), enters_p)
            with be.if_then(be.load(enters_p)):
                end = be.select(full, I64(prefix - 1), count)
                # Its place: after every kept element it need not precede (binary search,
                # the kept ones being in order), the rest moved down one.
                be.store(I64(0), lo_p)
                be.store(end, hi_p)

                def halve(bs: ir.IRBuilder) -> None:
                    lo, hi = bs.load(lo_p), bs.load(hi_p)
                    mid = bs.lshr(bs.add(lo, hi), I64(1))
                    before = must_precede(bs, x, kept_at(bs, mid))
                    bs.store(bs.select(before, lo, bs.add(mid, I64(1))), lo_p)
                    bs.store(bs.select(before, mid, hi), hi_p)
                while_loop(be, lambda bw: bw.icmp_signed("<", bw.load(lo_p), bw.load(hi_p)),
                           halve, "search")
                j = be.load(lo_p)

                def move(bm: ir.IRBuilder, u: ir.Value) -> None:
                    t = bm.sub(bm.sub(end, I64(1)), u)
                    for km, dt, v in zip(kept, dtypes, kept_at(bm, t)):
                        s.store_element(bm, v, km.address(bm, [bm.add(t, I64(1))]), dt)
                for_range(be, I64(0), be.sub(end, j), move, "move")
                for km, dt, v in zip(kept, dtypes, x):
                    s.store_element(be, v, km.address(be, [j]), dt)
                be.store(be.select(full, count, be.add(count, I64(1))), count_p)

        def block(bk: ir.IRBuilder, blk: ir.Value) -> None:
            base = bk.add(I64(prefix), bk.mul(blk, I64(BLOCK)))
            last = kept_at(bk, I64(prefix - 1))

            def hits(bh: ir.IRBuilder) -> list[ir.Value]:
                return [must_precede(bh, read(bh, bh.add(base, I64(lane))), last)
                        for lane in range(BLOCK)]
            found: ir.Value = ir.Constant(ir.IntType(1), 0)
            for hit in hits(bk):
                found = bk.or_(found, hit)
            with bk.if_then(found):
                # Only the lanes that beat the block's last kept element can beat a later one.
                mask: ir.Value = I64(0)
                for lane, hit in enumerate(hits(bk)):
                    mask = bk.or_(mask, bk.shl(bk.zext(hit, I64), I64(lane)))
                bk.store(mask, mask_p)

                def lane(bl: ir.IRBuilder) -> None:
                    left = bl.load(mask_p)
                    first = bl.call(cttz, [left, ir.Constant(ir.IntType(1), 1)])
                    element(bl, bl.add(base, first))
                    bl.store(bl.and_(left, bl.sub(left, I64(1))), mask_p)
                while_loop(bk, lambda bw: bw.icmp_unsigned("!=", bw.load(mask_p), I64(0)),
                           lane, "lane")

        # The first `prefix` elements all enter; from then on `prefix` are kept.
        bb.store(I64(0), count_p)
        for_range(bb, I64(0), I64(prefix), element, "first")
        blocks = (size - prefix) // BLOCK
        for_range(bb, I64(0), I64(blocks), block, "block")
        for_range(bb, I64(prefix + blocks * BLOCK), I64(size), element, "tail")

        def back(bc: ir.IRBuilder, i: ir.Value) -> None:
            idx = outer[:d] + [i] + outer[d:]
            for m, km, t in zip(mems, kept, dtypes):
                s.store_element(bc, s.load_element(bc, km.address(bc, [i]), t),
                                m.address(bc, idx), t)
        for_range(bb, I64(0), I64(prefix), back, "back")
    for_nest(b, bounds, line, "line")
    return extent, tile

