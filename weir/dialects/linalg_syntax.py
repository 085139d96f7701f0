"""The textual forms MLIR prints for the linalg ops weir accepts, shared by their parse/print
methods in `linalg_ext`. Real programs come from tools built on upstream MLIR (torch-mlir,
`iree-compile --compile-to=input`), so each form here is one upstream prints:

- `ins(%a, %b : T, U)` / `outs(%c : V)`, each optional where MLIR makes it optional;
- the short form of `linalg.map` and `linalg.reduce`, `{ arith.addf {fastmath = ...} }`: one op
  applied to the body's arguments, with that op's attributes (its properties, e.g. `fastmath`,
  are split off as MLIR does when it builds the op);
- a region's arguments written after the operands, `(%in: f32, %init: f32 loc(...)) { ... }`;
- results after `->`: `-> T` or, for several (a softmax, a max-with-index), `-> (T, U)`;
- `linalg.generic` whole: xDSL 0.74 reads neither the parenthesised result list it prints itself,
  nor its leading dictionary given as an alias (`linalg.generic #trait ins(...)`), and dropped
  the attributes of that dictionary other than the four it knows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.builder import Builder
from xdsl.dialects.builtin import AffineMapAttr, ArrayAttr, DictionaryAttr, ShapedType, StringAttr
from xdsl.dialects.linalg import ops as upstream
from xdsl.dialects.linalg.attrs import IteratorType, IteratorTypeAttr
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.rewriter import InsertPoint
from xdsl.utils.mlir_lexer import MLIRTokenKind


def element_type(value: SSAValue) -> Attribute:
    t = value.type
    return t.get_element_type() if isinstance(t, ShapedType) else t


# --------------------------------------------------------------------------- operand lists


def parse_optional_operands(parser: Parser, keyword: str) -> list[SSAValue] | None:
    """`keyword(%a, %b : T, U)`, or None when the keyword is absent."""
    if parser.parse_optional_characters(keyword) is None:
        return None
    pos = parser.pos
    parser.parse_punctuation("(")
    names = parser.parse_comma_separated_list(Parser.Delimiter.NONE,
                                              parser.parse_unresolved_operand)
    parser.parse_punctuation(":")
    types = parser.parse_comma_separated_list(Parser.Delimiter.NONE, parser.parse_type)
    parser.parse_punctuation(")")
    if len(names) != len(types):
        parser.raise_error(f"{len(names)} operand(s) but {len(types)} type(s)", pos)
    return parser.resolve_operands(names, types, pos)


def parse_operands(parser: Parser, keyword: str) -> list[SSAValue]:
    """`keyword(...)`, required."""
    values = parse_optional_operands(parser, keyword)
    if values is None:
        parser.raise_error(f"expected '{keyword}(...)'")
    return values


def print_operands(printer: Printer, keyword: str, values: Sequence[SSAValue]) -> None:
    """` keyword(%a : T)`; nothing for no values, as MLIR prints it."""
    if not values:
        return
    printer.print_string(f" {keyword}(")
    printer.print_list(values, printer.print_ssa_value)
    printer.print_string(" : ")
    printer.print_list([v.type for v in values], printer.print_attribute)
    printer.print_string(")")


def parse_result_types(parser: Parser) -> list[Attribute]:
    """`-> T`, `-> (T, U)` or nothing (MLIR's optional arrow type list). Several types without
    parentheses (`-> T, U`), which weir has always read and xDSL prints, are read too: nothing
    else can follow a linalg op's results, so the comma is unambiguous."""
    if parser.parse_optional_punctuation("->") is None:
        return []
    types = parser.parse_optional_comma_separated_list(Parser.Delimiter.PAREN, parser.parse_type)
    if types is not None:
        return types
    types = [parser.parse_type()]
    while parser.parse_optional_punctuation(",") is not None:
        types.append(parser.parse_type())
    return types


def print_result_types(printer: Printer, types: Sequence[Attribute]) -> None:
    if not types:
        return
    printer.print_string(" -> ")
    if len(types) == 1:
        printer.print_attribute(types[0])
        return
    with printer.in_parens():
        printer.print_list(types, printer.print_attribute)


# ---------------------------------------------------------------------- region arguments


def parse_region_with_arguments(parser: Parser) -> Region:
    """`(%in: f32 {attrs} loc(...), ...) { body }`: the entry block's arguments written before
    the region, each with optional attributes (ignored, as they mean nothing to weir) and an
    optional location."""

    def one() -> Parser.Argument:
        arg = parser.parse_argument()
        parser.parse_optional_attr_dict()
        if (loc := parser.parse_optional_location()) is not None:
            arg.location = loc
        return arg

    args = parser.parse_comma_separated_list(Parser.Delimiter.PAREN, one)
    return parser.parse_region(args)


def print_region_with_arguments(printer: Printer, region: Region) -> None:
    printer.print_string("\n")
    with printer.in_parens():
        printer.print_list(region.block.args, printer.print_block_argument)
    printer.print_string(" ")
    printer.print_region(region, print_entry_block_args=False)


# ------------------------------------------------------------------------- short forms


@dataclass
class Payload:
    """The op of a short form, `{ arith.addf {fastmath = #arith.fastmath<fast>} }`."""

    name: str
    pos: int
    attributes: dict[str, Attribute] = field(default_factory=dict[str, Attribute])


def parse_optional_payload(parser: Parser, op_name: str) -> Payload | None:
    if parser.parse_optional_punctuation("{") is None:
        return None
    pos = parser.pos
    name = parser.parse_identifier(f" (the op the short form of {op_name} applies)")
    attributes = parser.parse_optional_attr_dict()
    parser.parse_punctuation("}")
    return Payload(name, pos, attributes)


def payload_body(parser: Parser, payload: Payload, arg_types: Sequence[Attribute],
                 operand_args: Sequence[int], result_type: Attribute) -> Region:
    """The body a short form stands for: one block of `arg_types` arguments in which
    `payload` applies to the arguments at `operand_args` (in that order) and its result, of
    `result_type`, is yielded."""
    op_type = parser.ctx.get_optional_op(payload.name)
    if op_type is None:
        parser.raise_error(f"Operation {payload.name} is not registered", payload.pos)
    known = op_type.get_irdl_definition().properties if hasattr(op_type, "get_irdl_definition") \
        else {}
    properties = {k: v for k, v in payload.attributes.items() if k in known}
    attributes = {k: v for k, v in payload.attributes.items() if k not in known}
    block = Block(arg_types=arg_types)
    b = Builder(InsertPoint.at_end(block))
    try:
        op = b.insert(op_type.build(operands=[block.args[i] for i in operand_args],
                                    result_types=[result_type], properties=properties,
                                    attributes=attributes))
    except (ValueError, TypeError, IndexError) as e:
        parser.raise_error(f"short form cannot build {payload.name}: {e}", payload.pos)
    b.insert(upstream.YieldOp(op.results[0]))
    return Region(block)


def short_form_payload(region: Region, operand_args: Sequence[int]) -> Operation | None:
    """The op that `region` applies, when the region is exactly what a short form builds:
    that op on the arguments at `operand_args`, its one result yielded. Otherwise None (MLIR
    prints a body that is not exactly that in the long form, or the printed text would
    mean something else)."""
    if len(region.blocks) != 1:
        return None
    block = region.block
    ops = list(block.ops)
    if len(ops) != 2 or not isinstance(ops[1], upstream.YieldOp) or len(ops[0].results) != 1 \
            or ops[0].regions or ops[0].successors:
        return None
    payload, yield_op = ops
    args: tuple[BlockArgument, ...] = block.args
    if any(i >= len(args) for i in operand_args):
        return None
    if list(payload.operands) != [args[i] for i in operand_args]:
        return None
    if list(yield_op.operands) != [payload.results[0]]:
        return None
    return payload


def print_payload(printer: Printer, payload: Operation) -> None:
    """` { arith.addf {fastmath = #arith.fastmath<fast>} }`: non-default properties (default
    fastmath/overflow flags are elided, as MLIR elides them) then attributes."""
    printer.print_string(f" {{ {payload.name}")
    shown: dict[str, Attribute] = {}
    definition = payload.get_irdl_definition()
    for name, value in payload.properties.items():
        prop = definition.properties.get(name)
        default = getattr(prop, "default_value", None)
        if value != default:
            shown[name] = value
    shown |= payload.attributes
    if shown:
        printer.print_string(" ")
        printer.print_attr_dict(shown)
    printer.print_string(" }")


# ----------------------------------------------------------------------- indexing maps


def parse_optional_indexing_maps(parser: Parser) -> ArrayAttr[AffineMapAttr] | None:
    """`indexing_maps = [affine_map<...>, ...]` in front of a named contraction's operands."""
    if parser.parse_optional_keyword("indexing_maps") is None:
        return None
    parser.parse_punctuation("=")
    pos = parser.pos
    maps = parser.parse_attribute()
    if not (isinstance(maps, ArrayAttr) and all(isinstance(m, AffineMapAttr) for m in maps.data)):
        parser.raise_error("indexing_maps must be a list of affine maps", pos, parser.pos)
    return maps  # type: ignore[return-value]


# ---------------------------------------------------------------------------- generic


# The attributes of `linalg.generic`'s leading dictionary that are its properties, with the kind
# each must have (checked here: xDSL asserts on them, an AssertionError on `indexing_maps = 3`).
_GENERIC_PROPERTIES: dict[str, tuple[type[Attribute], str]] = {
    "indexing_maps": (ArrayAttr, "an array of affine maps"),
    "iterator_types": (ArrayAttr, "an array of iterator types"),
    "doc": (StringAttr, "a string"),
    "library_call": (StringAttr, "a string"),
}


def _iterator_type(parser: Parser, value: Attribute, start: int) -> IteratorTypeAttr:
    """`"parallel"` (the pretty form) or `#linalg.iterator_type<parallel>` (the generic one)."""
    if isinstance(value, IteratorTypeAttr):
        return value
    if isinstance(value, StringAttr) and value.data in {t.value for t in IteratorType}:
        return IteratorTypeAttr(IteratorType(value.data))
    parser.raise_error(f"linalg.generic: unknown iterator type {value}", start, parser.pos)


def _parse_generic_traits(parser: Parser) -> dict[str, Attribute]:
    """The leading dictionary, written out or as an alias (`linalg.generic #trait ins(...)`,
    with `#trait = {indexing_maps = ..., iterator_types = ...}` at the top of the file)."""
    if parser._current_token.kind != MLIRTokenKind.HASH_IDENT:  # pyright: ignore[reportPrivateUsage]
        return parser.parse_optional_attr_dict()
    start = parser.pos
    value = parser.parse_attribute()
    if not isinstance(value, DictionaryAttr):
        parser.raise_error(f"linalg.generic: expected a dictionary of its traits, got {value}",
                           start, parser.pos)
    return dict(value.data)


def parse_generic(parser: Parser, cls: type[upstream.GenericOp]) -> upstream.GenericOp:
    """`linalg.generic {indexing_maps = .., iterator_types = .., ...} [ins(..)] [outs(..)]
    [attrs = {..}] { region } [-> T | -> (T, U)]`."""
    start = parser.pos
    attrs = _parse_generic_traits(parser)
    end = parser.pos
    for key, (kind, what) in _GENERIC_PROPERTIES.items():
        value = attrs.get(key)
        if value is not None and not isinstance(value, kind):
            parser.raise_error(f"linalg.generic: '{key}' must be {what}, got {value}", start, end)
    for key in ("indexing_maps", "iterator_types"):
        if key not in attrs:
            parser.raise_error(f"linalg.generic needs '{key}' in its attribute dictionary",
                               start, end)
    maps = attrs.pop("indexing_maps")
    assert isinstance(maps, ArrayAttr)
    if not all(isinstance(m, AffineMapAttr) for m in maps.data):
        parser.raise_error("linalg.generic: 'indexing_maps' must be an array of affine maps",
                           start, end)
    iterators = attrs.pop("iterator_types")
    assert isinstance(iterators, ArrayAttr)
    iterator_types = [_iterator_type(parser, t, start) for t in iterators.data]
    doc, library_call = attrs.pop("doc", None), attrs.pop("library_call", None)
    inputs = parse_optional_operands(parser, "ins") or []
    outputs = parse_optional_operands(parser, "outs") or []
    if parser.parse_optional_keyword("attrs") is not None:
        parser.parse_punctuation("=")
        attrs |= parser.parse_optional_attr_dict()
    body = parser.parse_region()
    result_types = parse_result_types(parser)
    op = cls(inputs, outputs, body, maps.data, iterator_types, result_types,  # type: ignore[arg-type]
             doc, library_call)  # type: ignore[arg-type]
    op.attributes |= attrs
    return op
