"""The single entry point from MLIR text to weir's in-memory IR.

Parse once, keep the IR (DESIGN.md §3: xDSL parses ~4,000 ops/s, so passes must never
print and re-parse). Every failure becomes a one-line `CompileError` at `file:line:col`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, ModuleOp, StringAttr
from xdsl.ir import Attribute
from xdsl.utils.exceptions import ParseError
from xdsl.utils.lexer import Input
from xdsl.utils.mlir_lexer import MLIRLexer, MLIRTokenKind

from weir.errors import CompileError
from weir.ir.constants import ConstantStore, attach_constants
from weir.ir.context import make_context
from weir.ir.diagnostics import one_line
from weir.ir.verify import verify_module
from weir.ir.weir_parser import LineIndex, WeirParser


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
    line, col = LineIndex(text).line_col(pos)
    return CompileError(one_line(message) or "parse error", filename, line, col)


def _check_nonempty_text(text: str, filename: str) -> None:
    nul = text.find("\0")
    if nul >= 0:
        raise _error_at_pos(text, filename, nul, "unexpected NUL byte in input (is this a binary file?)")
    try:
        first = MLIRLexer(Input(text, filename)).lex()
    except ParseError:
        return  # not empty; the parser will report the bad token properly
    if first.kind == MLIRTokenKind.EOF:
        raise CompileError("empty input: expected a module", filename, 1, 1)


def _run_parser(parser: WeirParser, text: str, filename: str) -> ModuleOp:
    try:
        return parser.parse_module()
    except ParseError as e:
        start = min(e.span.start, len(text))
        raise _error_at_pos(text, filename, start, e.msg) from e
    except RecursionError as e:
        raise _error_at_pos(text, filename, parser.pos, "input is nested too deeply") from e
    except Exception as e:  # xDSL raises assorted exceptions on bad input; none may escape
        raise _error_at_pos(text, filename, min(parser.pos, len(text)), str(e) or type(e).__name__) from e


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
    try:
        parser = WeirParser(ctx if ctx is not None else make_context(), text, filename, constants)
    except ParseError as e:
        raise _error_at_pos(text, filename, e.span.start, e.msg) from e
    module = _run_parser(parser, text, filename)
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
    parser = WeirParser(ctx if ctx is not None else make_context(), text, filename, ConstantStore())
    try:
        attr = parser.parse_attribute()
        if parser._current_token.kind != MLIRTokenKind.EOF:  # pyright: ignore[reportPrivateUsage]
            parser.raise_error("unexpected text after attribute")
    except ParseError as e:
        raise _error_at_pos(text, filename, min(e.span.start, len(text)), e.msg) from e
    except Exception as e:  # as in _run_parser: no traceback for bad user text
        raise _error_at_pos(text, filename, min(parser.pos, len(text)), str(e) or type(e).__name__) from e
    return attr
