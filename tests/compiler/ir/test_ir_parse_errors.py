"""Every parse or verify failure is a one-line CompileError at the offending file:line:col."""

import pytest

from weir.errors import CompileError
from weir.ir import parse_attribute, parse_module


def _error(src, filename="prog.mlir") -> CompileError:
    with pytest.raises(CompileError) as info:
        parse_module(src, filename)
    err = info.value
    assert "\n" not in str(err) and "^" not in err.message
    return err


def test_unregistered_op_custom_form_points_at_name():
    err = _error("func.func @f() {\n  %0 = arith.constant 1 : i32\n  %1 = foo.bar %0 : i32\n  func.return\n}")
    assert (err.filename, err.line, err.col) == ("prog.mlir", 3, 8)
    assert str(err) == "prog.mlir:3:8: error: Operation foo.bar is not registered"


def test_unregistered_op_generic_form():
    err = _error('\n\n  "foo.bar"() : () -> ()')
    assert (err.line, err.col) == (3, 3)


def test_type_mismatch_points_at_operand():
    err = _error("func.func @h() {\n  %0 = arith.constant 1 : i32\n  %1 = arith.addi %0, %0 : i64\n}")
    assert (err.line, err.col) == (3, 19)
    assert err.message == "'%0' has type i32, but is used here as i64"


def test_empty_input():
    for src in ("", "   \n\n", "// only a comment\n", b""):
        err = _error(src)
        assert (err.line, err.col, err.message) == (1, 1, "empty input: expected a module")


@pytest.mark.parametrize("junk", [b"\x7fELF\x02\x01\x00\x00", b"\xff\xfe\xfd garbage", bytes(range(256)), b"\x00"])
def test_binary_garbage_is_clean(junk):
    err = _error(junk)
    assert err.line >= 1 and err.col >= 1


def test_nul_byte_location():
    err = _error("module {\n  \x00\n}")
    assert (err.line, err.col) == (2, 3)


def test_deep_nesting_is_clean():
    _error("%c = arith.constant dense<" + "[" * 5000 + "1" + "]" * 5000 + "> : tensor<1xi32>")


def test_unterminated_module():
    err = _error("module {\n  func.func @f() {\n")
    assert err.line >= 2


def test_verify_error_names_the_failing_op():
    err = _error("func.func @h() -> i32 {\n  %0 = arith.constant 1 : i32\n  func.return\n}")
    assert (err.line, err.col) == (3, 3)
    assert err.message.startswith("'func.return' op ")


def test_missing_terminator_reported_at_offending_op():
    err = _error("module {\n  func.func @h() {\n    %0 = arith.constant 1 : i32\n  }\n}")
    assert (err.line, err.col) == (3, 5)


def test_function_body_needs_named_args():
    err = _error("func.func @f(i32) {\n  func.return\n}")
    assert err.line == 1


def test_bad_blob_is_located():
    err = _error('%c = arith.constant dense_resource<b> : tensor<1xi8>\n{-# dialect_resources: { builtin: { b: "zz" } } #-}')
    assert (err.line, err.col) == (2, 40)


def test_unsupported_metadata_section():
    err = _error("{-# external_resources: { x: {} } #-}\nmodule {}")
    assert (err.line, err.col) == (1, 5)


@pytest.mark.parametrize("text", ['"unterminated', "\x01"])
def test_attribute_that_fails_on_its_first_token_is_clean(text):
    # The parser lexes the first token when it is built; that failure is located like any other.
    with pytest.raises(CompileError) as info:
        parse_attribute(text, "flag")
    assert (info.value.filename, info.value.line, info.value.col) == ("flag", 1, 1)
