"""`--expected_output` checks with IREE's rules and wording.

Integers and booleans must match exactly; f16/f32/f64 elements match when `|expected - actual|`
is not above the type's threshold (IREE's defaults: 0.001, 0.0001, 0.0001). Like IREE, a NaN
never exceeds a threshold, so a NaN matches anything, and bf16 compares exactly. The first
mismatching element is reported:

    [FAILED] result[0]: element at index 3 (5) does not match the expected (4); expected that
    the view is equal to contents of a view of 4xf32
      expected:
    4xf32=4 4 4 4
      actual:
    4xf32=4 4 4 5
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from weir.tools.io.element_types import element_type_of
from weir.tools.io.elements import format_element, format_float_upper
from weir.tools.io.format_output import DEFAULT_MAX_ELEMENT_COUNT, format_buffer_view
from weir.tools.io.parse_input import format_shape_and_type
from weir.tools.io.values import TypedScalar

SUCCESS_LINE = "[SUCCESS] all function outputs matched their expected values."


@dataclass(frozen=True)
class Tolerances:
    """Absolute thresholds per float type (`--expected_f16_threshold` etc.)."""

    f16: float = 0.001
    f32: float = 0.0001
    f64: float = 0.0001


@dataclass(frozen=True)
class Comparison:
    """Whether every result matched, and the `[FAILED] ...` report when not (empty if all did)."""

    matched: bool
    report: str


def compare_results(expected: Sequence[object], actual: Sequence[object],
                    tolerances: Tolerances = Tolerances()) -> Comparison:
    """`expected[i]` is an array, a TypedScalar, or None for `(ignored)`."""
    if len(expected) != len(actual):
        return Comparison(False, f"[FAILED] expected {len(expected)} list elements but "
                                 f"{len(actual)} provided\n")
    failures = [compare_one(i, e, a, tolerances) for i, (e, a) in enumerate(zip(expected, actual))]
    report = "".join(f for f in failures if f)
    return Comparison(not report, report)


def compare_one(index: int, expected: object, actual: object,
                tolerances: Tolerances = Tolerances()) -> str:
    """The failure report for result `index`, or '' when it matches."""
    if expected is None:
        return ""  # `(ignored)`
    if isinstance(expected, np.ndarray) and isinstance(actual, np.ndarray):
        return _compare_views(index, expected, actual, tolerances)
    if isinstance(expected, TypedScalar) and isinstance(actual, TypedScalar) \
            and expected.type == actual.type:
        return _compare_scalars(index, expected, actual)
    return (f"[FAILED] result[{index}]: variant types mismatch; expected "
            f"{_variant_type(expected)} but got {_variant_type(actual)}\n")


def _variant_type(value: object) -> str:
    if value is None:
        return "empty"
    if isinstance(value, TypedScalar):
        return value.type.name
    return "hal.buffer_view"


def _compare_scalars(index: int, expected: TypedScalar, actual: TypedScalar) -> str:
    if expected.value == actual.value:
        return ""
    if expected.type.is_float:
        shown = format_float_upper(float(expected.value)), format_float_upper(float(actual.value))
    else:
        shown = str(expected.value), str(actual.value)
    return (f"[FAILED] result[{index}]: {expected.type.name} values differ\n"
            f"  expected: {shown[0]}\n  actual: {shown[1]}\n")


def _describe(array: np.ndarray) -> str:
    return format_shape_and_type(tuple(array.shape), element_type_of(array.dtype))


def _compare_views(index: int, expected: np.ndarray, actual: np.ndarray,
                   tolerances: Tolerances) -> str:
    reason = _view_mismatch(expected, actual, tolerances)
    if reason is None:
        return ""
    return (f"[FAILED] result[{index}]: {reason}; expected that the view is equal to contents "
            f"of a view of {_describe(expected)}\n"
            f"  expected:\n{format_buffer_view(expected, DEFAULT_MAX_ELEMENT_COUNT)}\n"
            f"  actual:\n{format_buffer_view(actual, DEFAULT_MAX_ELEMENT_COUNT)}\n")


def _view_mismatch(expected: np.ndarray, actual: np.ndarray, tolerances: Tolerances) -> str | None:
    """Why `actual` differs from `expected` in IREE's words, or None if it matches."""
    if expected.shape != actual.shape or expected.dtype != actual.dtype:
        return (f"metadata is {_describe(actual)}; expected that the view matches "
                f"{_describe(expected)}")
    etype = element_type_of(actual.dtype)
    flat_e, flat_a = expected.reshape(-1), actual.reshape(-1)
    threshold = {"f16": tolerances.f16, "f32": tolerances.f32, "f64": tolerances.f64}.get(etype.name)
    if threshold is None:
        # Bitwise equality, as IREE's memcmp (so -0.0 differs from 0.0 for bf16).
        bits = np.dtype(f"u{actual.dtype.itemsize}")
        differs = flat_e.view(bits) != flat_a.view(bits)
    else:
        work = np.float64 if etype.name == "f64" else np.float32
        with np.errstate(invalid="ignore", over="ignore"):
            differs = np.abs(flat_e.astype(work) - flat_a.astype(work)) > work(threshold)
    bad = np.flatnonzero(differs)
    if bad.size == 0:
        return None
    i = int(bad[0])
    return (f"element at index {i} ({format_element(flat_a[i], etype)}) does not match the "
            f"expected ({format_element(flat_e[i], etype)})")
