"""`func.func` custom syntax that keeps argument/result attributes on declarations.

Defect fix (DESIGN.md §3): xDSL 0.74's `FuncOp.parse` throws away the `{...}` after each
unnamed argument type (the declaration form `func.func private @f(tensor<4xf32> {a = 1})`),
and `FuncOp.print` prints a body-less function as its bare `function_type`, dropping both
`arg_attrs` and `res_attrs`. IREE's ABI lives in exactly those attributes
(`{iree.abi.output = 0 : index}` on imported declarations), so weir parses and prints
`func.func` with these functions instead (hooked in by `WeirParser` / `WeirPrinter`).

IREE spells the same ops `util.func`, `util.return` and `util.call` (what `iree-compile
--compile-to=input` prints, `attributes {iree.abi.stub, ...}` and all): weir reads them as the
func ops they stand for, so the rest of the compiler sees one kind of function. Their one
form func has no counterpart for, a result tied to an argument (`-> %arg0`), is refused by name.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, FunctionType
from xdsl.dialects.func import CallOp, FuncOp, ReturnOp
from xdsl.ir import Attribute, Operation, Region
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.mlir_lexer import MLIRTokenKind

_RESERVED = ("sym_name", "function_type", "sym_visibility", "arg_attrs", "res_attrs")

FUNC_SPELLINGS = frozenset({"func.func", "util.func"})
"""The op names `parse_func` reads."""

OP_SPELLINGS: dict[str, type[Operation]] = {"util.return": ReturnOp, "util.call": CallOp}
"""IREE's names of func ops whose syntax is the func op's own."""


def _attrs_array(dicts: Sequence[dict[str, Attribute]]) -> ArrayAttr[DictionaryAttr] | None:
    """MLIR omits arg_attrs/res_attrs entirely when every entry is empty; so do we."""
    if not any(dicts):
        return None
    return ArrayAttr(DictionaryAttr(d) for d in dicts)


def parse_func(parser: Parser) -> FuncOp:
    """Parse what follows `func.func`: `[visibility] @name(args) [-> results] [attributes {..}] [body]`."""
    visibility = parser.parse_optional_visibility_keyword()
    name = parser.parse_symbol_name().data

    named: list[Parser.Argument] = []
    types: list[Attribute] = []
    arg_dicts: list[dict[str, Attribute]] = []

    def parse_input() -> None:
        arg = parser.parse_optional_argument()
        if arg is None:
            types.append(parser.parse_type())
        else:
            named.append(arg)
            types.append(arg.type)
        arg_dicts.append(parser.parse_optional_dictionary_attr_dict())
        loc = parser.parse_optional_location()
        if arg is not None and loc is not None:
            arg.location = loc

    open_pos = parser.pos
    parser.parse_comma_separated_list(parser.Delimiter.PAREN, parse_input)
    if named and len(named) != len(types):
        parser.raise_error("expected all arguments to be named or all unnamed", open_pos)

    result_types, res_dicts = _parse_results(parser)
    extra = parser.parse_optional_attr_dict_with_keyword(_RESERVED)

    body_pos = parser.pos
    region = parser.parse_optional_region(named if named else None)
    if region is None:
        region = Region()
    elif types and not named:
        parser.raise_error("expected named arguments for a function with a body", body_pos)

    func = FuncOp(
        name,
        (types, result_types),
        region,
        visibility,
        arg_attrs=_attrs_array(arg_dicts),
        res_attrs=_attrs_array(res_dicts),
    )
    if extra is not None:
        func.attributes |= extra.data
    return func


def _parse_results(parser: Parser) -> tuple[list[Attribute], list[dict[str, Attribute]]]:
    """`-> type` or `-> (type {attrs}, ...)`; no arrow means no results."""
    if parser.parse_optional_punctuation("->") is None:
        return [], []

    def result_type() -> Attribute:
        token = parser._current_token  # pyright: ignore[reportPrivateUsage]
        if token.kind == MLIRTokenKind.PERCENT_IDENT:
            parser.raise_error(f"a result tied to an argument ('-> {token.text}', IREE's "
                               "util.func) is not supported: return a value of its own")
        return parser.parse_type()

    pairs = parser.parse_optional_comma_separated_list(
        parser.Delimiter.PAREN,
        lambda: (result_type(), parser.parse_optional_dictionary_attr_dict()),
    )
    if pairs is None:
        return [result_type()], [{}]
    return [t for t, _ in pairs], [d for _, d in pairs]


def _print_typed_list(printer: Printer, types: Sequence[Attribute], attrs: ArrayAttr[DictionaryAttr] | None) -> None:
    def one(i: int) -> None:
        printer.print_attribute(types[i])
        if attrs is not None and attrs.data[i].data:
            printer.print_op_attributes(attrs.data[i].data)

    printer.print_list(range(len(types)), one)


def print_func_declaration(printer: Printer, op: FuncOp) -> None:
    """Print what follows `func.func` for a body-less function, attributes included."""
    if op.sym_visibility is not None:
        printer.print_string(" " + op.sym_visibility.data)
    printer.print_string(" ")
    printer.print_symbol_name(op.sym_name.data)
    printer.print_string("(")
    _print_typed_list(printer, op.function_type.inputs.data, op.arg_attrs)
    printer.print_string(")")
    outputs = op.function_type.outputs.data
    if outputs:
        printer.print_string(" -> ")
        parens = len(outputs) != 1 or op.res_attrs is not None or _needs_parens(outputs[0])
        if parens:
            printer.print_string("(")
        _print_typed_list(printer, outputs, op.res_attrs)
        if parens:
            printer.print_string(")")
    printer.print_op_attributes(op.attributes, reserved_attr_names=_RESERVED, print_keyword=True)


def _needs_parens(t: Attribute) -> bool:
    """A lone function-typed result must be parenthesised to stay unambiguous."""
    return isinstance(t, FunctionType)
