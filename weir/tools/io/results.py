"""Function results and expected outputs in the tools' value model: arrays for buffer views,
`TypedScalar`s for primitive results (typed by the signature's result letters, so an `I` result
prints `i64=...`, or by the types the module declares, so an i8 result prints `i8=...`; i1 and
index results print as the i32 and i64 IREE gives them), None for a null reference."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from weir.tools.io.element_types import element_type_of, result_scalar_type
from weir.tools.io.npy import host_order
from weir.tools.io.parse_input import parse_inputs
from weir.tools.io.values import (
    NullInput,
    ScalarInput,
    TensorInput,
    TypedScalar,
    guess_scalar,
    read_scalar,
)


def typed_result(value: object, letter: str | None) -> object:
    """One result as an array, a TypedScalar or None, using its calling-convention letter
    (`None` when unknown: a scalar then keeps the type numpy gives it, `int` being i64)."""
    if value is None:
        return None
    scalar_type = result_scalar_type(letter)
    if scalar_type is not None:
        return TypedScalar(scalar_type, scalar_type.dtype.type(value).item())
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, (bool, int, float, np.generic)):
        array = np.asarray(value)
        return TypedScalar(element_type_of(array.dtype), array.item())
    raise TypeError(f"a result of type {type(value).__name__} cannot be printed")


def typed_results(values: Sequence[object], letters: Sequence[str]) -> list[object]:
    """Every result; `letters` may be empty when the signature is not known."""
    return [typed_result(v, letters[i] if i < len(letters) else None) for i, v in enumerate(values)]


def expected_values(specs: Sequence[str], letters: Sequence[str]) -> list[object]:
    """`--expected_output` values in the same model as the results they are compared with."""
    parsed = parse_inputs(specs, flag="--expected_output")
    out: list[object] = []
    for i, value in enumerate(parsed):
        letter = letters[i] if i < len(letters) else None
        scalar_type = result_scalar_type(letter)
        if isinstance(value, NullInput):
            out.append(None)
        elif isinstance(value, TensorInput):
            array = host_order(value.array)  # compared element by element with a result
            if scalar_type is not None and array.ndim == 0 and array.dtype == scalar_type.dtype:
                out.append(TypedScalar(scalar_type, array.item()))
            else:
                out.append(array)
        elif isinstance(value, ScalarInput):
            if scalar_type is None:
                out.append(guess_scalar(value.text, "--expected_output", value.spec))
            else:
                out.append(read_scalar(value, scalar_type, "--expected_output", f"result {i}"))
    return out
