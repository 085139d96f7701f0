"""The reference payload codec: round trip and verification of every cross-reference and field."""

from __future__ import annotations

import json
from typing import Any

import pytest
from runtime_builders import mul_kernel

from weir.errors import ModuleFormatError
from weir.format.kernel_codec import (
    _op_json,
    decode_reference_executable,
    encode_reference_executable,
)
from weir.format.kernel_description import (
    Conv2D,
    Empty,
    EntryPoint,
    Fill,
    Generic,
    Load,
    Pool2D,
    ReferenceExecutable,
    ScalarOp,
    Store,
)


def test_round_trip() -> None:
    exe = decode_reference_executable(mul_kernel())
    assert encode_reference_executable(exe) == mul_kernel()
    assert exe.entry_points[0].name == "mul_dispatch_0"


def _mutated(path: list[Any], value: Any) -> bytes:
    payload = json.loads(mul_kernel())
    node = payload
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return json.dumps(payload).encode()


OPS = ["entry_points", 0, "ops"]


@pytest.mark.parametrize("path, value, message", [
    (OPS + [0, "binding"], 3, "out of range"),
    (OPS + [0, "dtype"], "f128", "unknown element type 'f128'"),
    (OPS + [0, "shape"], [{"push": 0}], "out of range"),
    (OPS + [3, "inputs"], [0, 5], "out of range"),
    (OPS + [3, "body", 0, "op"], "frobf", "unknown scalar op 'frobf'"),
    (OPS + [3, "body", 0, "args"], [0, 3], "out of range"),
    (OPS + [3, "body", 0, "args"], [0], "takes 2 operand"),
    (OPS + [3, "iterators"], ["sideways"], "unknown iterator"),
    (OPS + [3, "maps"], [[0], [0]], "2 maps for 3 operands"),
    (OPS + [3, "maps", 0], [0, 0], "has 2 entries for an operand of rank 1"),
    (OPS + [3, "yields"], [9], "out of range"),
    (OPS + [4, "value"], 4, "out of range"),
    (OPS + [4, "op"], "frob", "unknown kernel op 'frob'"),
    (["format"], "other", "unknown payload format"),
])
def test_verification(path: list[Any], value: Any, message: str) -> None:
    with pytest.raises(ModuleFormatError, match=message):
        decode_reference_executable(_mutated(path, value))


def test_cmp_predicates_and_push_dims_checked() -> None:
    body = OPS + [3, "body", 0]
    with pytest.raises(ModuleFormatError, match="unknown cmpf predicate"):
        decode_reference_executable(_mutated(body, {"op": "cmpf", "args": [0, 1], "dtype": "i1",
                                                    "attr": "less"}))
    with pytest.raises(ModuleFormatError, match="not valid JSON"):
        decode_reference_executable(b"\xff")


def _window_kernel() -> ReferenceExecutable:
    """A Conv2D into a filled init, then a Pool2D of its result."""
    return ReferenceExecutable((EntryPoint("conv_dispatch_0", 3, 0, (
        Load(0, "f32", (2, 9, 9, 3)),
        Load(1, "f32", (3, 3, 3, 4)),
        Empty("f32", (2, 4, 4, 4)),
        Fill(2, 0.0),
        Conv2D(0, 1, 3, (2, 2), (1, 1), "NHWC", "HWCF"),
        Empty("f32", (2, 2, 2, 4)),
        Pool2D(4, 5, "max", "NHWC", (2, 2), (2, 2), (1, 1)),
        Store(6, 2),
    )),))


def test_conv2d_and_pool2d_round_trip() -> None:
    exe = _window_kernel()
    data = encode_reference_executable(exe)
    assert decode_reference_executable(data) == exe
    ops = json.loads(data)["entry_points"][0]["ops"]
    assert ops[4] == {"op": "conv2d", "input": 0, "filter": 1, "init": 3, "strides": [2, 2],
                      "dilations": [1, 1], "input_layout": "NHWC", "filter_layout": "HWCF"}
    assert ops[6] == {"op": "pool2d", "input": 4, "init": 5, "kind": "max", "layout": "NHWC",
                      "window": [2, 2], "strides": [2, 2], "dilations": [1, 1]}


_DELETE = object()


def _window_mutated(k: int, key: str, value: Any) -> bytes:
    """The window kernel with field `key` of op `k` set to `value` (or removed, for _DELETE)."""
    payload = json.loads(encode_reference_executable(_window_kernel()))
    op = payload["entry_points"][0]["ops"][k]
    if value is _DELETE:
        del op[key]
    else:
        op[key] = value
    return json.dumps(payload).encode()


@pytest.mark.parametrize("k, key, value, message", [
    (4, "input", 9, r"op 4\.input: 9 is out of range"),
    (4, "filter", "1", "expected an integer, got str"),
    (1, "shape", [3, 3], "op 4: filter must be a 3-D .depthwise. or 4-D tensor, got rank 2"),
    (1, "shape", [3, 3, 3], "op 4: filter_layout 'HWCF' is not a permutation of 'HWC'"),
    (4, "strides", [0, 1], r"strides\[0\]: 0 is below 1"),
    (4, "strides", [1], "strides must have 2 entries"),
    (4, "dilations", [1, 1, 1], "dilations must have 2 entries"),
    (4, "dilations", [1, 1 << 40], "out of range"),
    (4, "strides", None, "expected a list, got NoneType"),
    (4, "dilations", _DELETE, "missing field 'dilations'"),
    (4, "input_layout", "NHWF", "input_layout 'NHWF' is not a permutation of 'NHWC'"),
    (4, "filter_layout", "HWC", "filter_layout 'HWC' is not a permutation of 'HWCF'"),
    (4, "filter_layout", 7, "expected a string, got int"),
    (6, "kind", "min", "unknown pooling kind 'min'"),
    (6, "layout", "NCHWW", "is not a permutation of 'NCHW'"),
    (6, "window", [2, 0], r"window\[1\]: 0 is below 1"),
    (6, "window", [], "window must have 2 entries"),
    (5, "shape", [2, 2, 2], "op 6: init must be a 4-D tensor, got rank 3"),
    (6, "input", 7, "out of range"),
])
def test_window_op_verification(k: int, key: str, value: Any, message: str) -> None:
    with pytest.raises(ModuleFormatError, match=message):
        decode_reference_executable(_window_mutated(k, key, value))


# Regressions found by the module fuzzer (tests/reliability): a kernel a damaged field turns
# into another kernel the verifier used to accept, or a field it used to ignore.


def _dropped(path: list[Any]) -> bytes:
    payload = json.loads(mul_kernel())
    node = payload
    for key in path[:-1]:
        node = node[key]
    del node[path[-1]]
    return json.dumps(payload).encode()


@pytest.mark.parametrize("path, value, message", [
    (OPS + [0, "offsett"], 0, "unknown field 'offsett'"),
    (OPS + [3, "body", 0, "attr"], True, "'mulf' takes no attr, got True"),
    # A store of the wrong value leaves the computed one unused.
    (OPS + [4, "value"], 0, r"value 3 \(generic\) is computed but never used"),
    # A load from the wrong binding leaves one binding untouched.
    (OPS + [1, "binding"], 0, "binding 1 is neither loaded nor stored"),
    (OPS + [3, "body"], [{"op": "mulf", "args": [0, 1], "dtype": "f32", "attr": None},
                         {"op": "addf", "args": [0, 1], "dtype": "f32", "attr": None}],
     r"body\[1\] \(addf\) computes a value nothing uses"),
    (OPS + [4], {"op": "fill", "init": 2, "value": 1.0}, "stores nothing"),
])
def test_fuzzer_regressions(path: list[Any], value: Any, message: str) -> None:
    with pytest.raises(ModuleFormatError, match=message):
        decode_reference_executable(_mutated(path, value))


def test_a_body_may_ignore_an_input() -> None:
    """A generic that counts elements iterates over its input without reading it."""
    decode_reference_executable(_mutated(OPS + [3, "body", 0, "args"], [0, 0]))


def test_every_field_is_required() -> None:
    """A dropped `offset` used to read at offset 0: a silently different kernel."""
    with pytest.raises(ModuleFormatError, match="missing field 'offset'"):
        decode_reference_executable(_dropped(OPS + [0, "offset"]))
    with pytest.raises(ModuleFormatError, match="missing field 'attr'"):
        decode_reference_executable(_dropped(OPS + [3, "body", 0, "attr"]))


def test_deep_nesting_and_huge_integers_are_format_errors() -> None:
    with pytest.raises(ModuleFormatError, match="not valid JSON"):
        decode_reference_executable(b"[" * 100_000 + b"]" * 100_000)
    with pytest.raises(ModuleFormatError, match="not valid JSON"):
        decode_reference_executable(b'{"format": ' + b"7" * 5000 + b"}")


def _gather_kernel(body: tuple[ScalarOp, ...], checks: tuple[str, ...]) -> ReferenceExecutable:
    """out[i] = table[ids[i]] with a kept assert: value 0 is the table, 1 the ids."""
    return ReferenceExecutable((EntryPoint("gather_dispatch_0", 3, 0, (
        Load(0, "f32", (5,)),
        Load(1, "index", (3,)),
        Empty("f32", (3,)),
        Generic((1,), (2,), ((0,), (0,)), ("parallel",), body, (len(body) + 1,), (0,), checks),
        Store(3, 2),
    )),))


GATHER_BODY = (ScalarOp("constant", (), "index", 5), ScalarOp("cmpi", (0, 2), "i1", "ult"),
               ScalarOp("assert", (3,), "i1"), ScalarOp("extract", (0,), "f32", 0))
GATHER_CHECKS = ("cf.assert at g.mlir:3:5 failed: in range", "tensor.extract at g.mlir:4:5")


def test_extract_and_assert_round_trip() -> None:
    exe = _gather_kernel(GATHER_BODY, GATHER_CHECKS)
    assert decode_reference_executable(encode_reference_executable(exe)) == exe


@pytest.mark.parametrize("body, checks, message", [
    (GATHER_BODY, GATHER_CHECKS[:1], "1 check message.* for 2 checked op"),
    (GATHER_BODY[:3] + (ScalarOp("extract", (0,), "f32", 1),), GATHER_CHECKS, "out of range"),
    (GATHER_BODY[:3] + (ScalarOp("extract", (0, 0), "f32", 0),), GATHER_CHECKS,
     "rank-1 f32 capture takes 1 index operand"),
    (GATHER_BODY[:3] + (ScalarOp("extract", (0,), "i32", 0),), GATHER_CHECKS,
     "rank-1 f32 capture takes 1 index operand.* gives f32"),
    (GATHER_BODY[:2] + (ScalarOp("assert", (3,), "f32"),) + GATHER_BODY[3:], GATHER_CHECKS,
     "'assert' must produce i1"),
])
def test_extract_and_assert_verification(body: tuple[ScalarOp, ...], checks: tuple[str, ...],
                                         message: str) -> None:
    with pytest.raises(ModuleFormatError, match=message):
        decode_reference_executable(_encode_unchecked(_gather_kernel(body, checks)))


def _encode_unchecked(exe: ReferenceExecutable) -> bytes:
    """The payload of `exe` without the encoder's own verification (which would refuse it)."""
    return json.dumps({"format": "weir-reference-1", "entry_points": [
        {"name": e.name, "num_bindings": e.num_bindings,
         "num_push_constants": e.num_push_constants, "ops": [_op_json(o) for o in e.ops]}
        for e in exe.entry_points]}).encode()
