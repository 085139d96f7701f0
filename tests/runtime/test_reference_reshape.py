"""The `Reshape` kernel op (collapse_shape / expand_shape fused into a dispatch): codec round
trip, malformed fields refused at load time, execution by the reference runtime, and a reshape
whose element count does not match refused at dispatch time."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from kernel_runner import run_kernel

from weir.errors import ModuleFormatError, RuntimeFault
from weir.format.kernel_codec import decode_reference_executable, encode_reference_executable
from weir.format.kernel_description import EntryPoint, Load, ReferenceExecutable, Reshape, Store


def _ops(shape: tuple[int, ...]) -> tuple[Load | Reshape | Store, ...]:
    return (Load(0, "f32", (2, 3, 4)), Reshape(0, shape), Store(1, 1))


def _payload() -> dict[str, Any]:
    exe = ReferenceExecutable((EntryPoint("k", 2, 0, _ops((6, 4))),))
    return json.loads(encode_reference_executable(exe))  # type: ignore[no-any-return]


def test_round_trip() -> None:
    exe = ReferenceExecutable((EntryPoint("k", 2, 0, _ops((6, 4))),))
    data = encode_reference_executable(exe)
    assert decode_reference_executable(data) == exe
    assert json.loads(data)["entry_points"][0]["ops"][1] == \
        {"op": "reshape", "input": 0, "shape": [6, 4]}


@pytest.mark.parametrize("key, value, message", [
    ("input", 5, r"op 1\.input: 5 is out of range"),
    ("shape", [6, -4], "is below 0"),
    ("shape", [{"push": 0}], "expected an integer"),
])
def test_verification(key: str, value: Any, message: str) -> None:
    payload = _payload()
    payload["entry_points"][0]["ops"][1][key] = value
    with pytest.raises(ModuleFormatError, match=message):
        decode_reference_executable(json.dumps(payload).encode())


def test_runs_as_a_numpy_reshape() -> None:
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    (out,) = run_kernel(list(_ops((4, 1, 6))), [x], [((4, 1, 6), "float32")])
    np.testing.assert_array_equal(out, x.reshape(4, 1, 6))


def test_element_count_mismatch_is_a_runtime_fault() -> None:
    x = np.zeros((2, 3, 4), np.float32)
    with pytest.raises(RuntimeFault, match=r"reshape of 24 element\(s\) to \[5, 4\]"):
        run_kernel(list(_ops((5, 4))), [x], [((5, 4), "float32")])
