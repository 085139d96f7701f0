"""String literals: weir's lexer finds a string without escapes by itself (resource blobs are
hundreds of megabytes of them); every string must still come out as xDSL's lexer makes it."""

from __future__ import annotations

import pytest
from xdsl.utils.lexer import Input
from xdsl.utils.mlir_lexer import MLIRLexer, MLIRTokenKind

from weir.ir.lexer import plain_string_contents, WeirLexer
from weir.ir.parse import parse_source

STRINGS = ['"abc"', '""', '"a\\"b"', '"a\\0Ab"', '"tab\\there"', '"a\rb"', '"caf\u00e9"',
           '"0x04000000ABCD"', '"\\\\"', '"a" "b"', '"quote\\"" "next"']


@pytest.mark.parametrize("text", STRINGS)
def test_string_tokens_match_xdsl(text: str) -> None:
    ours, theirs = WeirLexer(Input(text, "t")), MLIRLexer(Input(text, "t"))
    while True:
        a, b = ours.lex(), theirs.lex()
        assert (a.kind, a.span.start, a.span.end) == (b.kind, b.span.start, b.span.end)
        if a.kind == MLIRTokenKind.EOF:
            break


@pytest.mark.parametrize("text, contents", [('"0x0400"', "0x0400"), ('""', ""),
                                            ('"a\\"b"', None)])
def test_plain_string_contents(text: str, contents: str | None) -> None:
    assert plain_string_contents(WeirLexer(Input(text, "t")).lex().span) == contents


def test_blob_with_escapes_still_reads() -> None:
    """A blob written with hex escapes (legal, if unusual) goes the long way and decodes."""
    src = ('module { func.func @f() -> tensor<1xi8> { %0 = arith.constant '
           'dense_resource<b> : tensor<1xi8>\n return %0 : tensor<1xi8> } }\n'
           '{-#\n dialect_resources: { builtin: { b: "0x01000000\\30\\31" } }\n#-}\n')
    parsed = parse_source(src, "t.mlir")
    blob = parsed.constants.get("b")
    assert blob is not None and (blob.alignment, blob.data) == (1, b"\x01")
