"""Host scalar math for `convert-to-vm`: every arith/math op on a scalar becomes one `vm.arith`
naming the op and its element type, which the runtime computes with the reference kernels' own
semantics (integers wrap at their width, f16/bf16/f32 round to their precision). Constants are
emitted in the registers' canonical form (ints sign-extended from their width, i1 as bool, floats
rounded to their type), so no instruction ever meets a value its type cannot hold."""

from __future__ import annotations

import numpy as np

from weir.compiler.input.supported_ops import ELEMENTWISE_OPS
from weir.compiler.targets.element_types import dtype_name
from weir.compiler.codegen.translate import CMPF_PREDICATES, CMPI_PREDICATES
from weir.dialects import vm
from weir.format.element_types import BY_NAME
from weir.ir.diagnostics import error_at
from weir.ir.upstream import (
    Attribute,
    Builder,
    FloatAttr,
    Float64Type,
    IntegerAttr,
    IntegerType,
    Operation,
    SSAValue,
    StringAttr,
    TensorType,
)


def is_host_scalar_op(op: Operation) -> bool:
    return op.name in ELEMENTWISE_OPS and not any(
        isinstance(v.type, TensorType) for v in (*op.operands, *op.results))


def lower_scalar_op(op: Operation, b: Builder) -> SSAValue:
    """`op` (an arith/math op on scalars) as one `vm.arith`."""
    name = ELEMENTWISE_OPS[op.name]
    operands = list(op.operands)
    result = op.results[0]
    # select's type is that of the values it chooses between; its condition is i1.
    typed_operand = operands[1] if name == "select" else operands[0]
    props: dict[str, Attribute] = {
        "op": StringAttr(name),
        "dtype": StringAttr(dtype_name(result.type, op)),
        "arg_dtype": StringAttr(dtype_name(typed_operand.type, op)),
    }
    if name in ("cmpi", "cmpf"):
        table = CMPI_PREDICATES if name == "cmpi" else CMPF_PREDICATES
        predicate = op.predicate.value.data  # type: ignore[attr-defined]
        props["predicate"] = StringAttr(table[predicate])
    return b.insert(vm.ArithOp.build(operands=[operands], result_types=[result.type],
                                     properties=props)).result


def canonical_constant(value: Attribute, t: Attribute, where: Operation) -> Attribute:
    """The attribute of a `vm.const` holding `value` of scalar type `t` in canonical form."""
    dtype = BY_NAME[dtype_name(t, where)]
    if isinstance(value, IntegerAttr):
        if dtype.name == "i1":
            return IntegerAttr(int(value.value.data) & 1, IntegerType(1))
        low = int(value.value.data) & ((1 << dtype.bits) - 1)
        signed = low - (1 << dtype.bits) if low >> (dtype.bits - 1) else low
        return IntegerAttr(signed, IntegerType(64))
    if isinstance(value, FloatAttr):
        rounded = np.asarray(float(value.value.data), np.float64).astype(dtype.dtype)
        return FloatAttr(float(rounded.item()), Float64Type())
    raise error_at(where, "only scalar constants can live on the host")
