"""Rewrites the named linalg ops that no kernel implements into ops that one does, so later
phases see only linalg.generic, fill, transpose, broadcast, reduce, matmul, batch_matmul and the
window ops (which map onto the Conv2D/Pool2D kernels through their layouts).

- Elementwise named ops (add, sub, mul, max, min, exp, log, sqrt, negf, select, copy) and `map`
  become a parallel generic with their own body: the one form dispatch formation fuses.
- matvec, batch_matvec, vecmat and dot become generic reductions: with a vector operand there
  is no matrix product for the GEMM microkernel to block, and a loop nest reads each element
  once anyway.
- Transposed matmuls (matmul_transpose_a/b, batch_matmul_transpose_a/b, and a matmul whose
  `indexing_maps` only swap an operand's dimensions) become linalg.transpose + (batch_)matmul:
  the transpose fuses into the matmul's dispatch as a producer, so the product stays on the
  Matmul kernel. A matmul with other maps (a broadcast operand, a transposed result) becomes a
  generic contraction, which every target runs, only without the microkernel.
- quantized_matmul becomes a generic contraction of (lhs - lhs_zp) * (rhs - rhs_zp), each
  operand and zero point converted to the accumulator's type first, as MLIR defines it.
- softmax becomes three generics: max-reduce, sum-reduce of exp(x - max), and exp(x - max) /
  sum. Recomputing the exponential costs less than writing and re-reading it.
Body operands that differ in type from their output are converted the way MLIR's named ops do.
"""

from __future__ import annotations

from collections.abc import Sequence

from weir.compiler.pass_base import Pass
from weir.compiler.state import CompilationState
from weir.dialects import linalg_ext
from weir.dialects.linalg_bodies import body_region, cast_to
from weir.ir.diagnostics import error_at
from weir.ir.upstream import (
    AffineDimExpr,
    AffineMap,
    AffineMapAttr,
    arith,
    Attribute,
    BlockArgument,
    Builder,
    ConstantOp,
    DenseArrayBase,
    DimOp,
    EmptyOp,
    FloatAttr,
    IndexType,
    InsertPoint,
    IntegerAttr,
    IntegerType,
    linalg,
    linalg_attrs,
    LinalgNamedOp,
    math,
    ModuleOp,
    Operation,
    Region,
    SSAValue,
    TensorType,
)

# Named ops kept as they are: a kernel (or a dedicated translation) implements each.
_KEPT: tuple[type[Operation], ...] = (
    linalg.FillOp, linalg.TransposeOp, linalg.Conv2DNhwc_HwcfOp, linalg.PoolingNchwMaxOp,
    *linalg_ext.KERNEL_OPS,
)
# Transposed contractions: (plain op to build, operand to transpose, permutation).
_TRANSPOSED: dict[type[Operation], tuple[type[Operation], int, tuple[int, ...]]] = {
    linalg_ext.MatmulTransposeAOp: (linalg_ext.MatmulOp, 0, (1, 0)),
    linalg_ext.MatmulTransposeBOp: (linalg_ext.MatmulOp, 1, (1, 0)),
    linalg_ext.BatchMatmulTransposeAOp: (linalg_ext.BatchMatmulOp, 0, (0, 2, 1)),
    linalg_ext.BatchMatmulTransposeBOp: (linalg_ext.BatchMatmulOp, 1, (0, 2, 1)),
}
PARALLEL = linalg_attrs.IteratorTypeAttr.parallel()
REDUCTION = linalg_attrs.IteratorTypeAttr.reduction()


class GeneralizeNamedOps(Pass):
    flag = "generalize-named-ops"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        for op in list(module.walk()):
            if isinstance(op, linalg_ext.BatchMatmulOp) and op.has_explicit_maps():
                self._batch_matmul_with_maps(op)
                continue
            if isinstance(op, _KEPT) or op.parent is None:
                continue
            if isinstance(op, linalg.MatmulOp):
                if isinstance(op, linalg_ext.MatmulOp) and op.has_explicit_maps():
                    self._matmul_with_maps(op)
            elif type(op) in _TRANSPOSED:
                self._transposed(op)  # type: ignore[arg-type]
            elif isinstance(op, linalg.QuantizedMatmulOp):
                self._quantized_matmul(op)
            elif isinstance(op, LinalgNamedOp):
                self._replace(op, _generic(Builder(InsertPoint.before(op)), list(op.inputs),
                                           list(op.outputs), op.get_indexing_maps().data,
                                           op.get_iterator_types().data, op.body))
            elif isinstance(op, linalg_ext.MapOp):
                self._map(op)
            elif isinstance(op, linalg_ext.SoftmaxOp):
                self._softmax(op)

    @staticmethod
    def _replace(op: Operation, new: Operation) -> None:
        for old, value in zip(op.results, new.results, strict=True):
            old.replace_all_uses_with(value)
        op.detach()
        op.erase()

    # --------------------------------------------------------------------------- matmuls

    def _transposed(self, op: LinalgNamedOp) -> None:
        plain, which, perm = _TRANSPOSED[type(op)]
        b = Builder(InsertPoint.before(op))
        inputs = list(op.inputs)
        inputs[which] = _transpose(b, inputs[which], perm)
        self._replace(op, b.insert(_contraction(plain, inputs, list(op.outputs))))

    def _quantized_matmul(self, op: linalg.QuantizedMatmulOp) -> None:
        lhs, rhs, lhs_zp, rhs_zp = op.inputs
        acc = _tensor_type(op.outputs[0]).element_type
        types = [_tensor_type(lhs).element_type, _tensor_type(rhs).element_type, lhs_zp.type,
                 rhs_zp.type, acc]

        def body(bb: Builder, args: tuple[BlockArgument, ...]) -> None:
            a, c, a_zp, c_zp, total = args
            a = bb.insert(arith.SubiOp(cast_to(bb, a, acc), cast_to(bb, a_zp, acc))).result
            c = bb.insert(arith.SubiOp(cast_to(bb, c, acc), cast_to(bb, c_zp, acc))).result
            product = bb.insert(arith.MuliOp(a, c)).result
            bb.insert(linalg.YieldOp(bb.insert(arith.AddiOp(total, product)).result))

        generic = _generic(Builder(InsertPoint.before(op)), list(op.inputs), list(op.outputs),
                           op.get_indexing_maps().data, op.get_iterator_types().data,
                           body_region(types, body), clone=False)
        generic.location = op.location
        self._replace(op, generic)

    def _matmul_with_maps(self, op: linalg_ext.MatmulOp) -> None:
        """Maps over loops (m, n, k): operands that are only transposed get a linalg.transpose;
        anything else makes a generic contraction."""
        lhs, rhs, out = (_dim_positions(m.data) for m in op.indexing_maps.data)
        if lhs is None or rhs is None or out is None:
            raise error_at(op, f"linalg.matmul with indexing maps {op.indexing_maps} is not "
                               "supported: each map result must be a loop dimension")
        b = Builder(InsertPoint.before(op))
        if out == (0, 1) and lhs in ((0, 2), (2, 0)) and rhs in ((2, 1), (1, 2)):
            a, c = op.inputs
            a = a if lhs == (0, 2) else _transpose(b, a, (1, 0))
            c = c if rhs == (2, 1) else _transpose(b, c, (1, 0))
            self._replace(op, b.insert(_contraction(linalg_ext.MatmulOp, [a, c],
                                                    list(op.outputs))))
            return
        self._replace(op, _generic(b, list(op.inputs), list(op.outputs), op.indexing_maps.data,
                                   op.get_iterator_types().data, op.body))

    def _batch_matmul_with_maps(self, op: linalg_ext.BatchMatmulOp) -> None:
        """Maps over loops (b, m, n, k), as MLIR prints the batch_matmul_transpose_a/b it
        retired: operands that are only transposed get a linalg.transpose; anything else makes a
        generic contraction."""
        maps = op.get_default_indexing_maps()
        lhs, rhs, out = (_dim_positions(m) for m in maps)
        b = Builder(InsertPoint.before(op))
        if out == (0, 1, 2) and lhs in ((0, 1, 3), (0, 3, 1)) and rhs in ((0, 3, 2), (0, 2, 3)):
            a, c = op.inputs
            a = a if lhs == (0, 1, 3) else _transpose(b, a, (0, 2, 1))
            c = c if rhs == (0, 3, 2) else _transpose(b, c, (0, 2, 1))
            self._replace(op, b.insert(_contraction(linalg_ext.BatchMatmulOp, [a, c],
                                                    list(op.outputs))))
            return
        self._replace(op, _generic(b, list(op.inputs), list(op.outputs),
                                   [AffineMapAttr(m) for m in maps],
                                   op.get_iterator_types().data, op.body))

    # ------------------------------------------------------------------------ map, softmax

    def _map(self, op: linalg_ext.MapOp) -> None:
        """A mapper written without the output's argument (MLIR's older form) gets one,
        unused, as the generic's body needs."""
        rank = len(_tensor_type(op.init).get_shape())
        body = op.mapper.clone()
        if not op.has_init_argument():
            body.block.insert_arg(_tensor_type(op.init).element_type, len(body.block.args))
        identity = AffineMap.identity(rank)
        self._replace(op, _generic(Builder(InsertPoint.before(op)), list(op.inputs), [op.init],
                                   [AffineMapAttr(identity)] * (len(op.inputs) + 1),
                                   [PARALLEL] * rank, body, clone=False))

    def _softmax(self, op: linalg_ext.SoftmaxOp) -> None:
        b = Builder(InsertPoint.before(op))
        x = op.input
        t = _tensor_type(x)
        rank, d = len(t.get_shape()), op.dimension.value.data
        element = t.element_type
        full = AffineMapAttr(AffineMap.identity(rank))
        kept = AffineMapAttr(AffineMap(rank, 0, tuple(AffineDimExpr(i) for i in range(rank)
                                                      if i != d)))
        reducing = [REDUCTION if i == d else PARALLEL for i in range(rank)]

        def init(value: float) -> SSAValue:
            empty = _empty(b, element, [(x, i) for i in range(rank) if i != d])
            scalar = b.insert(ConstantOp(FloatAttr(value, element))).result  # type: ignore[arg-type]
            return b.insert(linalg.FillOp([scalar], [empty], [empty.type])).results[0]

        def shifted_exp(bb: Builder, v: SSAValue, top: SSAValue) -> SSAValue:
            return bb.insert(math.ExpOp(bb.insert(arith.SubfOp(v, top)).result)).result

        def max_body(bb: Builder, args: tuple[BlockArgument, ...]) -> None:
            value, acc = args
            bb.insert(linalg.YieldOp(bb.insert(arith.MaximumfOp(value, acc)).result))

        def sum_body(bb: Builder, args: tuple[BlockArgument, ...]) -> None:
            value, top, acc = args
            bb.insert(linalg.YieldOp(bb.insert(arith.AddfOp(shifted_exp(bb, value, top),
                                                            acc)).result))

        def divide_body(bb: Builder, args: tuple[BlockArgument, ...]) -> None:
            value, top, total, _ = args
            bb.insert(linalg.YieldOp(bb.insert(arith.DivfOp(shifted_exp(bb, value, top),
                                                            total)).result))

        top = _generic(b, [x], [init(float("-inf"))], [full, kept], reducing,
                       body_region([element] * 2, max_body), clone=False).results[0]
        total = _generic(b, [x, top], [init(0.0)], [full, kept, kept], reducing,
                         body_region([element] * 3, sum_body), clone=False).results[0]
        self._replace(op, _generic(b, [x, top, total], [op.output], [full, kept, kept, full],
                                   [PARALLEL] * rank, body_region([element] * 4, divide_body),
                                   clone=False))


# ------------------------------------------------------------------------------- builders


def _tensor_type(value: SSAValue) -> TensorType:
    t = value.type
    assert isinstance(t, TensorType)
    return t  # type: ignore[return-value]


def _dim_positions(amap: AffineMap) -> tuple[int, ...] | None:
    if not all(isinstance(e, AffineDimExpr) for e in amap.results):
        return None
    return tuple(e.position for e in amap.results)  # type: ignore[attr-defined]


def _empty(b: Builder, element: Attribute, dims: Sequence[tuple[SSAValue, int]]) -> SSAValue:
    """A tensor.empty whose dimension i has the size of dimension dims[i][1] of dims[i][0]."""
    shape: list[int] = []
    dynamic: list[SSAValue] = []
    for value, i in dims:
        size = _tensor_type(value).get_shape()[i]
        shape.append(size)
        if size < 0:
            index = b.insert(ConstantOp(IntegerAttr(i, IndexType()))).result
            dynamic.append(b.insert(DimOp(value, index)).result)
    return b.insert(EmptyOp(dynamic, TensorType(element, shape))).tensor


def _transpose(b: Builder, value: SSAValue, perm: tuple[int, ...]) -> SSAValue:
    init = _empty(b, _tensor_type(value).element_type, [(value, p) for p in perm])
    return b.insert(linalg.TransposeOp(value, init, DenseArrayBase.from_list(IntegerType(64), perm))).results[0]


def _contraction(cls: type[Operation], inputs: list[SSAValue],
                 outputs: list[SSAValue]) -> Operation:
    if cls is linalg_ext.MatmulOp:
        return linalg_ext.MatmulOp(inputs, outputs)
    return cls(inputs, outputs, [o.type for o in outputs],  # type: ignore[call-arg]
               hidden_region=cls.get_hidden_region(inputs, outputs))  # type: ignore[attr-defined]


def _generic(b: Builder, inputs: list[SSAValue], outputs: list[SSAValue],
             maps: Sequence[AffineMapAttr], iterators: Sequence[Attribute], body: Region,
             clone: bool = True) -> Operation:
    """A linalg.generic over `body` (cloned unless `clone` is False); a yielded value of another
    type than its output is converted first."""
    region = body.clone() if clone else body
    block = region.block
    yield_op = block.last_op
    assert isinstance(yield_op, linalg.YieldOp)
    cb = Builder(InsertPoint.before(yield_op))
    for i, (value, out) in enumerate(zip(list(yield_op.operands), outputs)):
        element = _tensor_type(out).element_type
        if value.type != element:
            yield_op.operands[i] = cast_to(cb, value, element)
    return b.insert(linalg.GenericOp(inputs, outputs, region, list(maps), list(iterators),
                                     [o.type for o in outputs]))

