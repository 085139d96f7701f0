"""attention and online_attention as linalg (part of lower-linalg-ext).

The indexing maps name the roles of the loops: Q (batch, m, k1), K (batch, k2, k1), V (batch,
k2, n), the output (batch, m, n), an optional mask (batch, m, k2). Both ops start from the
scores s = scale * Q.K^T over k1, modified by the op's region (a softcap, say, which sees
s * log2(e) and yields a base-2 exponent, as in IREE's base-2 softmax); an i1 mask sets excluded
scores to -inf, a float mask is added. They are kept in (batch, m, k2) order, then:
- attention: softmax over k2 (max, sum of exp(s - max), weights) and the product with V;
- online_attention, which continues a softmax from its outputs' running (acc, max, sum):
  max' = max(max, rowmax(s)), c = exp(max - max'), sum' = c * sum + rowsum(exp(s - max')),
  acc' = c * acc + exp(s - max').V; the caller divides acc by sum at the end.
Each step is a generic the targets compile already; elementwise steps fuse into their readers."""

from __future__ import annotations

import math as math_
from collections.abc import Sequence
from dataclasses import dataclass

from weir.compiler.input.linalg_builders import cast, empty, filled, generic, inline, \
    projection, tensor_type
from weir.dialects import iree_linalg_ext as ext
from weir.ir.diagnostics import error_at, locate_created
from weir.ir.upstream import (
    AffineDimExpr,
    AffineMap,
    AffineMapAttr,
    arith,
    Attribute,
    BlockArgument,
    Builder,
    ConstantOp,
    FloatAttr,
    InsertPoint,
    linalg,
    math,
    Operation,
    SSAValue,
)


@dataclass
class _Scores:
    """The scaled, masked scores and what the later steps need to index them."""

    scores: SSAValue
    element: Attribute
    dims: list[list[int]]  # per operand, the loops its dimensions are indexed by
    rows: list[int]  # batch + m
    scores_dims: list[int]  # batch + m + k2
    k2: list[int]
    n: list[int]
    where: dict[int, tuple[SSAValue, int]]  # loop -> (a value, its dimension of that size)

    def sub(self, domain: list[int], of: Sequence[int]) -> AffineMapAttr:
        return projection(len(domain), [domain.index(x) for x in of])


def _scores(b: Builder, op: ext.ExtOp, outputs: int, element: Attribute) -> _Scores:
    if len(op.region.block.args) != 1:
        raise error_at(op, f"'{op.name}' with a region of {len(op.region.block.args)} "
                           "arguments is not supported (only the score's)")
    assert op.indexing_maps is not None
    maps: list[AffineMap] = [m.data for m in op.indexing_maps.data]  # type: ignore[attr-defined]
    dims: list[list[int]] = []
    for m in maps:
        if not all(isinstance(e, AffineDimExpr) for e in m.results):
            raise error_at(op, f"attention indexing map {m} is not a projection")
        dims.append([e.position for e in m.results])  # type: ignore[attr-defined]
    out_dims = dims[len(op.inputs)]
    q, k, v, o = (set(x) for x in (dims[0], dims[1], dims[2], out_dims))
    batch = sorted(q & k & v & o)
    m_dims, k1 = sorted((q & o) - k), sorted((q & k) - v - o)
    k2, n_dims = sorted((k & v) - q), sorted((v & o) - q)
    if not m_dims or not k1 or not k2 or not n_dims or \
            len(batch) + len(m_dims) + len(k1) + len(k2) + len(n_dims) != maps[0].num_dims:
        raise error_at(op, "attention indexing maps do not describe Q (m, k1), K (k2, k1), "
                           "V (k2, n) and the output (m, n)")
    query, key, _, scale = op.inputs[:4]
    mask = op.inputs[4] if len(op.inputs) == 5 else None
    where: dict[int, tuple[SSAValue, int]] = {}
    for value, ds in zip([*op.inputs, *op.outputs], dims):
        for axis, dim in enumerate(ds):
            where.setdefault(dim, (value, axis))
    rows = batch + m_dims
    scores_dims = rows + k2
    s = _Scores(query, element, dims, rows, scores_dims, k2, n_dims, where)
    domain = scores_dims + k1
    zero = filled(b, element, [where[x] for x in scores_dims], 0.0)

    def dot(bb: Builder, args: tuple[BlockArgument, ...]) -> None:
        qv, kv, acc = args
        product = bb.insert(arith.MulfOp(cast(bb, qv, element), cast(bb, kv, element))).result
        bb.insert(linalg.YieldOp(bb.insert(arith.AddfOp(acc, product)).result))
    raw = generic(b, [query, key], [zero],
                  [s.sub(domain, dims[0]), s.sub(domain, dims[1]), s.sub(domain, scores_dims)],
                  [domain.index(x) for x in k1], len(domain), dot).results[0]
    rank = len(scores_dims)
    ident = projection(rank, range(rank))

    block = op.region.block
    identity = block.last_op is not None and list(block.last_op.operands) == [block.args[0]]

    def scale_body(bb: Builder, args: tuple[BlockArgument, ...]) -> None:
        x = bb.insert(arith.MulfOp(args[0], cast(bb, scale, element))).result
        if not identity:
            # IREE's softmax is base 2: the region sees the score times log2(e), and what it
            # yields is a base-2 exponent, here turned back into a natural one.
            log2e = bb.insert(ConstantOp(FloatAttr(math_.log2(math_.e), element))).result  # type: ignore[arg-type]
            ln2 = bb.insert(ConstantOp(FloatAttr(math_.log(2.0), element))).result  # type: ignore[arg-type]
            x = inline(bb, op.region, [bb.insert(arith.MulfOp(x, log2e)).result])
            x = bb.insert(arith.MulfOp(x, ln2)).result
        if mask is not None:
            m = args[1]
            if m.type == ext.I1:
                ninf = bb.insert(ConstantOp(FloatAttr(float("-inf"), element))).result  # type: ignore[arg-type]
                x = bb.insert(arith.SelectOp(m, x, ninf)).result
            else:
                x = bb.insert(arith.AddfOp(x, cast(bb, m, element))).result
        bb.insert(linalg.YieldOp(x))
    inputs = [raw] + ([mask] if mask is not None else [])
    maps_in = [ident] + ([s.sub(scores_dims, dims[4])] if mask is not None else [])
    s.scores = generic(b, inputs, [empty(b, element, [where[x] for x in scores_dims])],
                       maps_in + [ident], (), rank, scale_body).results[0]
    return s


def _shifted_exp(bb: Builder, x: SSAValue, top: SSAValue) -> SSAValue:
    return bb.insert(math.ExpOp(bb.insert(arith.SubfOp(x, top)).result)).result


def _row_max(b: Builder, s: _Scores, init: SSAValue) -> SSAValue:
    rank = len(s.scores_dims)
    return generic(b, [s.scores], [init],
                   [projection(rank, range(rank)), s.sub(s.scores_dims, s.rows)],
                   [s.scores_dims.index(x) for x in s.k2], rank,
                   lambda bb, a: bb.insert(linalg.YieldOp(
                       bb.insert(arith.MaximumfOp(a[0], a[1])).result))).results[0]


def _row_sum(b: Builder, s: _Scores, top: SSAValue, init: SSAValue) -> SSAValue:
    """init + the sum over k2 of exp(s - top)."""
    rank = len(s.scores_dims)
    row = s.sub(s.scores_dims, s.rows)

    def body(bb: Builder, a: tuple[BlockArgument, ...]) -> None:
        bb.insert(linalg.YieldOp(bb.insert(arith.AddfOp(_shifted_exp(bb, a[0], a[1]),
                                                        a[2])).result))
    return generic(b, [s.scores, top], [init], [projection(rank, range(rank)), row, row],
                   [s.scores_dims.index(x) for x in s.k2], rank, body).results[0]


def _times_v(b: Builder, s: _Scores, weights: SSAValue, value: SSAValue, init: SSAValue,
             out_dims: list[int]) -> SSAValue:
    """init + the sum over k2 of weights * V, in the layout `out_dims` of init."""
    domain = s.rows + s.n + s.k2

    def body(bb: Builder, args: tuple[BlockArgument, ...]) -> None:
        w, v, acc = args
        product = bb.insert(arith.MulfOp(w, cast(bb, v, s.element))).result
        bb.insert(linalg.YieldOp(bb.insert(arith.AddfOp(acc, product)).result))
    return generic(b, [weights, value], [init],
                   [s.sub(domain, s.scores_dims), s.sub(domain, s.dims[2]),
                    s.sub(domain, out_dims)],
                   [domain.index(x) for x in s.k2], len(domain), body).results[0]


def _replace(op: Operation, values: Sequence[SSAValue]) -> None:
    locate_created(op)  # errors about the replacement point at the op
    for old, new in zip(op.results, values, strict=True):
        old.replace_all_uses_with(new)
    op.detach()
    op.erase()


def lower_attention(op: ext.Attention) -> None:
    b = Builder(InsertPoint.before(op))
    out = op.outputs[0]
    element = tensor_type(out).element_type
    s = _scores(b, op, 1, element)
    rows = [s.where[x] for x in s.rows]
    top = _row_max(b, s, filled(b, element, rows, float("-inf")))
    total = _row_sum(b, s, top, filled(b, element, rows, 0.0))
    rank = len(s.scores_dims)
    ident, row = projection(rank, range(rank)), s.sub(s.scores_dims, s.rows)

    def weight(bb: Builder, a: tuple[BlockArgument, ...]) -> None:
        bb.insert(linalg.YieldOp(bb.insert(arith.DivfOp(_shifted_exp(bb, a[0], a[1]),
                                                        a[2])).result))
    weights = generic(b, [s.scores, top, total],
                      [empty(b, element, [s.where[x] for x in s.scores_dims])],
                      [ident, row, row, ident], (), rank, weight).results[0]
    zero = b.insert(ConstantOp(FloatAttr(0.0, element))).result  # type: ignore[arg-type]
    init = b.insert(linalg.FillOp((zero,), (out,), (out.type,))).results[0]
    _replace(op, [_times_v(b, s, weights, op.inputs[2], init, s.dims[len(op.inputs)])])


def lower_online_attention(op: ext.OnlineAttention) -> None:
    b = Builder(InsertPoint.before(op))
    acc, old_max, old_sum = op.outputs
    element = tensor_type(acc).element_type
    s = _scores(b, op, 3, element)
    nin = len(op.inputs)
    if s.dims[nin + 1] != s.rows or s.dims[nin + 2] != s.rows:
        raise error_at(op, "online_attention's max and sum must be indexed by (batch, m)")
    top = _row_max(b, s, old_max)
    nrows = len(s.rows)
    rident = projection(nrows, range(nrows))

    def correction(bb: Builder, a: tuple[BlockArgument, ...]) -> None:
        bb.insert(linalg.YieldOp(bb.insert(arith.MulfOp(_shifted_exp(bb, a[0], a[1]),
                                                        a[2])).result))
    rows = [s.where[x] for x in s.rows]
    # c * sum, then + the new terms.
    scaled_sum = generic(b, [old_max, top, old_sum], [empty(b, element, rows)],
                         [rident] * 4, (), nrows, correction).results[0]
    new_sum = _row_sum(b, s, top, scaled_sum)
    out_dims = s.dims[nin]
    out_rank = len(out_dims)
    row_of_out = projection(out_rank, [out_dims.index(x) for x in s.rows])
    scaled_acc = generic(b, [old_max, top, acc],
                         [empty(b, element, [(acc, i) for i in range(out_rank)])],
                         [row_of_out, row_of_out, projection(out_rank, range(out_rank)),
                          projection(out_rank, range(out_rank))], (), out_rank,
                         correction).results[0]
    rank = len(s.scores_dims)
    ident, row = projection(rank, range(rank)), s.sub(s.scores_dims, s.rows)
    weights = generic(b, [s.scores, top], [empty(b, element, [s.where[x] for x in s.scores_dims])],
                      [ident, row, ident], (), rank,
                      lambda bb, a: bb.insert(linalg.YieldOp(_shifted_exp(bb, a[0], a[1])))
                      ).results[0]
    new_acc = _times_v(b, s, weights, op.inputs[2], scaled_acc, out_dims)
    _replace(op, [new_acc, top, new_sum])
