"""The kernels of IREE's linalg extension ops in the reference payload, built by hand: they
survive the codec, the decoder refuses damaged ones, and the reference executor computes them
(a stable sort with a comparator body, an exclusive scan, a scatter that adds)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from weir.errors import ModuleFormatError
from weir.format.kernel_codec import decode_reference_executable, encode_reference_executable
from weir.format.kernel_description import (
    EntryPoint,
    Load,
    ReferenceExecutable,
    Result,
    ScalarOp,
    Scan,
    Scatter,
    Sort,
    Store,
)
from weir.runtime.executables.reference_ext import ext_step

LESS = (ScalarOp("cmpf", (0, 1), "i1", "olt"),)  # body args: lhs, rhs of operand 0 (then 1)
ADD = (ScalarOp("addi", (0, 1), "i32"),)


def _sort_entry(dimension: int = 1) -> EntryPoint:
    return EntryPoint("sort", 3, 0, (
        Load(0, "f32", (2, 5)), Load(1, "i32", (2, 5)),
        Sort((0, 1), dimension, LESS, (4,)), Result(2, 0), Result(2, 1),
        Store(3, 2), Store(4, 2, 40)))


def test_sort_round_trips_and_a_bad_dimension_is_refused() -> None:
    exe = ReferenceExecutable((_sort_entry(),))
    data = encode_reference_executable(exe)
    assert decode_reference_executable(data) == exe
    payload = json.loads(data)
    payload["entry_points"][0]["ops"][2]["dimension"] = 2
    with pytest.raises(ModuleFormatError, match="dimension"):
        decode_reference_executable(json.dumps(payload).encode())
    payload["entry_points"][0]["ops"][2]["dimension"] = 1
    payload["entry_points"][0]["ops"][2]["yields"] = [0]  # an f32 argument, not an i1
    with pytest.raises(ModuleFormatError):
        decode_reference_executable(json.dumps(payload).encode())


def test_a_sorts_prefix_round_trips_and_must_be_positive() -> None:
    entry = _sort_entry()
    ops = list(entry.ops)
    ops[2] = Sort((0, 1), 1, LESS, (4,), prefix=2)
    exe = ReferenceExecutable((EntryPoint("sort", 3, 0, tuple(ops)),))
    data = encode_reference_executable(exe)
    assert decode_reference_executable(data) == exe
    payload = json.loads(data)
    for bad in (0, -3, "2"):
        payload["entry_points"][0]["ops"][2]["prefix"] = bad
        with pytest.raises(ModuleFormatError, match="prefix"):
            decode_reference_executable(json.dumps(payload).encode())


def test_sort_step_is_stable() -> None:
    op = _sort_entry().ops[2]
    step = ext_step(op, "test")
    assert step is not None
    x = np.array([[2, 1, 2, 0, 1], [3, 3, 3, 3, 3]], np.float32)
    ids = np.tile(np.arange(5, dtype=np.int32), (2, 1))
    values: list[object] = [x, ids]
    step(values, [], [])
    sorted_x, order = values[2]  # type: ignore[misc]
    np.testing.assert_array_equal(order, np.argsort(x, 1, kind="stable"))
    np.testing.assert_array_equal(sorted_x, np.sort(x, 1))


def test_exclusive_scan_and_adding_scatter_steps() -> None:
    scan = Scan(0, 0, 1, 0, False, ADD, (2,))
    values: list[object] = [np.array([1, 2, 3, 4], np.int32), np.array(10, np.int32)]
    ext_step(scan, "test")(values, [], [])  # type: ignore[misc]
    out, last = values[2]  # type: ignore[misc]
    np.testing.assert_array_equal(out, [10, 11, 13, 16])
    assert last == 16
    scatter = Scatter(0, 1, -1, 2, (0,), 1, ADD, (2,))
    values = [np.array([5, 6, 7], np.int32), np.array([[1], [1], [3]], np.int32),
              np.zeros(4, np.int32)]
    ext_step(scatter, "test")(values, [], [])  # type: ignore[misc]
    np.testing.assert_array_equal(values[3], [0, 11, 0, 7])
