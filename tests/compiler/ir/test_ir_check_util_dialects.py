"""The `check` and `util` dialects read and print IREE's textual forms, and their verifiers
report type mistakes at the op's position."""

from __future__ import annotations

import pytest

from weir.errors import CompileError
from weir.ir import parse_module, print_module

FORMS = [
    "check.expect_true(%i) : i32",
    "check.expect_false(%i) : i32",
    "check.expect_all_true(%m) : tensor<2xi1>",
    "check.expect_eq(%a, %a) : tensor<2xf32>",
    "check.expect_eq_const(%a, dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>) : tensor<2xf32>",
    "check.expect_almost_eq(%a, %a) : tensor<2xf32>",
    "check.expect_almost_eq(%a, %a, atol 1.000000e-02) : tensor<2xf32>",
    "check.expect_almost_eq(%a, %a, rtol 5.000000e-01) : tensor<2xf32>",
    "check.expect_almost_eq_const(%a, dense<1.000000e+00> : tensor<2xf32>, atol 0.000000e+00, "
    "rtol 1.000000e-03) : tensor<2xf32>",
    "check.expect_eq(%a, %a) {note = \"kept\"} : tensor<2xf32>",
]


def _function(body: str) -> str:
    return ("func.func @t(%i: i32, %m: tensor<2xi1>, %a: tensor<2xf32>, %n: tensor<2xi32>) {\n"
            f"  {body}\n  func.return\n}}")


@pytest.mark.parametrize("form", FORMS)
def test_check_forms_round_trip(form: str) -> None:
    printed = print_module(parse_module(_function(form), "t.mlir"))
    assert f"    {form}\n" in printed


def test_default_tolerances_are_irees() -> None:
    module = parse_module(_function("check.expect_almost_eq(%a, %a) : tensor<2xf32>"), "t.mlir")
    (op,) = [o for o in module.walk() if o.name == "check.expect_almost_eq"]
    assert op.tolerance_values() == (pytest.approx(1e-4), 0.0)  # type: ignore[attr-defined]


@pytest.mark.parametrize("body, message", [
    ("check.expect_eq_const(%a, dense<[1.0, 2.0, 3.0]> : tensor<3xf32>) : tensor<2xf32>",
     "lhs and rhs must have the same type, got tensor<2xf32> and tensor<3xf32>"),
    ("check.expect_almost_eq(%n, %n) : tensor<2xi32>",
     "operands must be tensors of floats, got tensor<2xi32>"),
    ("check.expect_all_true(%a) : tensor<2xf32>",
     "operand must be a tensor of signless integers, got tensor<2xf32>"),
    ("check.expect_almost_eq(%a, %a, atol -1.0) : tensor<2xf32>",
     "atol must be non-negative, got -1.0"),
    ("check.expect_eq<%i>(%a, %a) : tensor<2xf32>",
     "'check.expect_eq' with a device operand is not supported"),
    ("check.expect_eq_const(%a, 5 : i32) : tensor<2xf32>",
     "the expected value must be a dense<...> or dense_resource<...> elements attribute"),
    ("%u = util.unfoldable_constant \"text\"", "util.unfoldable_constant takes a typed constant"),
])
def test_mistakes_are_located(body: str, message: str) -> None:
    with pytest.raises(CompileError) as info:
        parse_module(_function(body), "t.mlir")
    assert info.value.line == 2 and message in info.value.message


def test_unfoldable_constant_forms_round_trip() -> None:
    body = ("%x = util.unfoldable_constant dense<[1, 2]> : tensor<2xi32>\n"
            "  %y = util.unfoldable_constant {note} 2.500000e+00 : f32")
    printed = print_module(parse_module(_function(body), "t.mlir"))
    assert "%x = util.unfoldable_constant dense<[1, 2]> : tensor<2xi32>" in printed
    assert "%y = util.unfoldable_constant {note} 2.500000e+00 : f32" in printed
