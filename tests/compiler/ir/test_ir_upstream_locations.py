"""Locations and resource blobs as upstream MLIR prints them: `loc(...)` of every kind (file,
range, name, callsite, fused with and without metadata, unknown), `#loc` aliases defined before
or after their use (MLIR prints them at the end of the file), and `{-# dialect_resources #-}`
blobs used by `dense_resource<...>`."""

from __future__ import annotations

import struct

import pytest

from upstream_forms import round_trip
from weir.errors import CompileError
from weir.ir import Blob, constants_of, location_of, parse_module, print_module


def _locations(src: str, name: str = "l.mlir") -> dict[str, tuple[str, int, int]]:
    """The location of each op of `src`, by the first tag found in its attributes or name."""
    module = parse_module(src, name)
    found: dict[str, tuple[str, int, int]] = {}
    for op in module.walk():
        tag = op.attributes.get("tag")
        found[tag.data if tag is not None else op.name] = location_of(op)  # type: ignore[attr-defined]
    return found


def test_every_kind_of_location_is_read() -> None:
    src = """func.func @f(%a: f32 loc("m.py":1:9), %b: f32 loc(unknown)) -> f32 {
  %0 = arith.addf %a, %b {tag = "file"} : f32 loc("m.py":3:4)
  %1 = arith.addf %0, %b {tag = "range"} : f32 loc("m.py":4:5 to 6:7)
  %2 = arith.addf %1, %b {tag = "range_on_one_line"} : f32 loc("m.py":5:6 to :20)
  %3 = arith.addf %2, %b {tag = "line_only"} : f32 loc("m.py":6)
  %4 = arith.addf %3, %b {tag = "name"} : f32 loc("aten::add"("m.py":7:1))
  %5 = arith.addf %4, %b {tag = "bare_name"} : f32 loc("relu")
  %6 = arith.addf %5, %b {tag = "callsite"} : f32 loc(callsite("m.py":8:1 at "n.py":2:2))
  %7 = arith.addf %6, %b {tag = "fused"} : f32 loc(fused["m.py":9:1, "n.py":3:3])
  %8 = arith.addf %7, %b {tag = "fused_metadata"} : f32 loc(fused<"fx">["m.py":1:1])
  %9 = arith.addf %8, %b {tag = "unknown"} : f32 loc(unknown)
  return %9 : f32 loc("m.py":10:1)
} loc("m.py":1:1)
"""
    found = _locations(src)
    assert found["file"] == ("m.py", 3, 4)
    assert found["range"] == ("m.py", 4, 5)
    assert found["range_on_one_line"] == ("m.py", 5, 6)
    assert found["line_only"] == ("m.py", 6, 0)
    # Anything but a file location is replaced by the op's own position in the text.
    assert found["name"] == ("l.mlir", 6, 3)
    assert found["bare_name"] == ("l.mlir", 7, 3)
    assert found["callsite"] == ("l.mlir", 8, 3)
    assert found["fused"] == ("l.mlir", 9, 3)
    assert found["fused_metadata"] == ("l.mlir", 10, 3)
    assert found["unknown"] == ("l.mlir", 11, 3)
    assert found["func.return"] == ("m.py", 10, 1)
    assert found["func.func"] == ("m.py", 1, 1)
    round_trip(src)


ALIASES_AT_THE_END = """module {
  func.func @f(%a: f32 loc(#loc1)) -> f32 {
    %0 = arith.addf %a, %a {tag = "add"} : f32 loc(#loc2)
    %1 = arith.mulf %0, %a {tag = "mul"} : f32 loc(#loc3)
    %2 = arith.subf %1, %a {tag = "sub"} : f32 loc(#loc4)
    return %2 : f32 loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc = loc("model.py":1:1)
#loc1 = loc("model.py":2:8)
#loc2 = loc("model.py":3:5)
#loc3 = loc("aten::mul"(#loc2))
#loc4 = loc(callsite(#loc5 at #loc2))
#loc5 = loc("model.py":9:9)
"""


def test_location_aliases_defined_after_their_use() -> None:
    found = _locations(ALIASES_AT_THE_END)
    assert found["add"] == ("model.py", 3, 5)
    assert found["func.func"] == ("model.py", 1, 1)
    assert found["func.return"] == ("model.py", 1, 1)
    assert found["builtin.module"] == ("model.py", 1, 1)
    assert found["mul"] == ("l.mlir", 4, 5)  # a name location: the op's own position
    assert found["sub"] == ("l.mlir", 5, 5)
    module = parse_module(ALIASES_AT_THE_END, "l.mlir")
    text = print_module(module, locations=True)
    assert 'func.func @f(%a: f32 loc("model.py":2:8))' in text
    round_trip(ALIASES_AT_THE_END)


def test_location_aliases_defined_before_their_use() -> None:
    src = """#loc = loc("model.py":1:1)
#loc1 = loc("model.py":4:2)
#loc2 = loc(fused<"torch">[#loc, #loc1])
module {
  func.func @f(%a: f32) -> f32 {
    %0 = arith.addf %a, %a {tag = "add"} : f32 loc(#loc1)
    %1 = arith.addf %0, %a {tag = "fused"} : f32 loc(#loc2)
    return %1 : f32 loc(#loc)
  } loc(#loc)
} loc(#loc)
"""
    found = _locations(src)
    assert found["add"] == ("model.py", 4, 2)
    assert found["fused"] == ("l.mlir", 7, 5)
    round_trip(src)


@pytest.mark.parametrize(("src", "message"), [
    (ALIASES_AT_THE_END.replace('#loc3 = loc("aten::mul"(#loc2))\n', ""),
     r"l\.mlir:4:52: error: undefined location alias '#loc3'"),
    ('func.func @f() {\n  return loc(#a)\n}\n#a = loc(#b)\n#b = loc(#a)\n',
     r"l\.mlir:4:10: error: location alias '#b' is defined in terms of itself"),
    ('#m = affine_map<(d0) -> (d0)>\nfunc.func @f() {\n  return loc(#m)\n}\n',
     r"l\.mlir:3:14: error: '#m' is not a location"),
])
def test_bad_location_aliases(src: str, message: str) -> None:
    with pytest.raises(CompileError, match=message):
        parse_module(src, "l.mlir")


def test_dense_resource_blobs() -> None:
    blob = Blob(struct.pack("<3f", 1.0, -2.0, 0.5)).to_hex()
    src = f"""module attributes {{torch.debug_module_name = "Net"}} {{
  func.func @f() -> (tensor<3xf32>, tensor<3xf32>) {{
    %0 = arith.constant dense_resource<torch_tensor_3_torch.float32> : tensor<3xf32>
    %1 = arith.constant dense_resource<__elided__> : tensor<3xf32>
    return %0, %1 : tensor<3xf32>, tensor<3xf32>
  }}
}}

{{-#
  dialect_resources: {{
    builtin: {{
      torch_tensor_3_torch.float32: "{blob}"
    }}
  }}
#-}}
"""
    module = parse_module(src, "r.mlir")
    data = constants_of(module).data("torch_tensor_3_torch.float32")
    assert data is not None and struct.unpack("<3f", data) == (1.0, -2.0, 0.5)
    assert constants_of(module).data("__elided__") is None
    text = print_module(module)
    assert f'torch_tensor_3_torch.float32: "{blob}"' in text
    assert print_module(parse_module(text, "again.mlir")) == text
