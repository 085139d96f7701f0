"""Every parsed op carries `file:line:col`; passes report errors through `error_at`."""

from xdsl.dialects.arith import AddfOp
from xdsl.dialects.builtin import FileLineColLoc, ModuleOp

from weir.ir import error_at, location_of, parse_module, print_module

SRC = """\
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %a : tensor<4xf32>
    %1 = scf.execute_region -> tensor<4xf32> {
      scf.yield %0 : tensor<4xf32>
    }
  func.return %1 : tensor<4xf32>
}
"""


def test_every_op_has_a_file_line_col_loc():
    module = parse_module(SRC, "loc.mlir")
    for op in module.walk():
        assert isinstance(op.location, FileLineColLoc), op.name


def test_op_locations_are_their_start_tokens():
    module = parse_module(SRC, "loc.mlir")
    found = {op.name: location_of(op) for op in module.walk() if op is not module}
    assert found["func.func"] == ("loc.mlir", 1, 1)
    assert found["arith.addf"] == ("loc.mlir", 2, 3)
    assert found["scf.execute_region"] == ("loc.mlir", 3, 5)
    assert found["scf.yield"] == ("loc.mlir", 4, 7)
    assert found["func.return"] == ("loc.mlir", 6, 3)


def test_explicit_module_and_implicit_module_locations():
    explicit = parse_module("\n  module {\n  }", "m.mlir")
    assert location_of(explicit) == ("m.mlir", 2, 3)
    implicit = parse_module("\n\nfunc.func private @g()", "m.mlir")
    assert location_of(implicit) == ("m.mlir", 1, 1)
    (g,) = implicit.body.block.ops
    assert location_of(g) == ("m.mlir", 3, 1)


def test_explicit_frontend_location_is_kept():
    module = parse_module('%0 = arith.constant 1 : i32 loc("model.py":12:4)', "x.mlir")
    (op,) = module.body.block.ops
    assert location_of(op) == ("model.py", 12, 4)


def test_error_at_and_fallback_to_ancestor():
    module = parse_module(SRC, "loc.mlir")
    addf = next(op for op in module.walk() if isinstance(op, AddfOp))
    err = error_at(addf, "cannot lower\nthis")
    assert str(err) == "loc.mlir:2:3: error: cannot lower this"
    # An op created by a pass has UnknownLoc: report its parent's position.
    new_op = AddfOp(addf.lhs, addf.rhs)
    addf.parent_block().insert_op_after(new_op, addf)  # type: ignore[union-attr]
    assert location_of(new_op) == ("loc.mlir", 1, 1)


def test_detached_op_without_location():
    assert location_of(ModuleOp([])) == ("<unknown>", 0, 0)


def test_locations_not_printed_by_default():
    module = parse_module(SRC, "loc.mlir")
    assert "loc(" not in print_module(module)
    assert 'loc("loc.mlir":2:3)' in print_module(module, locations=True)


def test_ops_the_parser_builds_itself_inherit_a_location():
    src = (
        "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  %e = tensor.empty() : tensor<4xf32>\n"
        "  %0 = linalg.add ins(%a, %a : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>\n"
        "  func.return %0 : tensor<4xf32>\n"
        "}\n"
    )
    module = parse_module(src, "l.mlir")
    add = next(op for op in module.walk() if op.name == "linalg.add")
    inner = [op for op in add.walk() if op is not add]
    assert inner, "linalg.add builds its body while parsing"
    for op in inner:
        assert location_of(op) == ("l.mlir", 3, 3)
