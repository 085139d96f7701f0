"""The `Slice` and `InsertSlice` kernel ops: codec round trip, every malformed field refused as a
ModuleFormatError at load time, execution by the reference runtime, windows out of bounds
refused at dispatch time; and the llvm-cpu payload's list of windows to check."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from kernel_runner import run_kernel

from weir.errors import ModuleFormatError, RuntimeFault
from weir.format.native_executable import (
    NativeEntry,
    NativeExecutable,
    WindowBounds,
    decode_native_executable,
    encode_native_executable,
)
from weir.format.kernel_codec import decode_reference_executable, encode_reference_executable
from weir.format.kernel_description import (
    Empty,
    EntryPoint,
    Fill,
    InsertSlice,
    Load,
    PushDim,
    ReferenceExecutable,
    Slice,
    Store,
    window_error,
)


def _kernel() -> ReferenceExecutable:
    """A strided slice at a dynamic row offset, inserted rank-reduced into a filled matrix."""
    return ReferenceExecutable((EntryPoint("slices_dispatch_0", 2, 1, (
        Load(0, "i32", (6, 8)),
        Slice(0, (PushDim(0), 1), (1, 3), (1, 2), (0,)),
        Empty("i32", (2, 5)),
        Fill(2, -1),
        InsertSlice(1, 3, (1, 2), (1, 1), (0,)),
        Store(4, 1),
    )),))


def test_round_trip() -> None:
    exe = _kernel()
    data = encode_reference_executable(exe)
    assert decode_reference_executable(data) == exe
    ops = json.loads(data)["entry_points"][0]["ops"]
    assert ops[1] == {"op": "slice", "input": 0, "offsets": [{"push": 0}, 1], "sizes": [1, 3],
                      "strides": [1, 2], "dropped": [0]}
    assert ops[4] == {"op": "insert_slice", "source": 1, "dest": 3, "offsets": [1, 2],
                      "strides": [1, 1], "dropped": [0]}


def _mutated(k: int, key: str, value: Any) -> bytes:
    payload = json.loads(encode_reference_executable(_kernel()))
    payload["entry_points"][0]["ops"][k][key] = value
    return json.dumps(payload).encode()


@pytest.mark.parametrize("k, key, value, message", [
    (1, "input", 7, r"op 1\.input: 7 is out of range"),
    (1, "offsets", [0], "1 offsets and 2 strides for rank 2"),
    (1, "offsets", [{"push": 1}, 0], "out of range"),
    (1, "offsets", [-1, 0], "is below 0"),
    (1, "strides", [1, 0], r"strides \[1, 0\] must be at least 1"),
    (1, "strides", [1], "2 offsets and 1 strides"),
    (1, "sizes", [1, 3, 1], "3 sizes for rank 2"),
    (1, "sizes", [{"push": 0}, 3], "a dropped dimension must have size 1"),
    (1, "dropped", [2], "out of range"),
    (1, "dropped", [1, 0], "must be increasing"),
    (1, "sizes", "3", "expected a list"),
    (4, "dest", 9, "out of range"),
    (4, "source", 0, "a rank-2 source with 1 dropped dimension"),
    (4, "dropped", [], "a rank-1 source with 0 dropped dimension"),
    (4, "offsets", [1, 2, 3], "3 offsets and 2 strides for rank 2"),
    (4, "strides", [{"push": 0}, "x"], "expected an integer, got str"),
])
def test_verification(k: int, key: str, value: Any, message: str) -> None:
    with pytest.raises(ModuleFormatError, match=message):
        decode_reference_executable(_mutated(k, key, value))


def test_insert_of_another_element_type_is_refused() -> None:
    payload = json.loads(encode_reference_executable(_kernel()))
    payload["entry_points"][0]["ops"][2]["dtype"] = "f32"
    with pytest.raises(ModuleFormatError, match="source i32 and dest f32 element types differ"):
        decode_reference_executable(json.dumps(payload).encode())


def test_runs_with_numpy_slicing() -> None:
    x = np.arange(48, dtype=np.int32).reshape(6, 8)
    for row in (0, 5):
        (out,) = run_kernel(list(_kernel().entry_points[0].ops), [x], [((2, 5), "int32")], (row,))
        expected = np.full((2, 5), -1, np.int32)
        expected[1, 2:5] = x[row, 1:6:2]
        np.testing.assert_array_equal(out, expected)


def test_window_past_the_end_is_a_runtime_fault() -> None:
    x = np.zeros((6, 8), np.int32)
    with pytest.raises(RuntimeFault, match="dimension 0: window at offset 6 of 1 element"):
        run_kernel(list(_kernel().entry_points[0].ops), [x], [((2, 5), "int32")], (6,))


@pytest.mark.parametrize("window, problem", [
    ((0, 4, 1, 4), None), ((3, 1, 1, 4), None), ((1, 2, 2, 4), None), ((4, 0, 1, 4), None),
    ((0, 0, 1, 0), None), ((1, 3, 1, 3), "ends past"), ((0, 3, 2, 4), "ends past"),
    ((5, 0, 1, 4), "ends past"), ((-1, 1, 1, 4), "negative"), ((0, 1, 0, 4), "below 1"),
])
def test_window_error(window: tuple[int, int, int, int], problem: str | None) -> None:
    found = window_error(*window)
    assert (found is None) if problem is None else (found is not None and problem in found)


def _native(windows: Any) -> bytes:
    entry = NativeEntry("e", "e", 1, 2, (), 1, 1, (WindowBounds(PushDim(0), 4, 1, PushDim(1)),))
    data = encode_native_executable(NativeExecutable("x86_64", "x86-64", (), (entry,), ()))
    if windows is None:
        return data
    head = len(data) - 8
    header = json.loads(data[8:8 + head])
    header["entries"][0]["windows"] = windows
    text = json.dumps(header).encode()
    return data[:4] + len(text).to_bytes(4, "little") + text


def test_native_windows_round_trip_and_verification() -> None:
    (entry,) = decode_native_executable(_native(None)).entries
    assert entry.windows == (WindowBounds(PushDim(0), 4, 1, PushDim(1)),)
    with pytest.raises(ModuleFormatError, match=r"windows\[0\]: expected \[offset, size"):
        decode_native_executable(_native([[0, 1, 1]]))
    with pytest.raises(ModuleFormatError, match="out of range"):
        decode_native_executable(_native([[{"push": 2}, 1, 1, 1]]))
