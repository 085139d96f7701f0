"""The reference payload codec: round trip and verification of every cross-reference."""

from __future__ import annotations

import json
from typing import Any

import pytest
from runtime_builders import mul_kernel

from weir.errors import ModuleFormatError
from weir.format.reference_codec import decode_reference_executable, encode_reference_executable


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
