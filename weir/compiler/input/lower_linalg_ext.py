"""Writes the linalg extension ops that need no kernel of their own in ops that have one:

- topk becomes a stable sort of the outputs' values followed by the input's (so the outputs'
  values come first among equals, as IREE's merge keeps them), with the indices sorted alongside,
  and a slice of the first k: the sort kernel serves sort and topk alike;
- arg_compare becomes a reduction generic that keeps (value, index) and replaces them when the
  region says the new element is better: the first of equal elements wins, in loop order;
- attention becomes linalg: scores Q.K^T * scale (masked), the softmax's max and sum
  reductions, and the product with V, each a generic the targets already compile.

sort, scan, scatter and gather stay: each is a kernel (weir/format/reference_kernel.py)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects.utils import AbstractYieldOperation

from weir.compiler.pass_base import Pass
from weir.compiler.state import CompilationState
from weir.dialects import iree_linalg_ext as ext
from weir.dialects.linalg_ext import body_region
from weir.ir.diagnostics import error_at
from weir.ir.upstream import (
    AffineDimExpr,
    AffineMap,
    AffineMapAttr,
    arith,
    Attribute,
    Block,
    BlockArgument,
    Builder,
    ConstantOp,
    DimOp,
    DYNAMIC_INDEX,
    EmptyOp,
    FloatAttr,
    IndexType,
    InsertPoint,
    IntegerAttr,
    linalg,
    linalg_attrs,
    math,
    ModuleOp,
    Operation,
    Region,
    SSAValue,
    tensor,
    TensorType,
)

PARALLEL = linalg_attrs.IteratorTypeAttr.parallel()
REDUCTION = linalg_attrs.IteratorTypeAttr.reduction()


def _type(v: SSAValue) -> TensorType:
    t = v.type
    assert isinstance(t, TensorType)
    return t  # type: ignore[return-value]


def _size(b: Builder, value: SSAValue, i: int) -> SSAValue | int:
    size = _type(value).get_shape()[i]
    if size >= 0:
        return size
    index = b.insert(ConstantOp(IntegerAttr(i, IndexType()))).result
    return b.insert(DimOp(value, index)).result


def _empty(b: Builder, element: Attribute, dims: Sequence[tuple[SSAValue, int]]) -> SSAValue:
    sizes = [_size(b, v, i) for v, i in dims]
    return b.insert(EmptyOp([s for s in sizes if isinstance(s, SSAValue)],
                            TensorType(element, [s if isinstance(s, int) else DYNAMIC_INDEX
                                                 for s in sizes]))).tensor


def _filled(b: Builder, element: Attribute, dims: Sequence[tuple[SSAValue, int]],
            value: float) -> SSAValue:
    init = _empty(b, element, dims)
    c = b.insert(ConstantOp(FloatAttr(value, element))).result  # type: ignore[arg-type]
    return b.insert(linalg.FillOp((c,), (init,), (init.type,))).results[0]


def _inline(b: Builder, region: Region, args: Sequence[SSAValue]) -> SSAValue:
    """The value `region` yields for `args`, its ops cloned at `b`."""
    mapping: dict[SSAValue, SSAValue] = dict(zip(region.block.args, args))
    for op in region.block.ops:
        if isinstance(op, AbstractYieldOperation):
            return mapping.get(op.operands[0], op.operands[0])
        b.insert(op.clone(mapping))
    raise AssertionError("the verifier checked the region's yield")


def _map(num_dims: int, dims: Sequence[int]) -> AffineMapAttr:
    return AffineMapAttr(AffineMap(num_dims, 0, tuple(AffineDimExpr(d) for d in dims)))


def _generic(b: Builder, inputs: list[SSAValue], outputs: list[SSAValue],
             maps: Sequence[AffineMapAttr], reduced: Sequence[int], num_dims: int,
             fill: Callable[[Builder, tuple[BlockArgument, ...]], None]) -> Operation:
    types = [_type(v).element_type for v in inputs + outputs]
    iterators = [REDUCTION if d in reduced else PARALLEL for d in range(num_dims)]
    return b.insert(linalg.GenericOp(inputs, outputs, body_region(types, fill), list(maps),
                                     iterators, [o.type for o in outputs]))


class LowerLinalgExt(Pass):
    flag = "lower-linalg-ext"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        for op in list(module.walk()):
            if isinstance(op, ext.Topk):
                self._topk(op)
            elif isinstance(op, ext.ArgCompare):
                self._arg_compare(op)
            elif isinstance(op, ext.Attention):
                self._attention(op)

    @staticmethod
    def _replace(op: Operation, values: Sequence[SSAValue]) -> None:
        for old, new in zip(op.results, values, strict=True):
            old.replace_all_uses_with(new)
        op.detach()
        op.erase()

    # --------------------------------------------------------------------------------- topk

    def _topk(self, op: ext.Topk) -> None:
        b = Builder(InsertPoint.before(op))
        d = op.dim()
        values, out_values = op.inputs[0], op.outputs[0]
        # Without an indices output (topk_v2) the positions still ride along: the sort is the
        # same, and nothing reads them.
        out_indices = op.outputs[1] if len(op.outputs) == 2 else None
        index_type = _type(out_indices).element_type if out_indices is not None else ext.I32
        if len(op.inputs) == 2:
            indices = op.inputs[1]
            if out_indices is not None and _type(indices).element_type != index_type:
                raise error_at(op, f"the indices input {indices.type} and output "
                                   f"{out_indices.type} must have one element type")
        else:
            rank = len(_type(values).get_shape())
            init = _empty(b, index_type, [(values, i) for i in range(rank)])

            def position(bb: Builder, args: tuple[BlockArgument, ...]) -> None:
                i = bb.insert(linalg.IndexOp(d)).result
                bb.insert(linalg.YieldOp(bb.insert(arith.IndexCastOp(i, index_type)).result))
            indices = _generic(b, [], [init], [_map(rank, range(rank))], (), rank,
                               position).results[0]
        if out_indices is None:
            rank = len(_type(out_values).get_shape())
            out_indices = _empty(b, index_type, [(out_values, i) for i in range(rank)])
        merged = []
        for first, then in ((out_values, values), (out_indices, indices)):
            shape = list(_type(then).get_shape())
            k, n = _type(first).get_shape()[d], shape[d]
            shape[d] = k + n if k >= 0 and n >= 0 else DYNAMIC_INDEX
            merged.append(b.insert(tensor.ConcatOp(
                [first, then], d, TensorType(_type(then).element_type, shape))).result)
        element = _type(values).element_type
        block = Block(arg_types=[element, element, index_type, index_type])
        bb = Builder(InsertPoint.at_end(block))
        better = _inline(bb, op.region, block.args[:2])
        bb.insert(ext.YieldOp(better))
        sort = b.insert(ext.SortOp.build(
            operands=[[], merged, []], result_types=[[v.type for v in merged]],
            regions=[Region(block)], properties={"dimension": op.dimension}))
        results = []
        for r, out in zip(sort.results, op.outputs):  # the positions only if asked for
            rank = len(_type(out).get_shape())
            sizes = [_size(b, out, i) for i in range(rank)]
            results.append(b.insert(tensor.ExtractSliceOp(
                r, [0] * rank, sizes, [1] * rank, out.type)).result)
        self._replace(op, results)

    # -------------------------------------------------------------------------- arg_compare

    def _arg_compare(self, op: ext.ArgCompare) -> None:
        b = Builder(InsertPoint.before(op))
        d = op.dim()
        x = op.inputs[0]
        rank = len(_type(x).get_shape())
        kept = [i for i in range(rank) if i != d]
        index_type = _type(op.outputs[1]).element_type
        base = op.index_base[0] if op.index_base else None

        def body(bb: Builder, args: tuple[BlockArgument, ...]) -> None:
            value, best, best_index = args
            better = _inline(bb, op.region, [value, best])
            i: SSAValue = bb.insert(linalg.IndexOp(d)).result
            if base is not None:
                i = bb.insert(arith.AddiOp(i, base)).result
            i = bb.insert(arith.IndexCastOp(i, index_type)).result
            bb.insert(linalg.YieldOp(
                bb.insert(arith.SelectOp(better, value, best)).result,
                bb.insert(arith.SelectOp(better, i, best_index)).result))
        generic = _generic(b, [x], list(op.outputs),
                           [_map(rank, range(rank)), _map(rank, kept), _map(rank, kept)],
                           (d,), rank, body)
        self._replace(op, generic.results)

    # ---------------------------------------------------------------------------- attention

    def _attention(self, op: ext.Attention) -> None:
        block = op.region.block
        last = block.last_op
        if len(block.args) != 1 or last is None or list(last.operands) != [block.args[0]]:
            raise error_at(op, f"'{op.name}' with a region that modifies the scores is not "
                               "supported")
        assert op.indexing_maps is not None
        maps: list[AffineMap] = [m.data for m in op.indexing_maps.data]  # type: ignore[attr-defined]
        dims: list[list[int]] = []
        for m in maps:
            if not all(isinstance(e, AffineDimExpr) for e in m.results):
                raise error_at(op, f"attention indexing map {m} is not a projection")
            dims.append([e.position for e in m.results])  # type: ignore[attr-defined]
        q, k, v, o = (set(dims[i]) for i in (0, 1, 2, len(dims) - 1))
        batch = sorted(q & k & v & o)
        m_dims, k1 = sorted((q & o) - k), sorted((q & k) - v - o)
        k2, n_dims = sorted((k & v) - q), sorted((v & o) - q)
        if not m_dims or not k1 or not k2 or not n_dims or \
                len(batch) + len(m_dims) + len(k1) + len(k2) + len(n_dims) != maps[0].num_dims:
            raise error_at(op, "attention indexing maps do not describe Q (m, k1), K (k2, k1), "
                               "V (k2, n) and the output (m, n)")
        query, key, value, scale = op.inputs[:4]
        mask = op.inputs[4] if len(op.inputs) == 5 else None
        out = op.outputs[0]
        operands = [query, key, value, scale] + ([mask] if mask is not None else []) + [out]
        where: dict[int, tuple[SSAValue, int]] = {}
        for value_, ds in zip(operands, dims):
            for axis, dim in enumerate(ds):
                where.setdefault(dim, (value_, axis))
        b = Builder(InsertPoint.before(op))
        element = _type(out).element_type

        def sub(domain: list[int], of: Sequence[int]) -> AffineMapAttr:
            return _map(len(domain), [domain.index(x) for x in of])

        # scores[b, m, k2] = sum over k1 of Q * K, then scaled (and masked).
        domain = batch + m_dims + k2 + k1
        scores_dims = batch + m_dims + k2
        zero = _filled(b, element, [where[x] for x in scores_dims], 0.0)

        def dot(bb: Builder, args: tuple[BlockArgument, ...]) -> None:
            qv, kv, acc = args
            qv, kv = (_cast(bb, x, element) for x in (qv, kv))
            product = bb.insert(arith.MulfOp(qv, kv)).result
            bb.insert(linalg.YieldOp(bb.insert(arith.AddfOp(acc, product)).result))
        scores = _generic(b, [query, key], [zero],
                          [sub(domain, dims[0]), sub(domain, dims[1]),
                           sub(domain, scores_dims)],
                          [domain.index(x) for x in k1], len(domain), dot).results[0]
        s_rank = len(scores_dims)
        ident = _map(s_rank, range(s_rank))
        scaled_inputs = [scores] + ([mask] if mask is not None else [])
        scaled_maps = [ident] + ([sub(scores_dims, dims[4])] if mask is not None else [])

        def scale_body(bb: Builder, args: tuple[BlockArgument, ...]) -> None:
            s = bb.insert(arith.MulfOp(args[0], _cast(bb, scale, element))).result
            if mask is not None:
                m = args[1]
                if m.type == ext.I1:
                    ninf = bb.insert(ConstantOp(FloatAttr(float("-inf"), element))).result  # type: ignore[arg-type]
                    s = bb.insert(arith.SelectOp(m, s, ninf)).result
                else:
                    s = bb.insert(arith.AddfOp(s, _cast(bb, m, element))).result
            bb.insert(linalg.YieldOp(s))
        scaled = _generic(b, scaled_inputs, [_empty(b, element, [where[x] for x in scores_dims])],
                          scaled_maps + [ident], (), s_rank, scale_body).results[0]
        # The softmax over k2: max, sum of exp(s - max), then the weights.
        rows = batch + m_dims
        row_map = sub(scores_dims, rows)
        reduced = [scores_dims.index(x) for x in k2]
        top = _generic(b, [scaled], [_filled(b, element, [where[x] for x in rows], float("-inf"))],
                       [ident, row_map], reduced, s_rank,
                       lambda bb, a: bb.insert(linalg.YieldOp(
                           bb.insert(arith.MaximumfOp(a[0], a[1])).result))).results[0]

        def shifted_exp(bb: Builder, s: SSAValue, t: SSAValue) -> SSAValue:
            return bb.insert(math.ExpOp(bb.insert(arith.SubfOp(s, t)).result)).result

        def sum_body(bb: Builder, a: tuple[BlockArgument, ...]) -> None:
            bb.insert(linalg.YieldOp(bb.insert(arith.AddfOp(shifted_exp(bb, a[0], a[1]),
                                                            a[2])).result))
        total = _generic(b, [scaled, top], [_filled(b, element, [where[x] for x in rows], 0.0)],
                         [ident, row_map, row_map], reduced, s_rank, sum_body).results[0]

        def weight_body(bb: Builder, a: tuple[BlockArgument, ...]) -> None:
            bb.insert(linalg.YieldOp(bb.insert(arith.DivfOp(shifted_exp(bb, a[0], a[1]),
                                                            a[2])).result))
        weights = _generic(b, [scaled, top, total],
                           [_empty(b, element, [where[x] for x in scores_dims])],
                           [ident, row_map, row_map, ident], (), s_rank, weight_body).results[0]
        # out[b, m, n] = sum over k2 of weights * V, written in the output's layout.
        domain = batch + m_dims + n_dims + k2
        zero_out = b.insert(linalg.FillOp(
            (b.insert(ConstantOp(FloatAttr(0.0, element))).result,),  # type: ignore[arg-type]
            (out,), (out.type,))).results[0]

        def weighted(bb: Builder, args: tuple[BlockArgument, ...]) -> None:
            w, vv, acc = args
            product = bb.insert(arith.MulfOp(w, _cast(bb, vv, element))).result
            bb.insert(linalg.YieldOp(bb.insert(arith.AddfOp(acc, product)).result))
        result = _generic(b, [weights, value], [zero_out],
                          [sub(domain, scores_dims), sub(domain, dims[2]),
                           sub(domain, dims[-1])],
                          [domain.index(x) for x in k2], len(domain), weighted).results[0]
        self._replace(op, [result])


def _cast(b: Builder, value: SSAValue, to: Attribute) -> SSAValue:
    """A float of another width as `to`."""
    if value.type == to:
        return value
    wider = to.bitwidth > value.type.bitwidth  # type: ignore[attr-defined]
    cls = arith.ExtFOp if wider else arith.TruncFOp
    return b.insert(cls(value, to)).result
