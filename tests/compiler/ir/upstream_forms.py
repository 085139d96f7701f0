"""Helpers for the tests of MLIR as upstream tools print it (test_ir_upstream_*.py)."""

from __future__ import annotations

from weir.ir import parse_module, print_module

FUNC_HEAD = (
    "func.func @f(%i: i32, %j: i32, %x: f32, %y: f32, %h: f16, %b: i1, %n: index,\n"
    "             %m: tensor<2x3xf32>, %mt: tensor<3x2xf32>, %sq: tensor<2x2xf32>,\n"
    "             %r: tensor<2xf32>, %d: tensor<?x3xf32>, %bt: tensor<2xi1>) {\n"
)


def in_function(body: str) -> str:
    """`body` (ops, one a line) inside a function with arguments of many types to use."""
    lines = "".join(f"  {line}\n" for line in body.strip("\n").splitlines())
    return FUNC_HEAD + lines + "  return\n}\n"


def round_trip(src: str, name: str = "forms.mlir") -> str:
    """Parse `src`, print it, and check that what is printed reads back and prints the same,
    in the custom form, the generic form and with locations. Returns the custom print."""
    module = parse_module(src, name)
    text = print_module(module)
    again = parse_module(text, "printed.mlir")
    assert print_module(again) == text
    generic = print_module(module, generic=True)
    assert print_module(parse_module(generic, "generic.mlir")) == text
    located = print_module(module, locations=True)
    assert print_module(parse_module(located, "located.mlir")) == text
    return text
