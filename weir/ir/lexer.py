"""`WeirLexer`: xDSL's MLIR lexer with two defects corrected, so that no input, however broken,
hangs the parser or reaches it as a confusing token.

- String literals: xDSL matches them with a regular expression that nests one quantifier in
  another, which backtracks exponentially when the closing quote is missing (a 60-character
  unterminated string took minutes). The same language is matched here with possessive
  quantifiers, which never backtrack, and an unterminated string says where it started and
  why it ended.
- Speed: a string without escapes (every `dense_resource` blob: one hex string per weight,
  200 MB in all for ResNet-50) is found with `str.find` alone, instead of two regular
  expression scans (weir's check, then xDSL's own) and four copies of its text.
- Characters no token starts with: xDSL lexes any Unicode letter or digit as the start of an
  identifier or number (`²` reaches `int()`), and reports bytes that are not UTF-8 as the
  replacement character U+FFFD. Here every token starts with an ASCII character; anything else
  is reported by what it is, with a hint when the input looks like a binary file.
"""

from __future__ import annotations

import re

from xdsl.utils.exceptions import ParseError
from xdsl.utils.lexer import Position, Span, Token
from xdsl.utils.mlir_lexer import MLIRLexer, MLIRToken, MLIRTokenKind, StringLiteral

REPLACEMENT_CHARACTER = "\ufffd"  # what `decode_source` turns bytes that are not UTF-8 into

_STRING = re.compile(r'"(?:[^"\\\n\v\f]++|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*+"')
_STRING_BODY = re.compile(r'(?:[^"\\\n\v\f]++|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*+')
# What a string body may not hold unescaped (the class `_STRING` excludes, less the quote).
_NOT_IN_PLAIN_STRING = ("\\", "\n", "\v", "\f")


def plain_string_end(text: str, start: int) -> int | None:
    """The end (past the closing quote) of the string literal opening at `start` when it has no
    escape, as `_STRING` would match it; None when it has one or is not closed on its line."""
    close = text.find('"', start + 1)
    if close < 0 or any(text.find(c, start + 1, close) >= 0 for c in _NOT_IN_PLAIN_STRING):
        return None
    return close + 1


def plain_string_contents(span: Span) -> str | None:
    """The text between the quotes of a string literal token without escapes (what it stands
    for, taken in one copy); None when it has escapes to resolve."""
    text = span.input.content
    if text.find("\\", span.start, span.end) >= 0:
        return None
    return text[span.start + 1:span.end - 1]


def describe_character(char: str) -> str:
    """A character as a message names it: printable ones quoted, others by code point."""
    if char == REPLACEMENT_CHARACTER:
        return "bytes that are not UTF-8 text (is this a binary file?)"
    code = f"U+{ord(char):04X}"
    if not char.isprintable():
        return f"control character {code} (is this a binary file?)"
    if char.isascii():
        return f"character '{char}'"
    return f"character '{char}' ({code}); MLIR names, numbers and punctuation are ASCII"


class WeirLexer(MLIRLexer):
    """The MLIR lexer weir parses with (see the module docstring for what it corrects)."""

    _unescaped_characters_regex = _STRING

    def lex(self) -> MLIRToken:
        self._consume_whitespace()
        char = self._peek_chars()
        if char is not None and (not char.isascii() or not char.isprintable()):
            raise ParseError(Span(self.pos, self.pos + 1, self.input),
                             f"unexpected {describe_character(char)}")
        try:
            return super().lex()
        except ParseError as e:
            if char is None or not e.msg.startswith("Unexpected character"):
                raise
            raise ParseError(e.span, f"unexpected {describe_character(char)}") from None

    def _lex_string_literal(self, start_pos: Position) -> MLIRToken:
        end = plain_string_end(self.input.content, start_pos)
        if end is not None:
            # What xDSL returns for a string without escapes, without its scans and copies.
            self.pos = end
            return Token(MLIRTokenKind.STRING_LIT, StringLiteral(start_pos, end, self.input))
        if _STRING.match(self.input.content, start_pos) is None:
            raise ParseError(Span(start_pos, start_pos + 1, self.input),
                             self._why_unterminated(start_pos))
        return super()._lex_string_literal(start_pos)

    def _why_unterminated(self, start_pos: Position) -> str:
        """Why the string starting at `start_pos` has no closing quote where one is needed."""
        text = self.input.content
        body = _STRING_BODY.match(text, start_pos + 1)
        end = body.end() if body is not None else start_pos + 1
        if end >= len(text):
            return "string literal is not closed before the end of the input"
        stopper = text[end]
        if stopper == "\\":
            escape = text[end:end + 3].split("\n")[0]
            return (f"invalid escape '{escape}' in string literal (valid: \\\", \\\\, \\n, \\t "
                    "and two hex digits)")
        return "string literal is not closed before the end of the line"
