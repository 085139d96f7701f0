"""`DiagnosingParser`: xDSL's MLIR parser with the diagnostics `weir-compile` promises: one error,
at the token that caused it, saying in words what was expected.

What xDSL 0.74 does that this corrects (each case is in tests/reliability/test_compile_errors.py):
- errors raised while an op is built (type constraints, attribute checks, crashes of custom
  parsers on bad input) carry no position, so they were reported at whatever token came next
  (often the next line); here they are reported at the op, naming it;
- an operand written with the wrong type in a custom format (`arith.addf %a, %a : tensor<4xi32>`
  with `%a : tensor<4xf32>`) failed with `Unexpected attribute i32`; here the operand is named
  with both types;
- an undefined value was reported at the end of the file; here at its first use;
- a missing `}` said `in block definition`, stray text at the top level `Could not parse entire
  input!`, a bad shape `got GREATER`; here they name the token found and what was expected;
- an out-of-range element of a `dense<...>` literal raised a bare ValueError after the whole
  literal; here it is reported at the literal, and a literal too large to hold in memory is
  refused at its type before anything is allocated.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable, Iterable
from typing import TypeVar

from xdsl.context import Context
from xdsl.dialects.builtin import AnyFloat, FloatAttr, IndexType, IntegerAttr, ShapedType
from xdsl.dialects.linalg.abstract_ops import NamedOperation
from xdsl.ir import Attribute, Operation, Region, SSAValue
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.parser.generic_parser import ParserState
from xdsl.utils.exceptions import ParseError, VerifyException
from xdsl.utils.lexer import Input, Position, Span
from xdsl.utils.mlir_lexer import MLIRToken, MLIRTokenKind

from weir.ir.diagnostics import one_line
from weir.ir.hexfloat import is_hex_literal
from weir.ir.lexer import WeirLexer
from weir.ir.nesting import enter_region

T = TypeVar("T", bound=Attribute)

# The most data one `dense<...>` literal may hold. xDSL expands a literal (a splat too) into a
# Python list before packing it, so a mistyped shape (`tensor<4294967296xf32>`) would otherwise
# exhaust memory instead of being reported.
MAX_DENSE_LITERAL_BYTES = 1 << 30

# `index` is 64 bits at run time; xDSL accepts any integer for it (which then wrapped around).
INDEX_MIN, INDEX_MAX = -(1 << 63), (1 << 64) - 1

_OP_START_TOKENS = (MLIRTokenKind.PERCENT_IDENT, MLIRTokenKind.BARE_IDENT, MLIRTokenKind.STRING_LIT)
_TOP_LEVEL_TOKENS = (*_OP_START_TOKENS, MLIRTokenKind.EOF, MLIRTokenKind.HASH_IDENT,
                     MLIRTokenKind.EXCLAMATION_IDENT, MLIRTokenKind.FILE_METADATA_BEGIN)


def describe_token(token: MLIRToken) -> str:
    """A token as an error message shows it: its text, or `the end of the input`."""
    if token.kind == MLIRTokenKind.EOF:
        return "the end of the input"
    text = token.text if len(token.text) <= 24 else token.text[:21] + "..."
    return f"'{text}'"


class _OpInProgress:
    """What the parser saw of the op it is parsing, for the error if building the op fails."""

    def __init__(self, start: Span) -> None:
        self.start = start
        self.name: str | None = None
        self.operands: list[UnresolvedOperand] = []
        self.types: list[Attribute] = []
        self.type: type[Operation] | None = None


class DiagnosingParser(Parser):
    """The parser whose errors weir reports (see the module docstring)."""

    def __init__(self, ctx: Context, text: str, filename: str) -> None:
        super().__init__(ctx, "", filename)
        # Lex with `WeirLexer` (an unterminated string hangs xDSL's lexer).
        self._parser_state = ParserState(WeirLexer(Input(text, filename)))
        self._ops: list[_OpInProgress] = []
        self._regions: list[Position] = []  # where each region being parsed opened
        self._type_depth = 0
        self._first_use: dict[str, Span] = {}  # first use of each forward-referenced value
        self._defined_at: dict[str, Span] = {}
        self._dense_type_end: Position | None = None  # where the type of a dense literal ended
        self._attribute_type: Attribute | None = None  # the type of the last `value : type` read

    def position_text(self, pos: Position) -> str:
        """`line:col` of a position, for messages that point at a second place (error paths
        only, so counting newlines each time is fine)."""
        text = self._parser_state.lexer.input.content
        line = text.count("\n", 0, pos) + 1
        return f"{line}:{pos - (text.rfind(chr(10), 0, pos) + 1) + 1}"

    # -- errors while an op is built --------------------------------------------------------

    def parse_diagnosed_operation(self, parse: Callable[[], Operation]) -> Operation:
        """Runs `parse` (one op) so that whatever fails while the op is built is reported at
        the op, naming it. Errors of nested ops are already located and pass through."""
        op = _OpInProgress(self._current_token.span)
        if self._current_token.kind != MLIRTokenKind.PERCENT_IDENT:
            op.name = self._current_token.text.strip('"')
        self._ops.append(op)
        try:
            return parse()
        except ParseError:
            raise
        except RecursionError:
            # Reported at the op holding the nesting (where it was hit depends on the stack).
            raise ParseError(op.start, "input is nested too deeply") from None
        except VerifyException as e:
            raise self._constraint_error(op, str(e)) from None
        except ValueError as e:
            # xDSL's way of refusing a value while building an op (an integer out of range for
            # its type, a string that is not one of an enum's values): a message for the user.
            raise ParseError(op.start, f"'{op.name}' op {one_line(str(e))}") from None
        except IndexError as e:
            if op.type is None or not issubclass(op.type, NamedOperation):
                raise ParseError(op.start, f"'{op.name}' op is malformed: {e}") from e
            # xDSL builds a named linalg op's body from its operands without counting them.
            raise ParseError(op.start, f"'{op.name}' op is missing operands: give its inputs as "
                                       "ins(...) and its outputs as outs(...)") from None
        except Exception as e:  # noqa: BLE001 - an xDSL custom parser failing on bad input
            # Kept as the cause so the compile fuzz can tell these from intended diagnostics.
            raise ParseError(op.start, f"'{op.name}' op is malformed: "
                                       f"{one_line(str(e)) or type(e).__name__}") from e
        finally:
            self._ops.pop()

    def _constraint_error(self, op: _OpInProgress, message: str) -> ParseError:
        """A type or attribute constraint of a custom-format op failed. The usual cause is an
        operand written with a type other than its own: say so at the operand."""
        written = list(dict.fromkeys(op.types))
        for use in op.operands:
            value = self._defined_value(use)
            if value is not None and written and value.type not in written:
                types = ", ".join(str(t) for t in written)
                return ParseError(use.span, f"'{use.span.text}' has type {value.type}, but "
                                            f"'{op.name}' is written with type"
                                            f"{'s' if len(written) > 1 else ''} {types}")
        message = one_line(message)
        if message.startswith("Unexpected attribute "):
            message = f"does not accept {message.removeprefix('Unexpected attribute ')} here"
        return ParseError(op.start, f"'{op.name}' op {message}")

    def _defined_value(self, use: UnresolvedOperand) -> SSAValue | None:
        values = self.ssa_values.get(use.operand_name)
        if values is None or use.index >= len(values):
            return None
        return values[use.index]

    def note_op_type(self, op_type: type[Operation]) -> None:
        """Called with the class of the op about to be parsed (by `_get_op_by_name`)."""
        if self._ops:
            self._ops[-1].type = op_type

    def _parse_op_result_list(self) -> list[tuple[Span, int]]:
        results = super()._parse_op_result_list()
        if self._ops and self._ops[-1].name is None:
            self._ops[-1].name = self._current_token.text.strip('"')
        return results

    def parse_optional_unresolved_operand(self) -> UnresolvedOperand | None:
        operand = super().parse_optional_unresolved_operand()
        if operand is not None and self._ops:
            self._ops[-1].operands.append(operand)
        return operand

    def parse_optional_type(self) -> Attribute | None:  # type: ignore[override]
        self._type_depth += 1
        try:
            parsed = super().parse_optional_type()
        finally:
            self._type_depth -= 1
        if parsed is not None and self._type_depth == 0 and self._ops:
            self._ops[-1].types.append(parsed)
        return parsed

    def parse_type(self) -> Attribute:  # type: ignore[override]
        parsed = self.parse_optional_type()
        if parsed is None:
            self.raise_error(f"expected a type, got {describe_token(self._current_token)}")
        return parsed

    def raise_error(self, msg: str, at_position=None, end_position=None):  # type: ignore[no-untyped-def, override]
        """An error about the current token that says what was expected (`Expected ')'`) also
        says what was found instead."""
        current = self._current_token.span.start
        at = at_position.start if isinstance(at_position, Span) else at_position
        if at in (None, current) and "expected" in msg.lower() and "got" not in msg:
            msg = f"{msg.rstrip('!.')}, got {describe_token(self._current_token)}"
        super().raise_error(msg, at_position, end_position)  # type: ignore[arg-type]

    # -- values --------------------------------------------------------------------------------

    def resolve_operand(self, operand: UnresolvedOperand, type: T) -> SSAValue[T]:  # type: ignore[override]
        name = operand.operand_name
        known = self._defined_value(operand) if name in self.ssa_values else None
        forward = self.forward_ssa_references.get(name, {}).get(operand.index)
        earlier = known if known is not None else forward
        if earlier is not None and earlier.type != type:
            how = "has type" if known is not None else "was first used as"
            # Named, not imported: weir/ir sits below weir/dialects (tests/test_layers.py).
            hint = (f" (await it first: async.await {operand.span.text} : {earlier.type})"
                    if earlier.type.name == "async.value" else "")
            self.raise_error(f"'{operand.span.text}' {how} {earlier.type}, but is used here as "
                             f"{type}{hint}", operand.span)
        if name not in self.ssa_values:
            self._first_use.setdefault(name, operand.span)
        return super().resolve_operand(operand, type)

    def _register_ssa_definition(self, name: str, values: Iterable[SSAValue], span: Span) -> None:
        if name in self.ssa_values:
            first = self._defined_at.get(name)
            where = f" (first defined at {self.position_text(first.start)})" if first else ""
            self.raise_error(f"'%{name}' is already defined{where}", span)
        self._defined_at[name] = span
        super()._register_ssa_definition(name, tuple(values), span)

    def parse_module(self, allow_implicit_module: bool = True):  # type: ignore[no-untyped-def]
        try:
            return super().parse_module(allow_implicit_module)
        except ParseError:
            if not self.forward_ssa_references or self._current_token.kind != MLIRTokenKind.EOF:
                raise
            uses = [self._first_use[n] for n in self.forward_ssa_references if n in self._first_use]
            if not uses:
                raise
            first = min(uses, key=lambda span: span.start)
            raise ParseError(first, f"use of undefined value '{first.text}'") from None

    # -- regions and the top level --------------------------------------------------------------

    def parse_optional_region(self, arguments: Iterable[Parser.Argument] | None = None) -> Region | None:
        if self._current_token.kind != MLIRTokenKind.L_BRACE:
            return None
        too_deep = enter_region(len(self._regions) + 1)
        if too_deep is not None:
            self.raise_error(too_deep)
        self._regions.append(self.pos)
        try:
            return super().parse_optional_region(arguments)
        finally:
            self._regions.pop()

    def _parse_block(self):  # type: ignore[no-untyped-def]
        """Called for each labelled block, and when a region's ops end without its `}`."""
        if self._current_token.kind != MLIRTokenKind.CARET_IDENT and self._regions:
            opened = self.position_text(self._regions[-1])
            found = describe_token(self._current_token)
            self.raise_error(f"expected an operation, a block label or '}}' closing the region "
                             f"opened at {opened}, got {found}")
        return super()._parse_block()

    def parse_optional_operation(self) -> Operation | None:
        if not self._regions and self._current_token.kind not in _TOP_LEVEL_TOKENS:
            self.raise_error(f"expected an operation at the top level, got "
                             f"{describe_token(self._current_token)}")
        return super().parse_optional_operation()

    # -- shapes and dense literals --------------------------------------------------------------

    def parse_shape_delimiter(self) -> None:
        if self._current_token.kind == MLIRTokenKind.BARE_IDENT and \
                self._current_token.text.startswith("x"):
            super().parse_shape_delimiter()
            return
        self.raise_error(f"expected 'x' after a dimension of the shape, got "
                         f"{describe_token(self._current_token)}")

    def parse_ranked_shape(self) -> tuple[list[int], Attribute]:
        dims = self.parse_dimension_list()
        if dims:
            self.parse_shape_delimiter()
        if self._current_token.kind == MLIRTokenKind.MINUS:
            self.raise_error("a dimension size must be a non-negative integer or '?'")
        element = self.parse_optional_type()
        if element is None:
            self.raise_error(f"expected an element type in the shape, got "
                             f"{describe_token(self._current_token)}")
        return dims, element

    def _text_since(self, start: Position) -> str:
        """The source from `start` to the current token, e.g. the `: f32` after a literal."""
        return self._parser_state.lexer.input.content[start:self.pos].strip().lstrip(":").strip()

    def _parse_attribute_type(self) -> Attribute:
        self._attribute_type = super()._parse_attribute_type()
        return self._attribute_type

    def parse_optional_builtin_int_or_float_attr(self):  # type: ignore[no-untyped-def, override]
        """`5 : i32`, `2.5 : f32`: a value its type cannot hold is reported at the value (xDSL
        raises OverflowError for floats, accepts any integer for `index`, and reports a float
        given an integer type at the token after the type)."""
        literal = self._current_token
        try:
            attr = super().parse_optional_builtin_int_or_float_attr()
        except ParseError as e:
            if e.span.start > literal.span.start and e.span.start == self.pos:
                raise ParseError(literal.span, e.msg) from None
            raise
        except OverflowError:
            # Defect fix: a decimal float literal beyond its type's range is ±inf, as in MLIR
            # (see `float_overflow`); an integer literal given a float type stays an error.
            written = self._parser_state.lexer.input.content[literal.span.start:self.pos]
            number = written.rpartition(":")[0].replace(" ", "")
            if isinstance(self._attribute_type, AnyFloat) and not is_hex_literal(number) and \
                    any(c in number for c in ".eE"):
                return FloatAttr(math.copysign(math.inf, float(number)), self._attribute_type)
            what = "hexadecimal float constant" if is_hex_literal(literal.text) else \
                f"float constant {literal.text}"
            raise ParseError(literal.span, f"{what} is out of range for type "
                                           f"{self._text_since(literal.span.end)}") from None
        if isinstance(attr, IntegerAttr) and isinstance(attr.type, IndexType) and \
                not INDEX_MIN <= attr.value.data <= INDEX_MAX:
            raise ParseError(literal.span, f"integer constant {attr.value.data} is out of range "
                                           "for index (64 bits)")
        return attr

    def _parse_dense_literal_type(self):  # type: ignore[no-untyped-def]
        start = self.pos
        shaped = super()._parse_dense_literal_type()
        self._dense_type_end = self.pos
        if isinstance(shaped, ShapedType):
            bits: int = getattr(shaped.get_element_type(), "bitwidth", 64)  # index: 64
            size = math.prod(shaped.get_shape()) * max(bits, 8) // 8
            if size > MAX_DENSE_LITERAL_BYTES:
                self.raise_error(f"a dense literal of type {shaped} would hold {size} bytes; "
                                 f"at most {MAX_DENSE_LITERAL_BYTES} are supported", start)
        return shaped

    def _parse_optional_complex(self):  # type: ignore[no-untyped-def, override]
        """xDSL asserts (an AssertionError on `(1.0, 2.0, 3.0)`) where it should report; weir has
        no complex element types, so a complex literal is refused at its `(`."""
        if self._current_token.kind == MLIRTokenKind.L_PAREN:
            self.raise_error("complex literals '(re, im)' are not supported: weir has no complex "
                             "element types", self._current_token.span)
        return None

    def parse_dense_int_or_fp_elements_attr(self, type):  # type: ignore[no-untyped-def]
        """A `dense<...>` literal whose values do not fit its type is reported at the literal
        (xDSL reports some of these at the token after the type, some as bare exceptions)."""
        start = self.pos
        here = Span(start, start + 1, self._parser_state.lexer.input)
        self._dense_type_end = None
        try:
            return super().parse_dense_int_or_fp_elements_attr(type)
        except ParseError as e:
            # Checks made once the literal and its type are read point past them: move them.
            if self._dense_type_end is not None and e.span.start >= self._dense_type_end:
                raise ParseError(here, e.msg) from None
            raise
        except ValueError as e:
            raise ParseError(here, one_line(str(e))) from None
        except (OverflowError, struct.error):
            raise ParseError(here, f"a value of the dense literal is out of range for "
                                   f"{self._text_since(start).rpartition(':')[2].strip()}") from None
