"""The context knows exactly the dialects weir accepts, plus registered extensions."""

import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Dialect
from xdsl.irdl import IRDLOperation, irdl_op_definition

from weir.errors import CompileError
from weir.ir import make_context, parse_module, print_module, register_dialect
from weir.ir import registry


@pytest.mark.parametrize("name", ["builtin", "func", "arith", "math", "tensor", "linalg", "scf", "cf"])
def test_upstream_dialects_loaded(name):
    assert make_context().get_optional_dialect(name) is not None


def test_contexts_are_independent():
    a, b = make_context(), make_context()
    assert a is not b
    a.allow_unregistered = True
    assert b.allow_unregistered is False


def test_missing_weir_dialect_module_is_skipped():
    assert registry._import_optional(("definitely_not_a_dialect_module",)) is None


def test_register_dialect_extends_and_can_reuse_upstream_name(monkeypatch):
    @irdl_op_definition
    class BatchThing(IRDLOperation):
        name = "linalg.weir_test_batch_thing"

    monkeypatch.setattr(registry, "_extra_dialects", [])
    register_dialect(Dialect("linalg", [BatchThing], []))
    try:
        module = parse_module('"linalg.weir_test_batch_thing"() : () -> ()', "x.mlir")
        assert isinstance(next(iter(module.body.block.ops)), BatchThing)
        assert make_context().get_optional_op("linalg.matmul") is not None
    finally:
        registry._extra_dialects.clear()
        registry._listeners[0]()
    with pytest.raises(CompileError):
        parse_module('"linalg.weir_test_batch_thing"() : () -> ()', "x.mlir")


def test_register_rejects_non_dialects():
    with pytest.raises(TypeError):
        register_dialect("flow")  # type: ignore[arg-type]


def test_module_round_trip_is_stable():
    src = """\
func.func @main(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tensor.empty() : tensor<4xf32>
  %1 = linalg.add ins(%arg0, %arg1 : tensor<4xf32>, tensor<4xf32>) outs(%0 : tensor<4xf32>) -> tensor<4xf32>
  %c0 = arith.constant 0 : index
  %2 = scf.for %i = %c0 to %c0 step %c0 iter_args(%acc = %1) -> (tensor<4xf32>) {
    %3 = math.exp %acc : tensor<4xf32>
    scf.yield %3 : tensor<4xf32>
  }
  cf.br ^bb1
^bb1:
  func.return %2 : tensor<4xf32>
}
"""
    text = print_module(parse_module(src, "rt.mlir"))
    assert isinstance(parse_module(text, "rt2.mlir"), ModuleOp)
    assert print_module(parse_module(text, "rt2.mlir")) == text
