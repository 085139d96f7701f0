"""Writes the linalg extension ops that need no kernel of their own in ops that have one:

- topk becomes a stable sort of the outputs' values followed by the input's (so the outputs'
  values come first among equals, as IREE's merge keeps them), with the indices sorted alongside,
  and a slice of the first k: the sort kernel serves sort and topk alike (topk_v2 with indices
  orders equal values by index, as IREE's insertion does; with `is_sorted`, topk_ties then
  moves equal values where IREE's final bubble sort leaves them);
- arg_compare becomes a reduction generic that keeps (value, index) and replaces them when the
  region says the new element is better: the first of equal elements wins, in loop order;
- affine.linearize_index / delinearize_index (in map_load/map_store regions) become arith;
- attention becomes linalg: scores Q.K^T * scale (masked), the softmax's max and sum
  reductions, and the product with V, each a generic the targets already compile;
- the Winograd input, filter and output transforms become two contractions each with their
  constant matrices (and, for the input, the overlapping tiles cut out with slices).

sort, scan, scatter, gather, map_load and map_store stay: each is a kernel (weir/format/kernel_description.py)."""

from __future__ import annotations

from collections.abc import Sequence

from weir.compiler.pass_base import Pass
from weir.compiler.state import CompilationState
from weir.dialects import iree_linalg_ext as ext
from weir.dialects.affine_index import DelinearizeIndexOp, LinearizeIndexOp
from weir.compiler.input.attention_to_linalg import lower_attention, lower_online_attention
from weir.compiler.input.winograd_to_linalg import lower_winograd
from weir.dialects.iree_linalg_ext_winograd import WinogradOp
from weir.compiler.input.topk_ties import order_ties
from weir.compiler.input.linalg_builders import empty, generic, inline, projection, size, tensor_type
from weir.ir.diagnostics import error_at, locate_created
from weir.ir.upstream import (
    arith,
    Block,
    BlockArgument,
    Builder,
    DYNAMIC_INDEX,
    IndexType,
    InsertPoint,
    IntegerAttr,
    linalg,
    ModuleOp,
    Operation,
    Region,
    SSAValue,
    tensor,
    TensorType,
)

class LowerLinalgExt(Pass):
    flag = "lower-linalg-ext"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        for op in list(module.walk()):
            if isinstance(op, ext.Topk):
                self._topk(op)
            elif isinstance(op, ext.ArgCompare):
                self._arg_compare(op)
            elif isinstance(op, LinearizeIndexOp | DelinearizeIndexOp):
                _affine_index(op)
            elif isinstance(op, ext.OnlineAttention):
                lower_online_attention(op)
            elif isinstance(op, ext.Attention):
                lower_attention(op)
            elif isinstance(op, WinogradOp):
                lower_winograd(op)

    @staticmethod
    def _replace(op: Operation, values: Sequence[SSAValue]) -> None:
        locate_created(op)  # errors about the replacement point at the op
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
        index_type = tensor_type(out_indices).element_type if out_indices is not None else ext.I32
        if len(op.inputs) == 2:
            indices = op.inputs[1]
            if out_indices is not None and tensor_type(indices).element_type != index_type:
                raise error_at(op, f"the indices input {indices.type} and output "
                                   f"{out_indices.type} must have one element type")
        else:
            rank = len(tensor_type(values).get_shape())
            init = empty(b, index_type, [(values, i) for i in range(rank)])

            def position(bb: Builder, args: tuple[BlockArgument, ...]) -> None:
                i = bb.insert(linalg.IndexOp(d)).result
                bb.insert(linalg.YieldOp(bb.insert(arith.IndexCastOp(i, index_type)).result))
            indices = generic(b, [], [init], [projection(rank, range(rank))], (), rank,
                               position).results[0]
        if out_indices is None:
            rank = len(tensor_type(out_values).get_shape())
            out_indices = empty(b, index_type, [(out_values, i) for i in range(rank)])
        merged = []
        for first, then in ((out_values, values), (out_indices, indices)):
            shape = list(tensor_type(then).get_shape())
            k, n = tensor_type(first).get_shape()[d], shape[d]
            shape[d] = k + n if k >= 0 and n >= 0 else DYNAMIC_INDEX
            merged.append(b.insert(tensor.ConcatOp(
                [first, then], d, TensorType(tensor_type(then).element_type, shape))).result)
        element = tensor_type(values).element_type
        block = Block(arg_types=[element, element, index_type, index_type])
        bb = Builder(InsertPoint.at_end(block))
        better = inline(bb, op.region, block.args[:2])
        v2 = isinstance(op, ext.TopkV2Op)
        if v2 and len(op.outputs) == 2:
            # topk_v2's insertion lets an element pass an equal one with a larger index.
            worse = inline(bb, op.region, [block.args[1], block.args[0]])
            true = bb.insert(arith.ConstantOp(IntegerAttr(1, ext.I1))).result
            earlier = bb.insert(arith.CmpiOp(block.args[2], block.args[3], "slt")).result
            tied_earlier = bb.insert(arith.AndIOp(
                bb.insert(arith.XOrIOp(worse, true)).result, earlier)).result
            better = bb.insert(arith.OrIOp(better, tied_earlier)).result
        bb.insert(ext.YieldOp(better))
        sort = b.insert(ext.SortOp.build(
            operands=[[], merged, []], result_types=[[v.type for v in merged]],
            regions=[Region(block)], properties={"dimension": op.dimension}))
        results = []
        for r, out in zip(sort.results, op.outputs):  # the positions only if asked for
            rank = len(tensor_type(out).get_shape())
            sizes = [size(b, out, i) for i in range(rank)]
            results.append(b.insert(tensor.ExtractSliceOp(
                r, [0] * rank, sizes, [1] * rank, out.type)).result)
        if v2 and op.is_sorted is not None:
            results = order_ties(b, op.region, results, d)
        self._replace(op, results)

    # -------------------------------------------------------------------------- arg_compare

    def _arg_compare(self, op: ext.ArgCompare) -> None:
        b = Builder(InsertPoint.before(op))
        d = op.dim()
        x = op.inputs[0]
        rank = len(tensor_type(x).get_shape())
        kept = [i for i in range(rank) if i != d]
        index_type = tensor_type(op.outputs[1]).element_type
        base = op.index_base[0] if op.index_base else None

        def body(bb: Builder, args: tuple[BlockArgument, ...]) -> None:
            value, best, best_index = args
            better = inline(bb, op.region, [value, best])
            i: SSAValue = bb.insert(linalg.IndexOp(d)).result
            if base is not None:
                i = bb.insert(arith.AddiOp(i, base)).result
            i = bb.insert(arith.IndexCastOp(i, index_type)).result
            bb.insert(linalg.YieldOp(
                bb.insert(arith.SelectOp(better, value, best)).result,
                bb.insert(arith.SelectOp(better, i, best_index)).result))
        reduction = generic(b, [x], list(op.outputs),
                           [projection(rank, range(rank)), projection(rank, kept), projection(rank, kept)],
                           (d,), rank, body)
        self._replace(op, reduction.results)


def _affine_index(op: LinearizeIndexOp | DelinearizeIndexOp) -> None:
    """linearize: ((i0 * b1 + i1) * b2 + i2 ...); delinearize: the remainders of repeated
    division by the bases, last first (the outermost result takes what is left)."""
    b = Builder(InsertPoint.before(op))
    bases = list(op.static_basis.get_values())

    def const(v: int) -> SSAValue:
        return b.insert(arith.ConstantOp(IntegerAttr(v, IndexType()))).result
    if isinstance(op, LinearizeIndexOp):
        indices = list(op.indices)
        total = indices[0]
        for x, base in zip(indices[1:], bases[len(bases) - len(indices) + 1:]):
            total = b.insert(arith.AddiOp(b.insert(arith.MuliOp(total, const(base))).result,
                                          x)).result
        LowerLinalgExt._replace(op, [total])
        return
    rest: SSAValue = op.linear_index
    parts: list[SSAValue] = []
    count = len(op.multi_index)
    for i in range(count - 1, 0, -1):
        base = const(bases[i - count + len(bases)])
        parts.append(b.insert(arith.RemUIOp(rest, base)).result)
        rest = b.insert(arith.DivUIOp(rest, base)).result
    parts.append(rest)
    LowerLinalgExt._replace(op, parts[::-1])
