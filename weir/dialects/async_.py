"""The `async` dialect (MLIR's, which xDSL lacks): explicit concurrency in the user's program.

    %t, %r = async.execute [%dep] (%v as %u: !async.value<tensor<4xf32>>)
               -> !async.value<tensor<4xf32>> { ... async.yield %x : tensor<4xf32> }
    %x = async.await %r : !async.value<tensor<4xf32>>

A region may run concurrently with what follows it and starts only when its token dependencies
and value operands are ready; the stream phase gives it exactly that on weir's own machinery
(each region's work waits on the timepoints of its dependencies, its token is the timepoint at
which its work is done). An optional `stream.affinity = #hal.device.promise<@dev>` attribute
places a region on one device. The module is spelled `async_` because `async` is a keyword."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Attribute, Block, Dialect, ParametrizedAttribute, Region, SSAValue, TypeAttribute
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_result_def,
    param_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import HasParent, IsTerminator
from xdsl.utils.exceptions import VerifyException

# The attribute that places a region on a device (as IREE spells op affinities).
AFFINITY_ATTR = "stream.affinity"


@irdl_attr_definition
class TokenType(ParametrizedAttribute, TypeAttribute):
    """Ready when the region that returned it has run to its end."""

    name = "async.token"


@irdl_attr_definition
class ValueType(ParametrizedAttribute, TypeAttribute):
    """A value of `value_type` that is ready when the region that yields it has run."""

    name = "async.value"
    value_type: Attribute = param_def(Attribute)

    def __init__(self, value_type: Attribute):
        super().__init__(value_type)

    @classmethod
    def parse_parameters(cls, parser) -> Sequence[Attribute]:  # type: ignore[no-untyped-def]
        parser.parse_punctuation("<")
        inner = parser.parse_type()
        parser.parse_punctuation(">")
        return (inner,)

    def print_parameters(self, printer) -> None:  # type: ignore[no-untyped-def]
        printer.print_string("<")
        printer.print_attribute(self.value_type)
        printer.print_string(">")


def is_async_type(t: Attribute) -> bool:
    return isinstance(t, TokenType | ValueType)


@irdl_op_definition
class ExecuteOp(IRDLOperation):
    name = "async.execute"
    dependencies = var_operand_def(TokenType)
    body_operands = var_operand_def(ValueType)
    token = result_def(TokenType)
    values = var_result_def(ValueType)
    body = region_def("single_block")
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def verify_(self) -> None:
        args = self.body.block.args
        if len(args) != len(self.body_operands):
            raise VerifyException(f"async.execute has {len(self.body_operands)} value operand(s) "
                                  f"but its region takes {len(args)} argument(s)")
        for i, (operand, arg) in enumerate(zip(self.body_operands, args)):
            t = operand.type
            assert isinstance(t, ValueType)
            if arg.type != t.value_type:
                raise VerifyException(f"async.execute operand {i} is {t}, so its region "
                                      f"argument must be {t.value_type}, not {arg.type}")
        if not isinstance(self.body.block.last_op, YieldOp):
            raise VerifyException("async.execute region must end with async.yield")

    @classmethod
    def parse(cls, parser: Parser) -> ExecuteOp:
        deps: list[SSAValue] = []
        if parser.parse_optional_punctuation("[") is not None:
            if parser.parse_optional_punctuation("]") is None:
                deps = parser.parse_comma_separated_list(
                    parser.Delimiter.NONE, lambda: parser.parse_operand(TokenType()))
                parser.parse_punctuation("]")
        operands: list[SSAValue] = []
        arguments: list[Parser.Argument] = []
        if parser.parse_optional_punctuation("(") is not None:
            def operand() -> None:
                operand_name = parser.parse_unresolved_operand()
                parser.parse_keyword("as")
                unresolved = parser.parse_argument(expect_type=False)
                parser.parse_punctuation(":")
                t = parser.parse_type()
                value = parser.resolve_operand(operand_name, t)
                if not isinstance(t, ValueType):
                    parser.raise_error(f"async.execute value operands must be !async.value<...>, "
                                       f"got {t}")
                operands.append(value)
                arguments.append(unresolved.resolve(t.value_type))
            if parser.parse_optional_punctuation(")") is None:
                parser.parse_comma_separated_list(parser.Delimiter.NONE, operand)
                parser.parse_punctuation(")")
        result_types: list[Attribute] = []
        if parser.parse_optional_punctuation("->") is not None:
            if parser.parse_optional_punctuation("(") is not None:
                result_types = parser.parse_comma_separated_list(parser.Delimiter.NONE,
                                                                 parser.parse_type)
                parser.parse_punctuation(")")
            else:
                result_types = [parser.parse_type()]
        attrs = parser.parse_optional_attr_dict_with_keyword()
        region = parser.parse_region(arguments)
        op = cls.build(operands=[deps, operands], result_types=[TokenType(), result_types],
                       regions=[region])
        if attrs is not None:
            op.attributes.update(attrs.data)
        return op

    def print(self, printer: Printer) -> None:
        if self.dependencies:
            printer.print_string(" [")
            printer.print_list(self.dependencies, printer.print_operand)
            printer.print_string("]")
        if self.body_operands:
            printer.print_string(" (")
            def operand(pair: tuple[SSAValue, SSAValue]) -> None:
                printer.print_operand(pair[0])
                printer.print_string(" as ")
                printer.print_operand(pair[1])
                printer.print_string(": ")
                printer.print_attribute(pair[0].type)
            printer.print_list(zip(self.body_operands, self.body.block.args), operand)
            printer.print_string(")")
        if self.values:
            printer.print_string(" -> (")
            printer.print_list((r.type for r in self.values), printer.print_attribute)
            printer.print_string(")")
        if self.attributes:
            printer.print_string(" attributes")
            printer.print_op_attributes(self.attributes)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False)

    @staticmethod
    def make(dependencies: Sequence[SSAValue], operands: Sequence[SSAValue],
             result_types: Sequence[Attribute], body: Block) -> ExecuteOp:
        return ExecuteOp.build(operands=[list(dependencies), list(operands)],
                               result_types=[TokenType(), [ValueType(t) for t in result_types]],
                               regions=[Region(body)])


@irdl_op_definition
class AwaitOp(IRDLOperation):
    """Blocks (the program, not necessarily the host) until the token or value is ready; a
    value's await gives the value."""

    name = "async.await"
    operand = operand_def(TokenType | ValueType)
    result = opt_result_def()

    def verify_(self) -> None:
        t = self.operand.type
        if isinstance(t, TokenType):
            if self.result is not None:
                raise VerifyException("async.await of a token has no result")
        elif self.result is None or self.result.type != t.value_type:  # type: ignore[union-attr]
            raise VerifyException(f"async.await of {t} must give {t.value_type}")  # type: ignore[union-attr]

    @classmethod
    def parse(cls, parser: Parser) -> AwaitOp:
        unresolved = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        t = parser.parse_type()
        if not isinstance(t, TokenType | ValueType):
            parser.raise_error(f"async.await takes !async.token or !async.value<...>, got {t}")
        operand = parser.resolve_operand(unresolved, t)
        attrs = parser.parse_optional_attr_dict()
        result = [] if isinstance(t, TokenType) else [t.value_type]
        op = cls.build(operands=[operand], result_types=[result])
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.operand)
        printer.print_string(" : ")
        printer.print_attribute(self.operand.type)
        printer.print_op_attributes(self.attributes)


@irdl_op_definition
class YieldOp(IRDLOperation):
    name = "async.yield"
    values = var_operand_def()
    traits = traits_def(IsTerminator(), HasParent(ExecuteOp))

    def verify_(self) -> None:
        parent = self.parent_op()
        assert isinstance(parent, ExecuteOp)  # HasParent
        expected = [t.value_type for t in (r.type for r in parent.values)
                    if isinstance(t, ValueType)]
        got = [v.type for v in self.values]
        if got != expected:
            raise VerifyException(
                f"async.yield yields ({', '.join(map(str, got))}) but its async.execute "
                f"returns ({', '.join(f'!async.value<{t}>' for t in expected)})")

    @classmethod
    def parse(cls, parser: Parser) -> YieldOp:
        values: list[SSAValue] = []
        unresolved = parser.parse_optional_undelimited_comma_separated_list(
            parser.parse_optional_unresolved_operand, parser.parse_unresolved_operand)
        if unresolved:
            parser.parse_punctuation(":")
            types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
            if len(types) != len(unresolved):
                parser.raise_error(f"async.yield has {len(unresolved)} value(s) but "
                                   f"{len(types)} type(s)")
            values = [parser.resolve_operand(u, t) for u, t in zip(unresolved, types)]
        attrs = parser.parse_optional_attr_dict()
        op = cls.build(operands=[values])
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        if self.values:
            printer.print_string(" ")
            printer.print_list(self.values, printer.print_operand)
            printer.print_string(" : ")
            printer.print_list((v.type for v in self.values), printer.print_attribute)
        printer.print_op_attributes(self.attributes)


ASYNC = Dialect("async", [ExecuteOp, AwaitOp, YieldOp], [TokenType, ValueType])
DIALECT = ASYNC
