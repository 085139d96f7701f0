"""weir's refinements of xDSL 0.74's `scf` ops: they read every form upstream MLIR prints.

- `scf.for ... iter_args(%x = %a) -> T`: MLIR reads the result types as an arrow type list, so a
  single type may be written without parentheses (xDSL required `-> (T)`). `scf.for unsigned`
  (bounds compared as unsigned integers) is refused by name: weir compares loop bounds as signed.
- `scf.if %c -> T`: likewise.
- `scf.while : () -> ()`: a loop that carries no values writes no assignment list (xDSL required
  `()`).

Each class is a plain subclass of the upstream op, so `isinstance(op, scf.ForOp)` holds and
`weir.ir.context` replaces the upstream op with it.
"""

from __future__ import annotations

from xdsl.dialects import scf
from xdsl.dialects.builtin import IndexType, i1
from xdsl.dialects.utils.format import parse_assignment
from xdsl.ir import Attribute, Dialect, Region
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.traits import SingleBlockImplicitTerminator, ensure_terminator


def _arrow_types(parser: Parser, *, required: bool) -> list[Attribute]:
    """`-> T` or `-> (T, U)` (MLIR's arrow type list); nothing when not `required` and absent."""
    if parser.parse_optional_punctuation("->") is None:
        if required:
            parser.parse_punctuation("->")
        return []
    types = parser.parse_optional_comma_separated_list(Parser.Delimiter.PAREN, parser.parse_type)
    return types if types is not None else [parser.parse_type()]


class ForOp(scf.ForOp):
    @classmethod
    def parse(cls, parser: Parser) -> scf.ForOp:
        start = parser.pos
        if parser.parse_optional_keyword("unsigned") is not None:
            parser.raise_error("'scf.for unsigned' (bounds compared as unsigned integers) is not "
                               "supported: weir compares loop bounds as signed integers", start)
        indvar = parser.parse_argument(expect_type=False)
        parser.parse_punctuation("=")
        lb = parser.parse_unresolved_operand()
        parser.parse_keyword("to")
        ub = parser.parse_unresolved_operand()
        parser.parse_keyword("step")
        step = parser.parse_unresolved_operand()

        pos = parser.pos
        carried: list[Parser.UnresolvedArgument] = []
        inits: list[UnresolvedOperand] = []
        types: list[Attribute] = []
        if parser.parse_optional_keyword("iter_args") is not None:
            for arg, init in parser.parse_comma_separated_list(
                    Parser.Delimiter.PAREN, lambda: parse_assignment(parser)):
                carried.append(arg)
                inits.append(init)
            types = _arrow_types(parser, required=True)
            if len(types) != len(inits):
                parser.raise_error(f"scf.for carries {len(inits)} value(s) but lists "
                                   f"{len(types)} type(s)", pos, parser.pos)
        init_values = parser.resolve_operands(inits, types, pos)
        indvar_type = parser.parse_type() if parser.parse_optional_punctuation(":") is not None \
            else IndexType()
        bounds = [parser.resolve_operand(v, indvar_type) for v in (lb, ub, step)]
        args = [indvar.resolve(indvar_type), *(a.resolve(t) for a, t in zip(carried, types))]
        body = parser.parse_region(args)
        attrs = parser.parse_optional_attr_dict()
        op = cls(*bounds, init_values, body)
        op.attributes |= attrs
        if not carried:
            for trait in op.get_traits_of_type(SingleBlockImplicitTerminator):
                ensure_terminator(op, trait)
        return op


class IfOp(scf.IfOp):
    @classmethod
    def parse(cls, parser: Parser) -> scf.IfOp:
        cond = parser.parse_operand(i1)
        types = _arrow_types(parser, required=False)
        then_region = cls.parse_region_with_yield(parser)
        else_region = cls.parse_region_with_yield(parser) \
            if parser.parse_optional_keyword("else") is not None else Region()
        attrs = parser.parse_optional_attr_dict()
        return cls(cond, types, then_region, else_region, attrs)


class WhileOp(scf.WhileOp):
    @classmethod
    def parse(cls, parser: Parser) -> scf.WhileOp:
        pairs = parser.parse_optional_comma_separated_list(
            Parser.Delimiter.PAREN, lambda: parse_assignment(parser)) or []
        parser.parse_punctuation(":")
        type_pos = parser.pos
        function_type = parser.parse_function_type()
        inputs = function_type.inputs.data
        if len(pairs) != len(inputs):
            parser.raise_error(f"scf.while assigns {len(pairs)} value(s) but its type takes "
                               f"{len(inputs)}", type_pos, parser.pos)
        block_args = [arg.resolve(t) for (arg, _), t in zip(pairs, inputs)]
        arguments = [parser.resolve_operand(value, t) for (_, value), t in zip(pairs, inputs)]
        before = parser.parse_region(block_args)
        parser.parse_keyword("do")
        after = parser.parse_region()
        op = cls(arguments, function_type.outputs.data, before, after)
        if (attrs := parser.parse_optional_attr_dict_with_keyword()) is not None:
            op.attributes |= attrs.data
        return op


DIALECT = Dialect("scf", [ForOp, IfOp, WhileOp], [])
