"""Results printed exactly as IREE's `iree-run-module` prints them:

    result[0]: hal.buffer_view
    2x2xi32=[1 2][3 4]
    result[1]: i32=12

Tensor elements use `%G`, scalars `%g`; after `max_element_count` elements IREE stops: the row in
progress ends with `...` and every later row prints as `[...]`.
"""

from __future__ import annotations

import numpy as np

from weir.tools.io.element_types import ElementType, element_type_of
from weir.tools.io.elements import format_element, format_elements, format_float_lower
from weir.tools.io.parse_input import format_shape_and_type
from weir.tools.io.values import TypedScalar

DEFAULT_MAX_ELEMENT_COUNT = 1024


def format_buffer_view(array: np.ndarray, max_element_count: int = DEFAULT_MAX_ELEMENT_COUNT) -> str:
    """`4xf32=1 2 3 4`: shape, element type and (possibly elided) contents on one line."""
    etype = element_type_of(array.dtype)
    return (format_shape_and_type(tuple(array.shape), etype) + "="
            + format_buffer_elements(array, etype, max_element_count))


def format_buffer_elements(array: np.ndarray, etype: ElementType, max_element_count: int) -> str:
    """The part after `=`: nested `[...]` per outer dimension, elements joined by spaces."""
    flat = np.ascontiguousarray(array).reshape(-1)
    shape = tuple(array.shape) if array.ndim else (1,)
    budget = [max(0, max_element_count)]
    return _format_level(flat, 0, shape, etype, budget)


def _format_level(flat: np.ndarray, start: int, shape: tuple[int, ...], etype: ElementType,
                  budget: list[int]) -> str:
    """Mirrors IREE's recursive formatter; `budget` is the shared count of elements left."""
    if len(shape) == 1:
        count = min(budget[0], shape[0])
        budget[0] -= count
        text = " ".join(format_elements(flat[start:start + count], etype))
        return text + ("..." if count < shape[0] else "")
    inner = shape[1:]
    stride = int(np.prod(inner, dtype=np.int64))
    parts: list[str] = []
    for i in range(shape[0]):
        if budget[0] == 0:
            # Everything from here on is elided and prints the same; build it once.
            exhausted = "[" + _format_level(flat, 0, inner, etype, budget) + "]"
            parts.append(exhausted * (shape[0] - i))
            break
        parts.append("[" + _format_level(flat, start + i * stride, inner, etype, budget) + "]")
    return "".join(parts)


def format_scalar(scalar: TypedScalar) -> str:
    """`i32=12`, `f32=2.5`, `i1=1` (IREE formats primitive results with `%d`/`%g`; an i1
    scalar is a number there, not the byte `01` a buffer view element prints as)."""
    if scalar.type.is_float:
        return f"{scalar.type.name}={format_float_lower(float(scalar.value))}"
    if scalar.type.kind == "bool":
        return f"{scalar.type.name}={int(bool(scalar.value))}"
    return f"{scalar.type.name}={format_element(scalar.value, scalar.type)}"


def format_result(value: object, max_element_count: int = DEFAULT_MAX_ELEMENT_COUNT) -> str:
    """The text after `result[i]: `: `hal.buffer_view` and its contents on the next line for a
    tensor, `i32=12` for a scalar, `(null)` for no value."""
    if value is None:
        return "(null)"
    if isinstance(value, TypedScalar):
        return format_scalar(value)
    if isinstance(value, np.ndarray):
        return "hal.buffer_view\n" + format_buffer_view(value, max_element_count)
    raise TypeError(f"cannot format a result of type {type(value).__name__}")


def format_results(values: list[object], max_element_count: int = DEFAULT_MAX_ELEMENT_COUNT,
                   list_name: str = "result") -> str:
    """Every result, one `result[i]: ...` entry each, newline-terminated."""
    return "".join(f"{list_name}[{i}]: {format_result(v, max_element_count)}\n"
                   for i, v in enumerate(values))
