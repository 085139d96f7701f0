"""Checks of the tensor ops weir accepts that xDSL 0.74's verifiers leave out, so an invalid op is
an error at its location instead of a program that runs wrongly: `collapse_shape` has no verifier
at all (a 2x4 collapsed into 6 elements compiled and returned six of the eight), `extract` and
`insert` do not count their indices, `empty` does not count its dynamic sizes, slices and pads
do not compare their shapes with their sizes, and no op looks at a constant index (an extract
past the end, a `dim` past the rank, a reshape's constant shape)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    IndexType,
    IntegerAttr,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.utils.exceptions import VerifyException

from weir.ir.op_checks.common import constant_int, element, is_dynamic, ranked, show


def _same_elements(source: Attribute, result: Attribute, result_role: str = "result") -> None:
    if element(source) != element(result):
        raise VerifyException(f"the source element type {element(source)} differs from the "
                              f"{result_role}'s, {element(result)}")


# --------------------------------------------------------------------------------- reshapes


def _groups(attr: Attribute | None) -> list[list[int]] | None:
    """The reassociation as lists of ints; None when malformed (the op's constraints say so)."""
    if not isinstance(attr, ArrayAttr):
        return None
    groups: list[list[int]] = []
    for group in attr.data:
        if not (isinstance(group, ArrayAttr) and all(isinstance(i, IntegerAttr) for i in group)):
            return None
        groups.append([i.value.data for i in group.data])  # type: ignore[attr-defined]
    return groups


def _reassociation(op: Operation, collapsed_t: Attribute, expanded_t: Attribute,
                   collapsing: bool) -> None:
    """The reassociation groups the expanded dimensions, in order, one non-empty group per
    collapsed dimension, and each collapsed size is the product of its group's sizes."""
    collapsed, expanded = ranked(collapsed_t), ranked(expanded_t)
    groups = _groups(op.properties.get("reassociation"))
    if collapsed is None or expanded is None or groups is None:
        return
    source_t, result_t = (expanded_t, collapsed_t) if collapsing else (collapsed_t, expanded_t)
    _same_elements(source_t, result_t)
    if len(collapsed) > len(expanded):
        verb = "collapses" if collapsing else "expands"
        raise VerifyException(f"{verb} {source_t} into {result_t}, which has "
                              f"{'a higher' if collapsing else 'a lower'} rank")
    if not collapsed:
        if groups or any(size != 1 for size in expanded):
            raise VerifyException(f"a rank-0 {collapsed_t} goes with an empty reassociation and "
                                  f"a {expanded_t} whose dimensions are all 1")
        return
    flat = [i for group in groups for i in group]
    if len(groups) != len(collapsed) or not all(groups) or flat != list(range(len(expanded))):
        raise VerifyException(
            f"reassociation {groups} must list the dimensions 0 to {len(expanded) - 1} of "
            f"{expanded_t} in order, in {len(collapsed)} non-empty group(s), one per "
            f"dimension of {collapsed_t}")
    c_role, e_role = ("result", "source") if collapsing else ("source", "result")
    for k, group in enumerate(groups):
        sizes = [expanded[i] for i in group]
        if any(is_dynamic(s) for s in sizes):
            if not is_dynamic(collapsed[k]):
                raise VerifyException(
                    f"{c_role} dimension {k} is {collapsed[k]}, but {e_role} dimensions {group} "
                    f"(sizes {show(sizes)}) include a dynamic one, so it must be dynamic")
        elif collapsed[k] != math.prod(sizes):
            got = "?" if is_dynamic(collapsed[k]) else collapsed[k]
            raise VerifyException(
                f"{c_role} dimension {k} is {got}, but {e_role} dimensions {group} of sizes "
                f"{' x '.join(map(str, sizes))} hold {math.prod(sizes)} element(s)")


def _collapse_shape(op: Operation) -> None:
    assert isinstance(op, tensor.CollapseShapeOp)
    _reassociation(op, op.result.type, op.src.type, collapsing=True)


def _expand_shape(op: Operation) -> None:
    assert isinstance(op, tensor.ExpandShapeOp)
    _reassociation(op, op.src.type, op.result.type, collapsing=False)
    result = ranked(op.result.type)
    output_shape = op.properties.get("static_output_shape")
    if result is None or not isinstance(output_shape, DenseArrayBase):
        return
    sizes = tuple(int(v) for v in output_shape.get_values())
    if len(sizes) == len(result) and any(
            not is_dynamic(r) and s != r for s, r in zip(sizes, result)):
        raise VerifyException(f"output_shape {show(sizes)} does not match the result type "
                              f"{op.result.type}")
    for size in op.dynamic_output_shape:
        value = constant_int(size)
        if value is not None and value < 0:
            raise VerifyException(f"output_shape has the negative size {value}")


def _reshape(op: Operation) -> None:
    """A constant shape operand gives the result's sizes; the result type must agree with it
    (weir sizes a dynamic result from the constant, a static one from the type)."""
    assert isinstance(op, tensor.ReshapeOp)
    owner, result = op.shape.owner, ranked(op.result.type)
    if not (isinstance(owner, arith.ConstantOp) and
            isinstance(owner.value, DenseIntOrFPElementsAttr)) or result is None:
        return
    sizes = tuple(int(v) for v in owner.value.get_values())
    if len(sizes) != len(result):
        return  # the reshape's own verifier compares the shape operand's length with the rank
    for d, (size, r) in enumerate(zip(sizes, result)):
        if size < 0 or (not is_dynamic(r) and size != r):
            raise VerifyException(f"the shape operand gives dimension {d} the size {size}, but "
                                  f"the result type is {op.result.type}")


def _cast(op: Operation) -> None:
    assert isinstance(op, tensor.CastOp)
    _same_elements(op.source.type, op.dest.type)


# --------------------------------------------------------------------------- single elements


def _indices(t: Attribute, indices: Sequence[SSAValue]) -> None:
    """One index per dimension; a constant index inside the dimension."""
    shape = ranked(t)
    if shape is None:
        return
    if len(indices) != len(shape):
        raise VerifyException(f"expects {len(shape)} index(es) for {t}, one per dimension, got "
                              f"{len(indices)}")
    for d, (index, size) in enumerate(zip(indices, shape)):
        value = constant_int(index)
        if value is not None and (value < 0 or (not is_dynamic(size) and value >= size)):
            raise VerifyException(f"index {value} is out of range for dimension {d} of {t}"
                                  + ("" if is_dynamic(size) else f" (size {size})"))


def _extract(op: Operation) -> None:
    assert isinstance(op, tensor.ExtractOp)
    _indices(op.tensor.type, op.indices)


def _insert(op: Operation) -> None:
    assert isinstance(op, tensor.InsertOp)
    _indices(op.dest.type, op.indices)


def _dim(op: Operation) -> None:
    assert isinstance(op, tensor.DimOp)
    shape, index = ranked(op.source.type), constant_int(op.index)
    if shape is not None and index is not None and not 0 <= index < len(shape):
        raise VerifyException(f"index {index} is out of range for {op.source.type}, whose "
                              f"dimensions are 0 to {len(shape) - 1}")


def _from_elements(op: Operation) -> None:
    assert isinstance(op, tensor.FromElementsOp)
    shape = ranked(op.result.type)
    if shape is None:
        return
    if any(is_dynamic(s) for s in shape):
        raise VerifyException(f"builds {op.result.type}, which must have a static shape")
    if len(op.elements) != math.prod(shape):
        raise VerifyException(f"builds {op.result.type} of {math.prod(shape)} element(s) from "
                              f"{len(op.elements)}")


def _dynamic_sizes(t: Attribute, sizes: Sequence[SSAValue]) -> None:
    """One size per '?' of `t`, in order; a constant one is not negative."""
    shape = ranked(t)
    if shape is None:
        return
    dynamic = [d for d, size in enumerate(shape) if is_dynamic(size)]
    if len(sizes) != len(dynamic):
        raise VerifyException(f"expects {len(dynamic)} dynamic size(s) for {t}, one per '?', "
                              f"got {len(sizes)}")
    for d, size in zip(dynamic, sizes):
        value = constant_int(size)
        if value is not None and value < 0:
            raise VerifyException(f"the size {value} given for dimension {d} of {t} is negative")


def _empty(op: Operation) -> None:
    assert isinstance(op, tensor.EmptyOp)
    _dynamic_sizes(op.tensor.type, op.dynamic_sizes)


def _splat(op: Operation) -> None:
    assert isinstance(op, tensor.SplatOp)
    _dynamic_sizes(op.result.type, op.dynamicSizes)


# ------------------------------------------------------------------------ slices, pad, concat


def _fits(sizes: Sequence[int], shape: Sequence[int]) -> bool:
    """Whether `shape` is `sizes` with some sizes of 1 left out (a rank-reducing slice); a
    dynamic size on either side matches any size."""
    reached = {0}  # how many dimensions of `shape` the sizes so far can stand for
    for size in sizes:
        reached = {j for j in reached if size == 1} | {
            j + 1 for j in reached
            if j < len(shape) and (is_dynamic(size) or is_dynamic(shape[j]) or size == shape[j])}
    return len(shape) in reached


def _static(op: Operation, name: str) -> tuple[int, ...] | None:
    attr = op.properties.get(name)
    return tuple(int(v) for v in attr.get_values()) if isinstance(attr, DenseArrayBase) else None


def _slice(op: Operation, full_t: Attribute, part_t: Attribute, part_role: str) -> None:
    """The window (offsets, sizes, strides) has one entry per dimension of the full tensor, its
    sizes give the part's shape (less unit dimensions), and a static window stays inside."""
    full, part = ranked(full_t), ranked(part_t)
    offsets, sizes, strides = (_static(op, f"static_{n}") for n in ("offsets", "sizes", "strides"))
    if full is None or part is None or offsets is None or sizes is None or strides is None:
        return
    if part_role == "result":
        _same_elements(full_t, part_t)
    else:
        _same_elements(part_t, full_t, "destination")
    if not len(offsets) == len(sizes) == len(strides) == len(full):
        raise VerifyException(f"expects {len(full)} offsets, sizes and strides for {full_t}, one "
                              f"per dimension, got {len(offsets)}, {len(sizes)} and "
                              f"{len(strides)}")
    if not _fits(sizes, part):
        raise VerifyException(f"the {part_role} type {part_t} does not match the slice sizes "
                              f"{show(sizes)} (a slice may only leave out sizes of 1)")
    for d, (offset, size, stride, extent) in enumerate(zip(offsets, sizes, strides, full)):
        for what, value in (("offset", offset), ("size", size)):
            if not is_dynamic(value) and value < 0:
                raise VerifyException(f"{what} {value} of dimension {d} is negative")
        if any(is_dynamic(v) for v in (offset, size, stride, extent)) or stride < 1:
            continue
        last = offset + (size - 1) * stride if size else offset - 1
        if last >= extent:
            raise VerifyException(
                f"the slice of dimension {d} is out of bounds: offset {offset}, {size} "
                f"element(s) with stride {stride} reach index {last}, past the last index "
                f"{extent - 1} of {full_t}")


def _extract_slice(op: Operation) -> None:
    assert isinstance(op, tensor.ExtractSliceOp)
    _slice(op, op.source.type, op.result.type, "result")


def _insert_slice(op: Operation) -> None:
    assert isinstance(op, tensor.InsertSliceOp)
    _slice(op, op.dest.type, op.source.type, "source")


def _pad(op: Operation) -> None:
    """Each result size is the source's plus both paddings; the body takes one index per
    dimension and yields the padding value, of the element type."""
    assert isinstance(op, tensor.PadOp)
    source, result = ranked(op.source.type), ranked(op.result.type)
    low, high = _static(op, "static_low"), _static(op, "static_high")
    if source is None or result is None or low is None or high is None:
        return
    _same_elements(op.source.type, op.result.type)
    if not len(low) == len(high) == len(source) == len(result):
        return  # xDSL's verifier names the counts that differ
    for d, (s, lo, hi, r) in enumerate(zip(source, low, high, result)):
        for side, amount in (("low", lo), ("high", hi)):
            if not is_dynamic(amount) and amount < 0:
                raise VerifyException(f"{side} padding {amount} of dimension {d} is negative")
        if not any(is_dynamic(v) for v in (s, lo, hi, r)) and r != s + lo + hi:
            raise VerifyException(f"result dimension {d} is {r}, but the source's {s} padded by "
                                  f"{lo} + {hi} is {s + lo + hi}")
    block = op.region.blocks[0] if op.region.blocks else None
    if block is None:
        return
    for i, arg in enumerate(block.args):
        if not isinstance(arg.type, IndexType):
            raise VerifyException(f"the body's argument #{i} has type {arg.type}; each argument "
                                  "is the index of a dimension, of type index")
    last = block.last_op
    want = element(op.result.type)
    if isinstance(last, tensor.YieldOp) and [v.type for v in last.operands] != [want]:
        got = ", ".join(str(v.type) for v in last.operands) or "nothing"
        raise VerifyException(f"the body must yield one {want}, the element type of "
                              f"{op.result.type}; it yields {got}")


def _concat(op: Operation) -> None:
    assert isinstance(op, tensor.ConcatOp)
    dim = op.dim.value.data
    shape = ranked(op.result.type)
    if dim < 0 and shape is not None:
        raise VerifyException(f"dim({dim}) is not a dimension of {op.result.type}: it must be "
                              f"0 to {len(shape) - 1}")


TENSOR_CHECKS: dict[str, Callable[[Operation], None]] = {
    "tensor.collapse_shape": _collapse_shape,
    "tensor.expand_shape": _expand_shape,
    "tensor.reshape": _reshape,
    "tensor.cast": _cast,
    "tensor.extract": _extract,
    "tensor.insert": _insert,
    "tensor.dim": _dim,
    "tensor.from_elements": _from_elements,
    "tensor.empty": _empty,
    "tensor.splat": _splat,
    "tensor.extract_slice": _extract_slice,
    "tensor.insert_slice": _insert_slice,
    "tensor.pad": _pad,
    "tensor.concat": _concat,
}
