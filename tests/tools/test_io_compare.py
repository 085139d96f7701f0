"""--expected_output comparisons: IREE's tolerances, wording and exit status."""

from __future__ import annotations

import ml_dtypes
import numpy as np

from weir.tools.io.compare import SUCCESS_LINE, Tolerances, compare_one, compare_results
from weir.tools.io.element_types import parse_element_type
from weir.tools.io.values import TypedScalar


def test_match() -> None:
    e = np.full(4096, 4.0, np.float32)
    result = compare_results([e], [e.copy()])
    assert result.matched and result.report == ""
    assert SUCCESS_LINE == "[SUCCESS] all function outputs matched their expected values."


def test_first_mismatch_is_reported_in_iree_words() -> None:
    e = np.full(4, 4.0, np.float32)
    a = e.copy()
    a[3] = 5
    a[2] = 6  # index 2 is the first
    result = compare_results([e], [a])
    assert not result.matched
    assert result.report == (
        "[FAILED] result[0]: element at index 2 (6) does not match the expected (4); expected "
        "that the view is equal to contents of a view of 4xf32\n"
        "  expected:\n4xf32=4 4 4 4\n  actual:\n4xf32=4 4 6 5\n")


def test_float_thresholds() -> None:
    e = np.ones(2, np.float32)
    assert compare_one(0, e, e + np.float32(0.00005)) == ""
    assert compare_one(0, e, e + np.float32(0.001)) != ""
    assert compare_one(0, e, e + np.float32(0.001), Tolerances(f32=0.01)) == ""
    h = np.ones(2, np.float16)
    assert compare_one(0, h, h + np.float16(0.0009765625)) == ""  # within 0.001
    assert compare_one(0, h, h + np.float16(0.002)) != ""
    d = np.ones(2, np.float64)
    assert compare_one(0, d, d + 0.00009) == ""
    assert compare_one(0, d, d + 0.0002) != ""
    assert compare_one(0, d, d + 0.0002, Tolerances(f64=0.001)) == ""


def test_nan_matches_like_iree() -> None:
    e = np.array([1.0], np.float32)
    assert compare_one(0, e, np.array([np.nan], np.float32)) == ""


def test_ints_bools_and_bf16_are_exact() -> None:
    assert compare_one(0, np.array([1, 2], np.int32), np.array([1, 3], np.int32)).startswith(
        "[FAILED] result[0]: element at index 1 (3) does not match the expected (2)")
    assert "(00) does not match the expected (01)" in compare_one(
        0, np.array([True]), np.array([False]))
    b = np.array([1.0], ml_dtypes.bfloat16)
    assert compare_one(0, b, b.copy()) == ""
    assert compare_one(0, b, np.array([1.0078125], ml_dtypes.bfloat16)) != ""


def test_metadata_mismatch() -> None:
    report = compare_one(1, np.zeros(4, np.float32), np.zeros((2, 2), np.float32))
    assert report.startswith("[FAILED] result[1]: metadata is 2x2xf32; expected that the view "
                             "matches 4xf32; expected that the view is equal to contents of a "
                             "view of 4xf32\n")
    assert "metadata is 4xi32" in compare_one(0, np.zeros(4, np.float32), np.zeros(4, np.int32))


def test_ignored_results_are_skipped() -> None:
    assert compare_results([None, np.zeros(1, np.int8)], [np.ones(3), np.zeros(1, np.int8)]).matched


def test_scalars() -> None:
    i32 = parse_element_type("i32")
    assert compare_one(0, TypedScalar(i32, 3), TypedScalar(i32, 3)) == ""
    assert compare_one(0, TypedScalar(i32, 3), TypedScalar(i32, 4)) == \
        "[FAILED] result[0]: i32 values differ\n  expected: 3\n  actual: 4\n"
    f32 = parse_element_type("f32")
    assert compare_one(0, TypedScalar(f32, 1e10), TypedScalar(f32, 2.5)) == \
        "[FAILED] result[0]: f32 values differ\n  expected: 1E+10\n  actual: 2.5\n"


def test_kind_mismatch() -> None:
    i32 = parse_element_type("i32")
    assert compare_one(0, TypedScalar(i32, 3), np.zeros(1)) == \
        "[FAILED] result[0]: variant types mismatch; expected i32 but got hal.buffer_view\n"
    assert "expected hal.buffer_view but got empty" in compare_one(0, np.zeros(1), None)


def test_count_mismatch() -> None:
    result = compare_results([np.zeros(1)], [])
    assert not result.matched
    assert result.report == "[FAILED] expected 1 list elements but 0 provided\n"
