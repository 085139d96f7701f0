"""MLIR locations in every form upstream tools print, for `WeirParser`.

xDSL 0.74 reads `loc("f":1:2)`, `unknown`, names, `callsite` and `fused[...]`, but not:
- location aliases defined after their use: MLIR prints `#loc1 = loc("model.py":3:4)` at the
  *end* of the file (only the aliases other aliases need come first), so `loc(#loc1)` on an op
  refers forward. Here such a use gets a placeholder that is resolved once the file is read;
  an alias never defined is an error at its first use;
- fused locations with metadata, `fused<"tag">[...]`;
- ranges, `"f":1:2 to 3:4`, `"f":1:2 to :9` and the line-only `"f":1` (read as their start).
"""

from __future__ import annotations

from collections.abc import Iterator

from xdsl.dialects.builtin import (
    CallSiteLoc,
    FileLineColLoc,
    FusedLoc,
    IntAttr,
    LocationAttr,
    NameLoc,
    NoneAttr,
    StringAttr,
    UnknownLoc,
)
from xdsl.ir import Attribute, BlockArgument, Operation
from xdsl.parser import Parser
from xdsl.utils.exceptions import ParseError
from xdsl.utils.lexer import Span
from xdsl.utils.mlir_lexer import MLIRTokenKind


class DeferredLocations:
    """The placeholders given to location aliases used before their definition."""

    def __init__(self) -> None:
        # id(placeholder) -> (placeholder, alias name, span of its first use). The placeholder is
        # kept here, so its id stays unique while this parse lasts.
        self._placeholders: dict[int, tuple[NameLoc, str, Span]] = {}

    def __bool__(self) -> bool:
        return bool(self._placeholders)

    def placeholder(self, name: str, span: Span) -> NameLoc:
        loc = NameLoc(StringAttr(name), NoneAttr())
        self._placeholders[id(loc)] = (loc, name, span)
        return loc

    def is_placeholder(self, loc: Attribute) -> bool:
        entry = self._placeholders.get(id(loc))
        return entry is not None and entry[0] is loc

    def resolve(self, loc: Attribute, aliases: dict[str, Attribute]) -> Attribute:
        """What `loc` stands for once every alias is known (`loc` itself if no placeholder)."""
        seen: set[str] = set()
        while self.is_placeholder(loc):
            _, name, span = self._placeholders[id(loc)]
            if name in seen:
                raise ParseError(span, f"location alias '{name}' is defined in terms of itself")
            seen.add(name)
            if name not in aliases:
                raise ParseError(span, f"undefined location alias '{name}'")
            loc = aliases[name]
        return loc

    def check_all_defined(self, aliases: dict[str, Attribute]) -> None:
        for loc, _, _ in sorted(self._placeholders.values(), key=lambda e: e[2].start):
            self.resolve(loc, aliases)


def parse_location(parser: Parser, deferred: DeferredLocations) -> LocationAttr:
    """What is inside `loc(...)`."""
    if parser.parse_optional_keyword("unknown") is not None:
        return UnknownLoc()
    token = parser._current_token  # pyright: ignore[reportPrivateUsage]
    if token.kind == MLIRTokenKind.HASH_IDENT:
        return _parse_alias(parser, deferred)
    if token.kind == MLIRTokenKind.STRING_LIT:
        return _parse_file_or_name(parser, deferred)
    if parser.parse_optional_keyword("callsite") is not None:
        parser.parse_punctuation("(")
        callee = parse_location(parser, deferred)
        parser.parse_keyword("at")
        caller = parse_location(parser, deferred)
        parser.parse_punctuation(")")
        return CallSiteLoc(callee, caller)
    if parser.parse_optional_keyword("fused") is not None:
        metadata: Attribute = NoneAttr()
        if parser.parse_optional_punctuation("<") is not None:
            metadata = parser.parse_attribute()
            parser.parse_punctuation(">")
        locs = parser.parse_comma_separated_list(Parser.Delimiter.SQUARE,
                                                 lambda: parse_location(parser, deferred))
        return FusedLoc(tuple(locs), metadata)
    parser.raise_error("expected a location: unknown, \"file\":line:col, a name, "
                       "callsite(...), fused[...] or a #alias")


def _parse_alias(parser: Parser, deferred: DeferredLocations) -> LocationAttr:
    token = parser._current_token  # pyright: ignore[reportPrivateUsage]
    name = token.text
    if name not in parser.attribute_aliases:
        parser._consume_token(MLIRTokenKind.HASH_IDENT)  # pyright: ignore[reportPrivateUsage]
        return deferred.placeholder(name, token.span)
    value = parser.parse_attribute()
    if not isinstance(value, LocationAttr):
        parser.raise_error(f"'{name}' is not a location: {value}", token.span)
    return value


def _parse_file_or_name(parser: Parser, deferred: DeferredLocations) -> LocationAttr:
    """`"file":line[:col [to [line]:col]]` (a file location, ranges read as their start) or
    `"name"[(location)]`."""
    text = parser.parse_str_literal()
    if parser.parse_optional_punctuation(":") is None:
        child: Attribute = NoneAttr()
        if parser.parse_optional_punctuation("(") is not None:
            child = parse_location(parser, deferred)
            parser.parse_punctuation(")")
        return NameLoc(StringAttr(text), child)
    line = parser.parse_integer(allow_boolean=False, allow_negative=False)
    col = 0
    if parser.parse_optional_punctuation(":") is not None:
        col = parser.parse_integer(allow_boolean=False, allow_negative=False)
        if parser.parse_optional_keyword("to") is not None:
            # The end line, absent in `to :col` (a range ending on its first line).
            parser.parse_optional_integer(allow_boolean=False, allow_negative=False)
            parser.parse_punctuation(":")
            parser.parse_integer(allow_boolean=False, allow_negative=False)
    return FileLineColLoc(StringAttr(text), IntAttr(line), IntAttr(col))


def block_arguments(op: Operation) -> Iterator[BlockArgument]:
    """Every block argument in `op`'s regions, at any depth."""
    for inner in op.walk():
        for region in inner.regions:
            for block in region.blocks:
                yield from block.args
