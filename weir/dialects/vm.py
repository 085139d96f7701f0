"""The `vm` dialect: the host program as VM functions over untyped registers that call imports
(the runtime's `hal` module, other modules) by name. It maps one-to-one onto the instruction set
in `weir/format/vm_isa.py`, so serialising it is a walk, not a translation."""

from __future__ import annotations

from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FunctionType,
    StringAttr,
    SymbolRefAttr,
)
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute, TypeAttribute
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    successor_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import IsolatedFromAbove, IsTerminator, NoTerminator, SymbolOpInterface
from xdsl.utils.exceptions import VerifyException

from weir.format.kernel_description import DTYPES, HOST_SCALAR_OPS
from weir.format.vm_isa import BINARY_OPS, UNARY_OPS


@irdl_attr_definition
class TupleType(ParametrizedAttribute, TypeAttribute):
    """Several registers passed to a call as one argument (shapes, bindings, fence lists)."""

    name = "vm.tuple"


@irdl_attr_definition
class StrType(ParametrizedAttribute, TypeAttribute):
    """A constant string register: dtype names, argument names, failure messages."""

    name = "vm.str"


@irdl_op_definition
class ModuleOp(IRDLOperation):
    name = "vm.module"
    sym_name = prop_def(StringAttr)
    dependencies = prop_def(ArrayAttr[StringAttr])
    devices = prop_def(ArrayAttr[StringAttr])
    body = region_def("single_block")
    traits = traits_def(SymbolOpInterface(), NoTerminator(), IsolatedFromAbove())


@irdl_op_definition
class FuncOp(IRDLOperation):
    name = "vm.func"
    sym_name = prop_def(StringAttr)
    function_type = prop_def(FunctionType)
    body = region_def()
    traits = traits_def(SymbolOpInterface(), IsolatedFromAbove())


@irdl_op_definition
class ImportOp(IRDLOperation):
    """`cconv` is IREE's calling convention string (`0rr_r`); strings and tuples, as the `hal`
    functions take them, are references (`r`)."""

    name = "vm.import"
    sym_name = prop_def(StringAttr)
    cconv = prop_def(StringAttr)
    model = prop_def(StringAttr)
    traits = traits_def(SymbolOpInterface())


@irdl_op_definition
class ExportOp(IRDLOperation):
    name = "vm.export"
    function_ref = prop_def(SymbolRefAttr)
    export_name = prop_def(StringAttr)
    model = prop_def(StringAttr)
    reflection = prop_def(DictionaryAttr)


@irdl_op_definition
class GlobalOp(IRDLOperation):
    name = "vm.global"
    sym_name = prop_def(StringAttr)
    type = prop_def(Attribute)
    traits = traits_def(SymbolOpInterface())


@irdl_op_definition
class GlobalLoadOp(IRDLOperation):
    name = "vm.global.load"
    global_ = prop_def(SymbolRefAttr, prop_name="global")
    result = result_def()


@irdl_op_definition
class GlobalStoreOp(IRDLOperation):
    name = "vm.global.store"
    global_ = prop_def(SymbolRefAttr, prop_name="global")
    value = operand_def()


@irdl_op_definition
class RodataOp(IRDLOperation):
    """Read-only bytes of the module file; `data` is a key into the compilation's blob store."""

    name = "vm.rodata"
    sym_name = prop_def(StringAttr)
    data = prop_def(StringAttr)
    traits = traits_def(SymbolOpInterface())


@irdl_op_definition
class RodataLoadOp(IRDLOperation):
    name = "vm.const.ref.rodata"
    rodata = prop_def(SymbolRefAttr)
    result = result_def()


@irdl_op_definition
class ConstOp(IRDLOperation):
    """An integer, float or string constant; no `value` means a null reference."""

    name = "vm.const"
    value = opt_prop_def(Attribute)
    result = result_def()


@irdl_op_definition
class TupleOp(IRDLOperation):
    name = "vm.tuple"
    elements = var_operand_def()
    result = result_def(TupleType)


@irdl_op_definition
class CallOp(IRDLOperation):
    name = "vm.call"
    callee = prop_def(SymbolRefAttr)
    arguments = var_operand_def()
    results_ = var_result_def()


@irdl_op_definition
class BinaryOp(IRDLOperation):
    name = "vm.binary"
    op = prop_def(StringAttr)
    lhs = operand_def()
    rhs = operand_def()
    result = result_def()

    def verify_(self) -> None:
        if self.op.data not in BINARY_OPS:
            raise VerifyException(f"vm.binary: unknown op '{self.op.data}'")


@irdl_op_definition
class UnaryOp(IRDLOperation):
    name = "vm.unary"
    op = prop_def(StringAttr)
    source = operand_def()
    result = result_def()

    def verify_(self) -> None:
        if self.op.data not in UNARY_OPS:
            raise VerifyException(f"vm.unary: unknown op '{self.op.data}'")


@irdl_op_definition
class ArithOp(IRDLOperation):
    """A scalar op with MLIR semantics in an element type (the `Arith` instruction):
    `vm.arith "addi" i8 (%a, %b : i8)` wraps at 8 bits; `predicate` is cmpi/cmpf's."""

    name = "vm.arith"
    op = prop_def(StringAttr)
    dtype = prop_def(StringAttr)
    arg_dtype = prop_def(StringAttr)
    predicate = opt_prop_def(StringAttr)
    arguments = var_operand_def()
    result = result_def()

    def verify_(self) -> None:
        if self.op.data not in HOST_SCALAR_OPS:
            raise VerifyException(f"vm.arith: unknown op '{self.op.data}'")
        for t in (self.dtype.data, self.arg_dtype.data):
            if t not in DTYPES:
                raise VerifyException(f"vm.arith: unknown element type '{t}'")


@irdl_op_definition
class SelectOp(IRDLOperation):
    name = "vm.select"
    condition = operand_def()
    true_value = operand_def()
    false_value = operand_def()
    result = result_def()


@irdl_op_definition
class BranchOp(IRDLOperation):
    name = "vm.br"
    arguments = var_operand_def()
    successor = successor_def()
    traits = traits_def(IsTerminator())


@irdl_op_definition
class CondBranchOp(IRDLOperation):
    name = "vm.cond_br"
    condition = operand_def()
    true_arguments = var_operand_def()
    false_arguments = var_operand_def()
    true_successor = successor_def()
    false_successor = successor_def()
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(IsTerminator())


@irdl_op_definition
class ReturnOp(IRDLOperation):
    name = "vm.return"
    values = var_operand_def()
    traits = traits_def(IsTerminator())


@irdl_op_definition
class FailOp(IRDLOperation):
    """Ends the invocation with a runtime error carrying `message` (a `vm.const` string), then
    the run-time `values` it names (`: 5 vs 4`)."""

    name = "vm.fail"
    message = operand_def(StrType)
    values = var_operand_def()
    traits = traits_def(IsTerminator())


VM = Dialect(
    "vm",
    [
        ModuleOp, FuncOp, ImportOp, ExportOp, GlobalOp, GlobalLoadOp, GlobalStoreOp, RodataOp,
        RodataLoadOp, ConstOp, TupleOp, CallOp, BinaryOp, UnaryOp, ArithOp, SelectOp, BranchOp,
        CondBranchOp, ReturnOp, FailOp,
    ],
    [TupleType, StrType],
)
DIALECT = VM
