"""The bodies of linalg's named ops, built the way MLIR builds them: operands converted to the
accumulator's type, then a multiply-add (contractions, convolutions) or a combination (pooling).
Shared by the contractions of `linalg_ext` and the windows of `linalg_windows`, and by the
passes that write named ops as generics."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import AnyFloat, IntegerType, ShapedType
from xdsl.dialects.linalg import ops as upstream
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import VerifyException


def cast_to(b: Builder, value: SSAValue, to: Attribute) -> SSAValue:
    """`value` converted to type `to` as MLIR's named ops do: floats extended or truncated,
    integers sign-extended or truncated, integers converted to floats as signed."""
    src = value.type
    if src == to:
        return value
    if isinstance(src, AnyFloat) and isinstance(to, AnyFloat):
        wider = to.bitwidth > src.bitwidth
        return b.insert(arith.ExtFOp(value, to) if wider else arith.TruncFOp(value, to)).result
    if isinstance(src, IntegerType) and isinstance(to, IntegerType):
        wider = to.width.data > src.width.data
        return b.insert(arith.ExtSIOp(value, to) if wider else arith.TruncIOp(value, to)).result
    if isinstance(src, IntegerType) and isinstance(to, AnyFloat):
        return b.insert(arith.SIToFPOp(value, to)).result
    if isinstance(src, AnyFloat) and isinstance(to, IntegerType):
        return b.insert(arith.FPToSIOp(value, to)).result
    raise VerifyException(f"cannot convert {src} to {to}")


def element_types(values: Sequence[SSAValue]) -> list[Attribute]:
    return [v.type.get_element_type() if isinstance(v.type, ShapedType) else v.type
            for v in values]


BodyFill = Callable[[Builder, tuple[BlockArgument, ...]], None]


def body_region(arg_types: Sequence[Attribute], fill: BodyFill) -> Region:
    """A one-block region with `arg_types` arguments whose ops `fill(builder, args)` inserts."""
    block = Block(arg_types=arg_types)
    fill(Builder(InsertPoint.at_end(block)), block.args)
    return Region(block)


def multiply_add(inputs: Sequence[SSAValue], outputs: Sequence[SSAValue]) -> Region:
    """acc + lhs * rhs in the accumulator's type; an empty body when the operand count is wrong
    (the verifier then says so)."""
    types = element_types([*inputs, *outputs])

    def fill(b: Builder, args: tuple[BlockArgument, ...]) -> None:
        if len(inputs) != 2 or len(outputs) != 1:
            b.insert(upstream.YieldOp())
            return
        acc_type = types[-1]
        lhs, rhs = (cast_to(b, a, acc_type) for a in args[:2])
        if isinstance(acc_type, AnyFloat):
            product = b.insert(arith.MulfOp(lhs, rhs)).result
            total = b.insert(arith.AddfOp(args[2], product)).result
        else:
            product = b.insert(arith.MuliOp(lhs, rhs)).result
            total = b.insert(arith.AddiOp(args[2], product)).result
        b.insert(upstream.YieldOp(total))
    return body_region(types, fill)


def combine(inputs: Sequence[SSAValue], outputs: Sequence[SSAValue], kind: str) -> Region:
    """A pooling body: acc combined (`max`, `min` or `sum`) with the input element; the window
    operand's element is unused. Integers compare signed, as MLIR's signless pooling ops do."""
    types = element_types([*inputs, *outputs])

    def fill(b: Builder, args: tuple[BlockArgument, ...]) -> None:
        if len(inputs) != 2 or len(outputs) != 1:
            b.insert(upstream.YieldOp())
            return
        acc_type = types[-1]
        x = cast_to(b, args[0], acc_type)
        is_float = isinstance(acc_type, AnyFloat)
        if kind == "max":
            op: Operation = arith.MaximumfOp(args[2], x) if is_float else arith.MaxSIOp(args[2], x)
        elif kind == "min":
            op = arith.MinimumfOp(args[2], x) if is_float else arith.MinSIOp(args[2], x)
        else:
            op = arith.AddfOp(args[2], x) if is_float else arith.AddiOp(args[2], x)
        b.insert(upstream.YieldOp(b.insert(op).results[0]))
    return body_region(types, fill)
