"""Resolving parsed values against a function's calling convention, as IREE does."""

from __future__ import annotations

import numpy as np
import pytest

from weir.errors import UsageError
from weir.tools.io.parse_input import parse_input
from weir.tools.io.values import resolve_argument


def resolve(spec: str, letter: str | None) -> object:
    (value,) = parse_input(spec)
    return resolve_argument(value, letter, index=0)


def test_bare_scalars_take_the_signature_type() -> None:
    assert resolve("5", "i") == 5
    assert resolve("5", "I") == 5
    assert resolve("2.5", "f") == 2.5
    assert resolve("0.1", "f") == float(np.float32(0.1))  # rounded to f32
    assert resolve("0.1", "F") == 0.1
    assert resolve("5", "f") == 5.0


def test_bare_scalars_without_a_signature_are_i32_then_i64_then_f32() -> None:
    assert resolve("5", None) == 5
    assert resolve("5000000000", None) == 5000000000
    assert resolve("2.5", None) == 2.5


def test_zero_d_tensor_of_the_same_type_passes_as_a_scalar() -> None:
    assert resolve("i64=5", "I") == 5
    assert resolve("f64=2.5", "F") == 2.5
    with pytest.raises(UsageError, match="argument 0 is a i64 scalar, not a i32 tensor"):
        resolve("i32=5", "I")
    with pytest.raises(UsageError, match="not a 2xi64 tensor"):
        resolve("2xi64=5", "I")


def test_tensors_pass_through() -> None:
    value = resolve("2xf32=1 2", "r")
    assert isinstance(value, np.ndarray) and value.shape == (2,)
    assert isinstance(resolve("2xf32=1 2", None), np.ndarray)


def test_scalar_for_a_tensor_argument_is_an_error() -> None:
    with pytest.raises(UsageError, match="argument 0 is a tensor"):
        resolve("5", "r")


def test_bad_scalar_for_its_type() -> None:
    with pytest.raises(UsageError, match="argument 0 is i32: '2.5' is not an integer"):
        resolve("2.5", "i")
    with pytest.raises(UsageError, match="out of range"):
        resolve("5000000000", "i")


def test_null_is_zero_or_none() -> None:
    assert resolve("(null)", "i") == 0
    assert resolve("(null)", "F") == 0.0
    assert resolve("(null)", "r") is None
    assert resolve("(ignored)", None) is None
