"""The two `affine` index ops IREE's map_load/map_store regions use, with static bases:
`affine.linearize_index` and `affine.delinearize_index` (lower-linalg-ext writes them as arith
on index values). weir loads no other part of `affine`."""

from __future__ import annotations

from xdsl.dialects.builtin import DenseArrayBase, IndexType, UnitAttr, i64
from xdsl.ir import Dialect
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer

INDEX = IndexType()


def _parse_bases(parser: Parser) -> list[int]:
    return parser.parse_comma_separated_list(
        Parser.Delimiter.PAREN, lambda: parser.parse_integer(allow_boolean=False,
                                                             allow_negative=False))


@irdl_op_definition
class LinearizeIndexOp(IRDLOperation):
    """`affine.linearize_index [disjoint] [%a, %b] by (4, 4) : index`: a * 4 + b."""

    name = "affine.linearize_index"
    indices = var_operand_def(IndexType)
    result = result_def(IndexType)
    static_basis = prop_def(DenseArrayBase)
    disjoint = opt_prop_def(UnitAttr)

    @classmethod
    def parse(cls, parser: Parser) -> LinearizeIndexOp:
        props = {}
        if parser.parse_optional_keyword("disjoint") is not None:
            props["disjoint"] = UnitAttr()
        pos = parser.pos
        names = parser.parse_comma_separated_list(Parser.Delimiter.SQUARE,
                                                  parser.parse_unresolved_operand)
        parser.parse_characters("by")
        bases = _parse_bases(parser)
        parser.parse_punctuation(":")
        parser.parse_type()
        if len(bases) not in (len(names), len(names) - 1):
            parser.raise_error(f"{len(names)} indices for {len(bases)} bases", pos)
        props["static_basis"] = DenseArrayBase.from_list(i64, bases)
        values = parser.resolve_operands(names, [INDEX] * len(names), pos)
        return cls.build(operands=[values], result_types=[INDEX], properties=props)

    def print(self, printer: Printer) -> None:
        if self.disjoint is not None:
            printer.print_string(" disjoint")
        printer.print_string(" [")
        printer.print_list(self.indices, printer.print_ssa_value)
        printer.print_string("] by (")
        printer.print_list(self.static_basis.get_values(), lambda v: printer.print_string(str(v)))
        printer.print_string(") : index")


@irdl_op_definition
class DelinearizeIndexOp(IRDLOperation):
    """`affine.delinearize_index %x into (4, 4) : index, index`: (x / 4, x % 4)."""

    name = "affine.delinearize_index"
    linear_index = operand_def(IndexType)
    multi_index = var_result_def(IndexType)
    static_basis = prop_def(DenseArrayBase)

    @classmethod
    def parse(cls, parser: Parser) -> DelinearizeIndexOp:
        pos = parser.pos
        name = parser.parse_unresolved_operand()
        parser.parse_characters("into")
        bases = _parse_bases(parser)
        parser.parse_punctuation(":")
        types = parser.parse_comma_separated_list(Parser.Delimiter.NONE, parser.parse_type)
        if len(types) not in (len(bases), len(bases) + 1):
            parser.raise_error(f"{len(types)} results for {len(bases)} bases", pos)
        (value,) = parser.resolve_operands([name], [INDEX], pos)
        return cls.build(operands=[value], result_types=[types],
                         properties={"static_basis": DenseArrayBase.from_list(i64, bases)})

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.linear_index)
        printer.print_string(" into (")
        printer.print_list(self.static_basis.get_values(), lambda v: printer.print_string(str(v)))
        printer.print_string(") : ")
        printer.print_list([r.type for r in self.multi_index], printer.print_attribute)


DIALECT = Dialect("affine", [LinearizeIndexOp, DelinearizeIndexOp], [])
