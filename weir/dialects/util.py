"""The `util` dialect: what IREE's util dialect offers input programs. For now that is
`util.unfoldable_constant`, a constant the compiler must treat as a value computed at run time,
so a test of an op really runs the op instead of checking a result the compiler folded:

    %x = util.unfoldable_constant dense<[1.0, -2.0]> : tensor<2xf32>
    %n = util.unfoldable_constant 7 : i32

The input phase (`lower-unfoldable-constants`) turns a tensor one into a constant that lives in
the module's rodata, which no later pass clones or folds into a dispatch.

`util.optimization_barrier` hides where values come from, so the ops reading its results are
compiled (and fused) as if their operands were computed at run time:

    %a, %b = util.optimization_barrier %x, %n : tensor<4xf32>, i32

Globals are declared as IREE spells them, so that the input phase can reject the programs whose
async regions share one without an explicit dependency (`verify-async-regions`); weir does not
compile globals yet (`check-supported-ops` rejects them):

    util.global private mutable @counter : tensor<4xf32>
    util.global private @table = dense<1.0> : tensor<4xf32>
    %v = util.global.load @counter : tensor<4xf32>
    util.global.store %v, @counter : tensor<4xf32>"""

from __future__ import annotations

from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    UnitAttr,
)
from xdsl.ir import Attribute, Dialect, Operation
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import SymbolOpInterface, SymbolTable
from xdsl.utils.exceptions import VerifyException


def value_type(value: Attribute) -> Attribute | None:
    """The type a constant attribute carries, or None for attributes that are not constants."""
    if isinstance(value, DenseIntOrFPElementsAttr):
        return value.get_type()
    if isinstance(value, DenseResourceAttr | IntegerAttr | FloatAttr):
        return value.type
    return None


@irdl_op_definition
class UnfoldableConstantOp(IRDLOperation):
    """`util.unfoldable_constant [attr-dict] <typed value>`: the value's type is the result's."""

    name = "util.unfoldable_constant"
    value = prop_def(Attribute)
    result = result_def()

    @classmethod
    def parse(cls, parser: Parser) -> UnfoldableConstantOp:
        attrs = parser.parse_optional_attr_dict()
        start = parser.pos
        value = parser.parse_attribute()
        t = value_type(value)
        if t is None:
            parser.raise_error("util.unfoldable_constant takes a typed constant (dense<...> : "
                               f"tensor<...>, 5 : i32, 2.5 : f32), got {value}", start, parser.pos)
        op = cls.build(result_types=[t], properties={"value": value})
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_op_attributes(self.attributes)
        printer.print_string(" ")
        printer.print_attribute(self.value)

    def verify_(self) -> None:
        t = value_type(self.value)
        if t is None:
            raise VerifyException(f"value must be a typed constant, got {self.value}")
        if t != self.result.type:
            raise VerifyException(f"the value's type {t} differs from the result type "
                                  f"{self.result.type}")
        if isinstance(t, TensorType) and not t.has_static_shape():
            raise VerifyException(f"the constant's type {t} must have a static shape")


@irdl_op_definition
class OptimizationBarrierOp(IRDLOperation):
    """`util.optimization_barrier [attr-dict] [%a, %b : type_a, type_b]`: returns its operands
    unchanged. What reads a result cannot see where it came from, so no constant is folded and
    no producer is fused across it; the flow phase keeps it as a host op (dispatch formation
    stops at it) and `drop-optimization-barriers` then makes each result an alias of its
    operand."""

    name = "util.optimization_barrier"
    inputs = var_operand_def()
    outputs = var_result_def()

    @classmethod
    def parse(cls, parser: Parser) -> OptimizationBarrierOp:
        attrs = parser.parse_optional_attr_dict()
        unresolved = parser.parse_optional_undelimited_comma_separated_list(
            parser.parse_optional_unresolved_operand, parser.parse_unresolved_operand) or []
        operands = []
        if unresolved:
            parser.parse_punctuation(":")
            start = parser.pos
            types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
            if len(types) != len(unresolved):
                parser.raise_error(f"util.optimization_barrier has {len(unresolved)} operand(s) "
                                   f"but {len(types)} type(s)", start, parser.pos)
            operands = [parser.resolve_operand(u, t) for u, t in zip(unresolved, types)]
        op = cls.build(operands=[operands], result_types=[[v.type for v in operands]])
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_op_attributes(self.attributes)
        if self.inputs:
            printer.print_string(" ")
            printer.print_list(self.inputs, printer.print_operand)
            printer.print_string(" : ")
            printer.print_list([v.type for v in self.inputs], printer.print_attribute)

    def verify_(self) -> None:
        ins = [v.type for v in self.inputs]
        outs = [r.type for r in self.outputs]
        if ins != outs:
            raise VerifyException(f"results ({', '.join(map(str, outs))}) must have the types "
                                  f"of the operands ({', '.join(map(str, ins))})")


_VISIBILITIES = ("public", "private", "nested")


@irdl_op_definition
class GlobalOp(IRDLOperation):
    """`util.global [visibility] [mutable] @name [attr-dict] (: type | = value [: type])`: the
    type is the value's own when it has one (`= dense<1.0> : tensor<4xf32>`)."""

    name = "util.global"
    sym_name = prop_def(StringAttr)
    sym_visibility = opt_prop_def(StringAttr)
    type = prop_def(Attribute)
    initial_value = opt_prop_def(Attribute)
    is_mutable = opt_prop_def(UnitAttr)
    traits = traits_def(SymbolOpInterface())

    @classmethod
    def parse(cls, parser: Parser) -> GlobalOp:
        properties: dict[str, Attribute] = {}
        for visibility in _VISIBILITIES:
            if parser.parse_optional_keyword(visibility) is not None:
                properties["sym_visibility"] = StringAttr(visibility)
                break
        if parser.parse_optional_keyword("mutable") is not None:
            properties["is_mutable"] = UnitAttr()
        properties["sym_name"] = parser.parse_symbol_name()
        attrs = parser.parse_optional_attr_dict()
        if parser.parse_optional_punctuation("=") is not None:
            start = parser.pos
            value = parser.parse_attribute()
            properties["initial_value"] = value
            t = parser.parse_type() if parser.parse_optional_punctuation(":") is not None \
                else value_type(value)
            if t is None:
                parser.raise_error(f"util.global's initial value {value} has no type: write "
                                   "it as `= value : type`", start, parser.pos)
        else:
            parser.parse_punctuation(":")
            t = parser.parse_type()
        properties["type"] = t
        op = cls.build(properties=properties)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        if self.sym_visibility is not None:
            printer.print_string(f" {self.sym_visibility.data}")
        if self.is_mutable is not None:
            printer.print_string(" mutable")
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        printer.print_op_attributes(self.attributes)
        if self.initial_value is None:
            printer.print_string(" : ")
            printer.print_attribute(self.type)
            return
        printer.print_string(" = ")
        printer.print_attribute(self.initial_value)
        if value_type(self.initial_value) != self.type:
            printer.print_string(" : ")
            printer.print_attribute(self.type)

    def verify_(self) -> None:
        if self.sym_visibility is not None and self.sym_visibility.data not in _VISIBILITIES:
            raise VerifyException(f"visibility must be one of {', '.join(_VISIBILITIES)}, got "
                                  f"'{self.sym_visibility.data}'")
        if self.initial_value is not None:
            t = value_type(self.initial_value)
            if t is not None and t != self.type:
                raise VerifyException(f"@{self.sym_name.data} is {self.type} but its initial "
                                      f"value is {t}")


def _referenced_global(op: Operation, ref: SymbolRefAttr, t: Attribute) -> GlobalOp:
    """The global `ref` names; it must exist and have the type the access is written with."""
    try:
        found = SymbolTable.lookup_symbol(op, ref)
    except ValueError:  # not inside a module (yet): nothing to look the name up in
        found = None
    if found is None:
        raise VerifyException(f"@{ref.string_value()} is not defined (expected a util.global)")
    if not isinstance(found, GlobalOp):
        raise VerifyException(f"@{ref.string_value()} is a '{found.name}', not a util.global")
    if found.type != t:
        raise VerifyException(f"@{ref.string_value()} is {found.type}, not {t}")
    return found


@irdl_op_definition
class GlobalLoadOp(IRDLOperation):
    """`util.global.load @name [attr-dict] : type`"""

    name = "util.global.load"
    global_ = prop_def(SymbolRefAttr, prop_name="global")
    result = result_def()

    @classmethod
    def parse(cls, parser: Parser) -> GlobalLoadOp:
        ref = SymbolRefAttr(parser.parse_symbol_name())
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        op = cls.build(result_types=[parser.parse_type()], properties={"global": ref})
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_attribute(self.global_)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)

    def verify_(self) -> None:
        _referenced_global(self, self.global_, self.result.type)


@irdl_op_definition
class GlobalStoreOp(IRDLOperation):
    """`util.global.store %value, @name [attr-dict] : type`"""

    name = "util.global.store"
    value = operand_def()
    global_ = prop_def(SymbolRefAttr, prop_name="global")

    @classmethod
    def parse(cls, parser: Parser) -> GlobalStoreOp:
        unresolved = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        ref = SymbolRefAttr(parser.parse_symbol_name())
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        value = parser.resolve_operand(unresolved, parser.parse_type())
        op = cls.build(operands=[value], properties={"global": ref})
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.value)
        printer.print_string(", ")
        printer.print_attribute(self.global_)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.value.type)

    def verify_(self) -> None:
        found = _referenced_global(self, self.global_, self.value.type)
        if found.is_mutable is None:
            raise VerifyException(f"@{self.global_.string_value()} is not mutable: declare it "
                                  "`util.global mutable` to store to it")


@irdl_op_definition
class AssertEqOp(IRDLOperation):
    """`"util.assert_eq"(%lhs, %rhs) <{message = "..."}> : (index, index) -> ()`: fails the
    invocation with `message: <lhs> vs <rhs>` unless the two host integers are equal. The input
    phase (`insert-dynamic-size-checks`) emits one per size equality a program implies but the
    verifier cannot see; the vm phase lowers it to a branch to `vm.fail`."""

    name = "util.assert_eq"
    lhs = operand_def(IntegerType | IndexType)
    rhs = operand_def(IntegerType | IndexType)
    message = prop_def(StringAttr)

    def verify_(self) -> None:
        if self.lhs.type != self.rhs.type:
            raise VerifyException(f"operands of different types: {self.lhs.type} and "
                                  f"{self.rhs.type}")


UTIL = Dialect("util", [UnfoldableConstantOp, OptimizationBarrierOp, GlobalOp, GlobalLoadOp, GlobalStoreOp,
                        AssertEqOp], [])
DIALECT = UTIL
