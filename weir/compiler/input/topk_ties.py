"""The order a sorted `topk_v2` gives equal elements, as linalg on the k sorted results.

Why: IREE defines topk_v2 by its algorithm. Each element is inserted into the k outputs (it
passes an output it is better than, or an equal one with a larger index), then, with
`is_sorted`, a bubble sort of the k outputs swaps neighbours unless the first is better, so
neighbours that are equal are swapped. The insertion leaves the stable sort by (value, index)
cut to k (lower_linalg_ext builds that sort); the bubble sort only moves elements inside a run of
equal values, and how depends only on where the run lies. For a run at [s, e) of the k outputs,
r = e - s long: each of the first F = k - e + 1 passes rotates the whole run left by one, the
later passes rotate its first r - 1, r - 2, ..., 2 elements; with a_q = run[(q + F) mod r], the
run ends as a_{r-2}, ..., a_1, a_0, a_{r-1}. The comparator is taken to be a strict weak order
(no NaN among the values) and the outputs' initial values to be in order (a fill), as IREE's
insertion needs for its results to be the best k in order.

Three small generics over the k results: where each run starts, each position's run bounds (a
reduction over the k positions), and the gather of each position's element."""

from __future__ import annotations

from weir.compiler.input.linalg_builders import (
    empty,
    generic,
    inline,
    projection,
    size,
    tensor_type,
)
from weir.dialects.iree_linalg_ext import I1
from weir.ir.upstream import (
    arith,
    BlockArgument,
    Builder,
    IndexType,
    IntegerAttr,
    IntegerType,
    linalg,
    Region,
    SSAValue,
    tensor,
)

I64 = IntegerType(64)


def order_ties(b: Builder, region: Region, results: list[SSAValue], d: int) -> list[SSAValue]:
    """`results` (the k values, then the indices if any, sorted along `d`) with the elements of
    each run of equal values where IREE's bubble sort leaves them."""
    values = results[0]
    rank = len(tensor_type(values).get_shape())
    ident = projection(rank, range(rank))
    dims = [(values, i) for i in range(rank)]

    def at(bb: Builder, position: SSAValue) -> list[SSAValue]:
        return [position if i == d else bb.insert(linalg.IndexOp(i)).result
                for i in range(rank)]

    def starts(bb: Builder, args: tuple[BlockArgument, ...]) -> None:
        p = bb.insert(linalg.IndexOp(d)).result
        zero, one = _index(bb, 0), _index(bb, 1)
        first = bb.insert(arith.CmpiOp(p, zero, "eq")).result
        before = bb.insert(arith.SelectOp(first, zero, bb.insert(arith.SubiOp(p, one)))).result
        prev = bb.insert(tensor.ExtractOp(values, at(bb, before), args[0].type)).result
        unequal = bb.insert(arith.OrIOp(inline(bb, region, [prev, args[0]]),
                                        inline(bb, region, [args[0], prev]))).result
        bb.insert(linalg.YieldOp(bb.insert(arith.OrIOp(first, unequal)).result))
    start = generic(b, [values], [empty(b, I1, dims)], [ident, ident], (), rank,
                    starts).results[0]

    k = size(b, values, d)
    count = b.insert(arith.ConstantOp(IntegerAttr(k, I64))).result if isinstance(k, int) \
        else b.insert(arith.IndexCastOp(k, I64)).result
    zeros = _fill(b, _i64(b, 0), empty(b, I64, dims))
    ks = _fill(b, count, empty(b, I64, dims))

    def bounds(bb: Builder, args: tuple[BlockArgument, ...]) -> None:
        starts_here, s, e = args
        p = _position(bb, d)
        j = _position(bb, rank)
        lower = bb.insert(arith.AndIOp(starts_here, bb.insert(arith.CmpiOp(j, p, "sle")))).result
        upper = bb.insert(arith.AndIOp(starts_here, bb.insert(arith.CmpiOp(j, p, "sgt")))).result
        bb.insert(linalg.YieldOp(
            bb.insert(arith.SelectOp(lower, bb.insert(arith.MaxSIOp(s, j)), s)).result,
            bb.insert(arith.SelectOp(upper, bb.insert(arith.MinSIOp(e, j)), e)).result))
    line = projection(rank + 1, [rank if i == d else i for i in range(rank)])
    outer = projection(rank + 1, range(rank))
    s, e = generic(b, [start], [zeros, ks], [line, outer, outer], (rank,), rank + 1,
                   bounds).results

    def gather(bb: Builder, args: tuple[BlockArgument, ...]) -> None:
        s, e, kk = args[:3]
        one, two = _i64(bb, 1), _i64(bb, 2)
        r = _sub(bb, e, s)
        turns = bb.insert(arith.AddiOp(_sub(bb, kk, e), one)).result  # F
        q = _sub(bb, _position(bb, d), s)
        last = bb.insert(arith.CmpiOp(q, _sub(bb, r, one), "eq")).result
        rotated = bb.insert(arith.RemSIOp(
            bb.insert(arith.AddiOp(_sub(bb, r, one), turns)), r)).result
        reversed_ = bb.insert(arith.RemSIOp(
            bb.insert(arith.AddiOp(_sub(bb, _sub(bb, r, two), q), turns)), r)).result
        source = bb.insert(arith.AddiOp(s, bb.insert(arith.SelectOp(last, rotated, reversed_))))
        where = at(bb, bb.insert(arith.IndexCastOp(source, IndexType())).result)
        bb.insert(linalg.YieldOp(*(
            bb.insert(tensor.ExtractOp(v, where, tensor_type(v).element_type)).result
            for v in results)))
    outs = [empty(b, tensor_type(v).element_type, dims) for v in results]
    return list(generic(b, [s, e, ks], outs, [ident] * (3 + len(outs)), (), rank,
                        gather).results)


def _index(b: Builder, v: int) -> SSAValue:
    return b.insert(arith.ConstantOp(IntegerAttr(v, IndexType()))).result


def _i64(b: Builder, v: int) -> SSAValue:
    return b.insert(arith.ConstantOp(IntegerAttr(v, I64))).result


def _position(b: Builder, dim: int) -> SSAValue:
    """linalg.index `dim` as i64."""
    return b.insert(arith.IndexCastOp(b.insert(linalg.IndexOp(dim)).result, I64)).result


def _sub(b: Builder, x: SSAValue, y: SSAValue) -> SSAValue:
    return b.insert(arith.SubiOp(x, y)).result


def _fill(b: Builder, value: SSAValue, init: SSAValue) -> SSAValue:
    return b.insert(linalg.FillOp((value,), (init,), (init.type,))).results[0]
