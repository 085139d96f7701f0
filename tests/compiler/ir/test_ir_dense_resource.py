"""Defect (c): dense_resource blobs must live in a per-parse weir store, not xDSL's global."""

import struct

from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
from xdsl.dialects.builtin import Builtin, DenseResourceAttr

from weir.ir import Blob, ConstantStore, constants_of, parse_module, parse_source, print_module


def _src(values: tuple[float, float]) -> str:
    blob = Blob(struct.pack("<2f", *values)).to_hex()
    return (
        "%c = arith.constant dense_resource<blob1> : tensor<2xf32>\n"
        f'{{-# dialect_resources: {{ builtin: {{ blob1: "{blob}" }} }} #-}}\n'
    )


def test_blob_is_in_the_parse_store():
    parsed = parse_source(_src((1.0, 2.0)), "r.mlir")
    (op,) = parsed.module.body.block.ops
    attr = op.value
    assert isinstance(attr, DenseResourceAttr)
    assert attr.resource_handle.data == "blob1"
    blob = parsed.constants.get("blob1")
    assert blob is not None and blob.alignment == 4
    assert struct.unpack("<2f", blob.data) == (1.0, 2.0)
    assert constants_of(parsed.module) is parsed.constants


def test_two_parses_with_same_blob_name_do_not_interfere():
    first = parse_module(_src((1.0, 2.0)), "a.mlir")
    second = parse_module(_src((3.0, 4.0)), "b.mlir")
    assert struct.unpack("<2f", constants_of(first).data("blob1")) == (1.0, 2.0)
    assert struct.unpack("<2f", constants_of(second).data("blob1")) == (3.0, 4.0)
    # Handles are not renamed by xDSL's global de-duplication.
    for module in (first, second):
        (op,) = module.body.block.ops
        assert op.value.resource_handle.data == "blob1"


def test_xdsl_global_store_is_untouched():
    interface = Builtin.get_interface(OpAsmDialectInterface)
    assert interface is not None
    before = dict(interface._blob_storage)
    parse_module(_src((5.0, 6.0)), "c.mlir")
    assert interface._blob_storage == before


def test_resource_section_before_use_and_elided_blob():
    src = (
        '{-# dialect_resources: { builtin: { w: "0x0800000001020304" } } #-}\n'
        "%a = arith.constant dense_resource<w> : tensor<4xi8>\n"
        "%b = arith.constant dense_resource<__elided__> : tensor<4xi8>\n"
    )
    store = parse_source(src, "e.mlir").constants
    assert store.get("w") == Blob(bytes([1, 2, 3, 4]), 8)
    assert "__elided__" in store and store.get("__elided__") is None


def test_print_emits_resources_from_weir_store():
    module = parse_module(_src((1.0, 2.0)), "p.mlir")
    text = print_module(module)
    assert "dense_resource<blob1> : tensor<2xf32>" in text
    assert f'blob1: "{Blob(struct.pack("<2f", 1.0, 2.0)).to_hex()}"' in text
    reparsed = parse_source(text, "p2.mlir")
    assert reparsed.constants.get("blob1") == constants_of(module).get("blob1")


def test_store_add_picks_fresh_names():
    store = ConstantStore()
    assert store.add(b"\x00", "w") == "w"
    assert store.add(b"\x01", "w") == "w_0"
    assert store.data("w_0") == b"\x01"
