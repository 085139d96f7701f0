"""Defect (a): xDSL 0.74 drops arg/res attributes of `func.func` declarations."""

from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp, IndexType, IntegerAttr, StringAttr, UnitAttr
from xdsl.dialects.func import FuncOp
from xdsl.ir import Region

from weir.ir import parse_module, print_module

DECL = (
    "func.func private @module_b.mul(tensor<4096xf32>, tensor<4096xf32>, "
    "tensor<4096xf32> {iree.abi.output = 0 : index}) -> tensor<4096xf32>"
)


def _only_func(src: str) -> FuncOp:
    module = parse_module(src, "f.mlir")
    (op,) = module.body.block.ops
    assert isinstance(op, FuncOp)
    return op


def test_unnamed_declaration_keeps_arg_attrs_on_parse():
    func = _only_func(DECL)
    assert func.arg_attrs is not None
    dicts = [d.data for d in func.arg_attrs.data]
    assert dicts[:2] == [{}, {}]
    assert dicts[2] == {"iree.abi.output": IntegerAttr(0, IndexType())}


def test_unnamed_declaration_prints_arg_attrs():
    text = print_module(parse_module(DECL, "f.mlir"))
    assert DECL in text


def test_named_declaration_parses_and_prints_unnamed_with_attrs():
    func = _only_func("func.func private @f(%a: tensor<4xf32> {iree.abi.output = 0 : index}) -> (tensor<4xf32> {r = 1 : i32})")
    assert not func.body.blocks
    assert func.arg_attrs is not None and "iree.abi.output" in func.arg_attrs.data[0].data
    assert func.res_attrs is not None and "r" in func.res_attrs.data[0].data
    text = print_module(func.parent_op())  # type: ignore[arg-type]
    assert "func.func private @f(tensor<4xf32> {iree.abi.output = 0 : index}) -> (tensor<4xf32> {r = 1 : i32})" in text


def test_declaration_function_attributes_survive():
    src = 'func.func private @f(tensor<4xf32>) -> tensor<4xf32> attributes {iree.abi.model = "coarse-fences", nosideeffects}'
    func = _only_func(src)
    assert func.attributes["iree.abi.model"] == StringAttr("coarse-fences")
    assert func.attributes["nosideeffects"] == UnitAttr()
    assert src in print_module(func.parent_op())  # type: ignore[arg-type]


def test_declaration_without_attrs_prints_like_mlir():
    src = "func.func private @g(i32, f32) -> (i32, f32)"
    func = _only_func(src)
    assert func.arg_attrs is None and func.res_attrs is None
    assert src in print_module(func.parent_op())  # type: ignore[arg-type]


def test_definition_with_attrs_round_trips():
    src = (
        "func.func @g(%a: tensor<4xf32> {iree.abi.output = 0 : index}) -> (tensor<4xf32> {foo = 1 : i32}) "
        'attributes {iree.abi.model = "coarse-fences"} {\n    func.return %a : tensor<4xf32>\n  }'
    )
    text = print_module(parse_module(src, "g.mlir"))
    assert src in text
    again = parse_module(text, "again.mlir")
    assert print_module(again) == text


def test_printed_declaration_reparses_identically():
    module = parse_module(DECL, "f.mlir")
    text = print_module(module)
    func = next(iter(parse_module(text, "again.mlir").body.block.ops))
    assert isinstance(func, FuncOp) and func.arg_attrs is not None
    assert func.arg_attrs.data[2] == DictionaryAttr({"iree.abi.output": IntegerAttr(0, IndexType())})


def test_function_built_in_code_prints_its_declaration_attrs():
    func = FuncOp(
        "h",
        ((IndexType(),), ()),
        Region(),
        visibility="private",
        arg_attrs=ArrayAttr([DictionaryAttr({"x": UnitAttr()})]),
    )
    assert "func.func private @h(index {x})" in print_module(ModuleOp([func]))
