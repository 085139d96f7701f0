"""The single entry point from MLIR text to weir's in-memory IR.

Parse once, keep the IR (DESIGN.md §3: xDSL parses ~4,000 ops/s, so passes must never
print and re-parse). Every failure becomes a one-line `CompileError` at `file:line:col`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from xdsl.context import Context
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, ModuleOp, StringAttr
from xdsl.ir import Attribute
from xdsl.utils.exceptions import ParseError
from xdsl.utils.lexer import Input
from xdsl.utils.mlir_lexer import MLIRTokenKind

from weir.errors import CompileError
from weir.ir.constants import ConstantStore, attach_constants
from weir.ir.context import make_context
from weir.ir.diagnostics import one_line
from weir.ir.lexer import WeirLexer
from weir.ir.nesting import deep_nesting
from weir.ir.verify import verify_module
from weir.ir.weir_parser import LineIndex, WeirParser

T = TypeVar("T")


@dataclass
class ParsedModule:
    """A module together with the per-parse store of its `dense_resource` blobs."""

    module: ModuleOp
    constants: ConstantStore


def decode_source(source: str | bytes) -> str:
    """Bytes that are not UTF-8 become U+FFFD so the lexer reports them like any bad char."""
    if isinstance(source, bytes):
        return source.decode("utf-8", errors="replace")
    return source


def _error_at_pos(text: str, filename: str, pos: int, message: str) -> CompileError:
    line, col = LineIndex(text).line_col(min(pos, len(text)))
    return CompileError(one_line(message) or "parse error", filename, line, col)


def _check_nonempty_text(text: str, filename: str) -> None:
    nul = text.find("\0")
    if nul >= 0:
        raise _error_at_pos(text, filename, nul, "unexpected NUL byte in input (is this a binary file?)")
    try:
        first = WeirLexer(Input(text, filename)).lex()
    except ParseError:
        return  # not empty; the parser will report the bad token properly
    if first.kind == MLIRTokenKind.EOF:
        raise CompileError("empty input: expected a module", filename, 1, 1)


def _parse_text(text: str, filename: str, ctx: Context | None, constants: ConstantStore,
                parse: Callable[[WeirParser], T]) -> T:
    """Run `parse` on a WeirParser over `text`. Every failure, from lexing the first token (which
    the parser does on construction) to the last, becomes one CompileError at its position."""
    ctx = ctx if ctx is not None else make_context()
    parser: WeirParser | None = None
    try:
        parser = WeirParser(ctx, text, filename, constants)
        return parse(parser)
    except ParseError as e:
        raise _error_at_pos(text, filename, e.span.start, e.msg) from e
    except RecursionError as e:
        pos = parser.pos if parser is not None else 0
        raise _error_at_pos(text, filename, pos, "input is nested too deeply") from e
    except Exception as e:  # xDSL raises assorted exceptions on bad input; none may escape
        pos = parser.pos if parser is not None else 0
        raise _error_at_pos(text, filename, pos, str(e) or type(e).__name__) from e


def _locate_implicit_ops(module: ModuleOp, filename: str) -> None:
    """Ops the parser created itself (implicit module, implicit terminators) inherit the
    location of their parent, so every op in a parsed module has a FileLineColLoc."""
    if not isinstance(module.location, FileLineColLoc):
        module.location = FileLineColLoc(StringAttr(filename), IntAttr(1), IntAttr(1))
    for op in module.walk():
        if not isinstance(op.location, FileLineColLoc):
            parent = op.parent_op()
            if parent is not None:
                op.location = parent.location


def parse_source(source: str | bytes, filename: str = "<stdin>", ctx: Context | None = None, *, verify: bool = True) -> ParsedModule:
    """Parse `source` into a verified module and its own ConstantStore."""
    text = decode_source(source)
    _check_nonempty_text(text, filename)
    constants = ConstantStore()
    with deep_nesting():
        module = _parse_text(text, filename, ctx, constants, WeirParser.parse_module)
        _locate_implicit_ops(module, filename)
        attach_constants(module, constants)
        if verify:
            verify_module(module)
    return ParsedModule(module, constants)


def parse_module(source: str | bytes, filename: str = "<stdin>", ctx: Context | None = None) -> ModuleOp:
    """Parse and verify; the module's blobs are reachable with `constants_of(module)`."""
    return parse_source(source, filename, ctx).module


def parse_attribute(text: str, filename: str = "<attribute>", ctx: Context | None = None) -> Attribute:
    """Parse one attribute or type (e.g. from a command-line flag) with weir's fixes."""

    def parse_one(parser: WeirParser) -> Attribute:
        attr = parser.parse_attribute()
        if parser._current_token.kind != MLIRTokenKind.EOF:  # pyright: ignore[reportPrivateUsage]
            parser.raise_error("unexpected text after attribute")
        return attr

    return _parse_text(text, filename, ctx, ConstantStore(), parse_one)
