"""Small builders of linalg on tensors that the input phase's lowerings of linalg extension ops
share: empty and filled tensors sized like other values, projection maps, generics with a body."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from weir.dialects.linalg_bodies import body_region
from weir.ir.upstream import (
    AffineDimExpr,
    AffineMap,
    AffineMapAttr,
    arith,
    Attribute,
    BlockArgument,
    Builder,
    ConstantOp,
    DimOp,
    DYNAMIC_INDEX,
    EmptyOp,
    FloatAttr,
    IndexType,
    IntegerAttr,
    linalg,
    linalg_attrs,
    Operation,
    Region,
    SSAValue,
    TensorType,
)

PARALLEL = linalg_attrs.IteratorTypeAttr.parallel()
REDUCTION = linalg_attrs.IteratorTypeAttr.reduction()


def tensor_type(v: SSAValue) -> TensorType:
    t = v.type
    assert isinstance(t, TensorType)
    return t  # type: ignore[return-value]


def size(b: Builder, value: SSAValue, i: int) -> SSAValue | int:
    size = tensor_type(value).get_shape()[i]
    if size >= 0:
        return size
    index = b.insert(ConstantOp(IntegerAttr(i, IndexType()))).result
    return b.insert(DimOp(value, index)).result


def empty(b: Builder, element: Attribute, dims: Sequence[tuple[SSAValue, int]]) -> SSAValue:
    sizes = [size(b, v, i) for v, i in dims]
    return b.insert(EmptyOp([s for s in sizes if isinstance(s, SSAValue)],
                            TensorType(element, [s if isinstance(s, int) else DYNAMIC_INDEX
                                                 for s in sizes]))).tensor


def filled(b: Builder, element: Attribute, dims: Sequence[tuple[SSAValue, int]],
            value: float) -> SSAValue:
    init = empty(b, element, dims)
    c = b.insert(ConstantOp(FloatAttr(value, element))).result  # type: ignore[arg-type]
    return b.insert(linalg.FillOp((c,), (init,), (init.type,))).results[0]


def inline(b: Builder, region: Region, args: Sequence[SSAValue]) -> SSAValue:
    """The value `region` yields for `args`, its ops cloned at `b` (the verifier checked that
    its last op is a yield of one value)."""
    mapping: dict[SSAValue, SSAValue] = dict(zip(region.block.args, args))
    *ops, terminator = region.block.ops
    for op in ops:
        b.insert(op.clone(mapping))
    return mapping.get(terminator.operands[0], terminator.operands[0])


def projection(num_dims: int, dims: Sequence[int]) -> AffineMapAttr:
    return AffineMapAttr(AffineMap(num_dims, 0, tuple(AffineDimExpr(d) for d in dims)))


def generic(b: Builder, inputs: list[SSAValue], outputs: list[SSAValue],
             maps: Sequence[AffineMapAttr], reduced: Sequence[int], num_dims: int,
             fill: Callable[[Builder, tuple[BlockArgument, ...]], None]) -> Operation:
    types = [tensor_type(v).element_type for v in inputs + outputs]
    iterators = [REDUCTION if d in reduced else PARALLEL for d in range(num_dims)]
    return b.insert(linalg.GenericOp(inputs, outputs, body_region(types, fill), list(maps),
                                     iterators, [o.type for o in outputs]))


def cast(b: Builder, value: SSAValue, to: Attribute) -> SSAValue:
    """A float of another width as `to`."""
    if value.type == to:
        return value
    wider = to.bitwidth > value.type.bitwidth  # type: ignore[attr-defined]
    cls = arith.ExtFOp if wider else arith.TruncFOp
    return b.insert(cls(value, to)).result
