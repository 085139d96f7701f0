"""The transposes that move a network between layouts, shared by the pass that turns its
convolutions channels-last and the pass that carries the transposes through the ops between
them: permutations in `linalg.transpose`'s convention (result dimension i is source dimension
perm[i]), and the one way such a transpose is made, so that one of a constant is folded at
compile time and one of another transpose becomes a single transpose (or none)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from weir.compiler.global_opt.constant_values import (
    constant_value,
    resource_name,
    stored_constant,
)
from weir.dialects import linalg_ext
from weir.ir import ConstantStore
from weir.ir.upstream import (
    arith,
    Builder,
    DenseArrayBase,
    EmptyOp,
    IntegerType,
    linalg,
    Operation,
    SSAValue,
    tensor,
    TensorType,
)

_I64 = IntegerType(64)

TO_NHWC = (0, 2, 3, 1)
"""NCHW (or NFHW) to NHWC: what a channels-last convolution reads."""
TO_NCHW = (0, 3, 1, 2)
"""NHWC back to NCHW: how the program's NCHW value is read from a channels-last one."""


def inverse(perm: Sequence[int]) -> tuple[int, ...]:
    result = [0] * len(perm)
    for i, p in enumerate(perm):
        result[p] = i
    return tuple(result)


def then(first: Sequence[int], second: Sequence[int]) -> tuple[int, ...]:
    """The one permutation that transposing by `first`, then by `second`, amounts to."""
    return tuple(first[s] for s in second)


def is_identity(perm: Sequence[int]) -> bool:
    return all(i == p for i, p in enumerate(perm))


def transpose_of(value: SSAValue) -> tuple[SSAValue, tuple[int, ...]] | None:
    """(source, permutation) when `value` is a `linalg.transpose`'s result."""
    op = value.owner
    if isinstance(op, linalg.TransposeOp) and len(op.res) == 1:
        return op.inputs[0], tuple(op.permutation.get_values())  # type: ignore[arg-type]
    return None


def transposed(b: Builder, value: SSAValue, perm: Sequence[int],
               constants: ConstantStore) -> SSAValue:
    """`value` transposed by `perm`: `value` itself for the identity, the source of a
    transpose that this one undoes, one transpose for two, and a constant for a constant (the
    filters of a network: transposed once here, never on a call)."""
    perm = tuple(perm)
    if is_identity(perm):
        return value
    inner = transpose_of(value)
    if inner is not None:
        return transposed(b, inner[0], then(inner[1], perm), constants)
    t = value.type
    assert isinstance(t, TensorType)
    result_t = TensorType(t.element_type, [t.get_shape()[p] for p in perm])
    array = constant_value(value, constants)
    if array is not None:
        return stored_constant(b, constants, array.transpose(perm), result_t,
                               f"{resource_name(value, 'weights')}_channels_last")
    empty = b.insert(EmptyOp([], result_t)).tensor
    return b.insert(linalg.TransposeOp(value, empty, DenseArrayBase.from_list(_I64, list(perm)),
                                       result_t)).results[0]


def remade_init(b: Builder, init: SSAValue, t: TensorType, dims: Sequence[int],
                new_dims: Sequence[int]) -> SSAValue | None:
    """An init made again as `t`: a fill of a scalar filled again, a broadcast along `dims`
    (a bias along the channels) broadcast again along `new_dims`; None for anything else,
    which the caller then moves as it moves the data."""
    op = init.owner
    if isinstance(op, linalg.FillOp) and len(op.inputs) == 1:
        empty = b.insert(EmptyOp([], t)).tensor
        return b.insert(linalg.FillOp([op.inputs[0]], [empty], [t])).results[0]
    if isinstance(op, linalg.BroadcastOp) and list(op.dimensions.get_values()) == list(dims):
        empty = b.insert(EmptyOp([], t)).tensor
        return b.insert(linalg_ext.BroadcastOp(
            op.input, empty, DenseArrayBase.from_list(_I64, list(new_dims)))).results[0]
    return None


_PURE = (arith.ConstantOp, EmptyOp, linalg.FillOp, linalg.BroadcastOp, linalg.TransposeOp,
         linalg.GenericOp, tensor.PadOp, tensor.ConcatOp, tensor.ExpandShapeOp,
         tensor.CollapseShapeOp)


def erase_unused(values: Iterable[SSAValue]) -> None:
    """The tensor ops that made `values` and that nothing reads any more, and what only they
    read, transitively: each left behind would stay in the module or become a dispatch."""
    pending = [v.owner for v in values if isinstance(v.owner, _PURE)]
    while pending:
        op = pending.pop()
        if op.parent is None or any(r.uses for r in op.results):
            continue
        pending.extend(o.owner for o in op.operands if isinstance(o.owner, _PURE))
        op.detach()
        op.erase()


def replace_op(op: Operation, value: SSAValue) -> None:
    """`op`'s one result becomes `value`; `op` goes, and what only it read."""
    op.results[0].replace_all_uses_with(value)
    old = list(op.operands)
    op.detach()
    op.erase()
    erase_unused(old)
