"""Rewrites the tensor ops that build tensors out of scalars as linalg, so they run in dispatches
like all other tensor math (and fuse with their consumers):

    tensor.splat %s          -> linalg.fill ins(%s)
    tensor.from_elements ... -> linalg.generic yielding element k at linear position k
    tensor.insert %s into %t[%i, %j]
                             -> linalg.generic yielding %s where (d0, d1) == (%i, %j), else %t's

The scalars (and insert positions) stay host values that the dispatch captures as push
constants. A tiny dispatch rather than a host write keeps these ops asynchronous: the host never
waits for %t to be ready, and the result is a fresh tensor as value semantics require, which a
copy plus a host store would also have to make. `tensor.extract` goes the other way and does need
the value on the host: the stream phase reads it once it is ready."""

from __future__ import annotations

from weir.compiler.pass_base import Pass
from weir.compiler.shapes import dynamic_dims
from weir.compiler.state import CompilationState
from weir.ir.upstream import (
    AffineMap,
    AffineMapAttr,
    arith,
    Block,
    Builder,
    ConstantOp,
    EmptyOp,
    IndexType,
    InsertPoint,
    IntegerAttr,
    IntegerType,
    linalg,
    linalg_attrs,
    ModuleOp,
    Operation,
    Region,
    SSAValue,
    tensor,
    TensorType,
)


class ConvertScalarTensorOps(Pass):
    flag = "convert-scalar-tensor-ops"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        for op in list(module.walk()):
            if isinstance(op, tensor.SplatOp):
                self._splat(op)
            elif isinstance(op, tensor.FromElementsOp):
                self._from_elements(op)
            elif isinstance(op, tensor.InsertOp):
                self._insert(op)

    def _replace(self, op: Operation, value: SSAValue) -> None:
        op.results[0].replace_all_uses_with(value)
        op.detach()
        op.erase()

    def _splat(self, op: tensor.SplatOp) -> None:
        t = op.result.type
        assert isinstance(t, TensorType)
        b = Builder(InsertPoint.before(op))
        init = b.insert(EmptyOp(list(op.dynamicSizes), t))
        fill = b.insert(linalg.FillOp((op.input,), (init.tensor,), (t,)))
        self._replace(op, fill.results[0])

    def _generic(self, b: Builder, inputs: list[SSAValue], init: SSAValue, t: TensorType,
                 body: Block) -> SSAValue:
        rank = len(t.get_shape())
        identity = AffineMapAttr(AffineMap.identity(rank))
        return b.insert(linalg.GenericOp(
            inputs, [init], Region(body), [identity] * (len(inputs) + 1),
            [linalg_attrs.IteratorTypeAttr.parallel()] * rank, [t])).results[0]

    def _from_elements(self, op: tensor.FromElementsOp) -> None:
        t = op.result.type
        assert isinstance(t, TensorType)
        shape = t.get_shape()
        b = Builder(InsertPoint.before(op))
        init = b.insert(EmptyOp([], t)).tensor
        body = Block(arg_types=[t.element_type])
        inner = Builder(InsertPoint.at_end(body))
        # The row-major position of the current element, then a chain of selects by position.
        position: SSAValue | None = None
        for d, size in enumerate(shape):
            index = inner.insert(linalg.IndexOp(d)).result
            if position is None:
                position = index
            else:
                stride = inner.insert(ConstantOp(IntegerAttr(size, IndexType()))).result
                scaled = inner.insert(arith.MuliOp(position, stride)).result
                position = inner.insert(arith.AddiOp(scaled, index)).result
        elements = list(op.elements)
        value = elements[-1]
        for k in range(len(elements) - 2, -1, -1):
            assert position is not None  # more than one element: rank >= 1
            here = inner.insert(ConstantOp(IntegerAttr(k, IndexType()))).result
            match = inner.insert(arith.CmpiOp(position, here, "eq")).result
            value = inner.insert(arith.SelectOp(match, elements[k], value)).result
        inner.insert(linalg.YieldOp(value))
        self._replace(op, self._generic(b, [], init, t, body))

    def _insert(self, op: tensor.InsertOp) -> None:
        t = op.result.type
        assert isinstance(t, TensorType)
        b = Builder(InsertPoint.before(op))
        init = b.insert(EmptyOp(dynamic_dims(op.dest, InsertPoint.before(op)), t)).tensor
        body = Block(arg_types=[t.element_type, t.element_type])
        inner = Builder(InsertPoint.at_end(body))
        hit: SSAValue | None = None
        for d, position in enumerate(op.indices):
            index = inner.insert(linalg.IndexOp(d)).result
            same = inner.insert(arith.CmpiOp(index, position, "eq")).result
            hit = same if hit is None else inner.insert(arith.AndIOp(hit, same)).result
        if hit is None:  # a 0-d tensor: its one element is replaced
            hit = inner.insert(ConstantOp(IntegerAttr(1, IntegerType(1)))).result
        value = inner.insert(arith.SelectOp(hit, op.scalar, body.args[0])).result
        inner.insert(linalg.YieldOp(value))
        self._replace(op, self._generic(b, [op.dest], init, t, body))
