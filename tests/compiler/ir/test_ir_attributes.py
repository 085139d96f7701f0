"""Defect (d): attributes weir uses must parse as real typed attributes, never opaque text."""

import pytest
from xdsl.dialects.builtin import DictionaryAttr, IndexType, IntegerAttr, StringAttr, UnregisteredAttr
from xdsl.dialects.func import FuncOp

from weir.errors import CompileError
from weir.ir import make_context, parse_attribute, parse_module, print_module
from weir.ir.hal_attrs import HAL_ATTRIBUTES, DeviceAffinityAttr, DeviceOptimalAttr, DevicePromiseAttr


def test_context_rejects_unregistered():
    assert make_context().allow_unregistered is False


def test_hal_attrs_are_registered_in_context():
    ctx = make_context()
    for attr in HAL_ATTRIBUTES:
        assert ctx.get_optional_attr(attr.name) is attr


def test_device_promise_parses_as_typed_attr():
    attr = parse_attribute("#hal.device.promise<@device_a>")
    assert isinstance(attr, DevicePromiseAttr)
    assert attr.device_name == "device_a" and attr.queue_list == ()
    assert str(attr) == "#hal.device.promise<@device_a>"


def test_device_affinity_with_queues():
    attr = parse_attribute("#hal.device.affinity<@dev, [0, 2]>")
    assert isinstance(attr, DeviceAffinityAttr)
    assert attr.queue_list == (0, 2)
    assert str(attr) == "#hal.device.affinity<@dev, [0, 2]>"


def test_device_optimal_nests_promises():
    attr = parse_attribute("#hal.device.optimal<[#hal.device.promise<@a>, #hal.device.promise<@b>]>")
    assert isinstance(attr, DeviceOptimalAttr)
    assert [d.device_name for d in attr.devices.data] == ["a", "b"]  # type: ignore[attr-defined]
    assert attr == DeviceOptimalAttr([DevicePromiseAttr("a"), DevicePromiseAttr("b")])


def test_hal_attr_in_function_attributes_round_trips():
    src = "func.func private @f(tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) -> tensor<4xf32>"
    module = parse_module(src, "a.mlir")
    (func,) = module.body.block.ops
    assert isinstance(func, FuncOp) and func.arg_attrs is not None
    assert isinstance(func.arg_attrs.data[0].data["iree.abi.affinity"], DevicePromiseAttr)
    assert src in print_module(module)


def test_unknown_dialect_attribute_is_an_error_not_opaque():
    with pytest.raises(CompileError) as info:
        parse_attribute("#nope.thing<1>", "x.mlir")
    assert "not registered" in info.value.message


def test_iree_abi_dictionary_entries_survive():
    src = (
        "func.func @f(%a: tensor<4xf32> {iree.abi.encoding = tensor<4xf32>}) -> (tensor<4xf32> {iree.abi.output = 0 : index}) "
        'attributes {iree.abi.model = "coarse-fences", iree.reflection = {iree.abi.declaration = "sync func @f"}} {\n'
        "    func.return %a : tensor<4xf32>\n  }"
    )
    module = parse_module(src, "abi.mlir")
    (func,) = module.body.block.ops
    assert isinstance(func, FuncOp)
    assert func.res_attrs is not None
    assert func.res_attrs.data[0].data["iree.abi.output"] == IntegerAttr(0, IndexType())
    assert func.attributes["iree.abi.model"] == StringAttr("coarse-fences")
    refl = func.attributes["iree.reflection"]
    assert isinstance(refl, DictionaryAttr)
    assert refl.data["iree.abi.declaration"] == StringAttr("sync func @f")
    for op in module.walk():
        for value in op.attributes.values():
            assert not isinstance(value, UnregisteredAttr)
    assert src in print_module(module)
