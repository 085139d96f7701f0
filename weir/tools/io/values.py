"""What a parsed `--input`/`--expected_output` value is, before it meets a function signature.

IREE decides how to read a bare `5` from the function's calling convention (an `i` argument is
i32, `I` is i64, `f` f32, `F` f64), so a bare number stays text until `resolve_argument` sees the
signature; everything with a shape or element type (`4xf32=1`, `i64=5`) is already an array.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from weir.errors import UsageError
from weir.tools.io.element_types import (
    SCALAR_CCONV_TYPES,
    ElementType,
    element_type_of,
    scalar_type as scalar_type_of,
)
from weir.tools.io.elements import ElementSyntaxError, parse_elements


@dataclass(frozen=True)
class TensorInput:
    """A shaped value (`2x2xi32=[1 2][3 4]`, `f32=2.5`, `@a.npy`): becomes a buffer view."""

    spec: str
    array: np.ndarray = field(compare=False)


@dataclass(frozen=True)
class ScalarInput:
    """A bare number (`5`, `2.5`) whose type the function signature decides."""

    spec: str
    text: str


@dataclass(frozen=True)
class NullInput:
    """`(null)` or `(ignored)`: a null reference or zero; as an expected output, not compared."""

    spec: str


ParsedInput = TensorInput | ScalarInput | NullInput


@dataclass(frozen=True)
class TypedScalar:
    """A primitive value with its VM type (`i32`, `i64`, `f32`, `f64`), as printed `i32=12`."""

    type: ElementType
    value: int | float


def scalar_from_text(text: str, etype: ElementType) -> int | float:
    """The Python value of `text` read as the scalar type `etype` (f32 rounded to f32)."""
    array = parse_elements([text], etype)
    return array[0].item()  # type: ignore[no-any-return]


def read_scalar(parsed: ScalarInput, etype: ElementType, flag: str, what: str) -> TypedScalar:
    """A bare number read as the type its signature gives it (`what`: `argument 0`, `result 1`,
    named in the error when the text is not a value of that type)."""
    try:
        return TypedScalar(etype, scalar_from_text(parsed.text, etype))
    except ElementSyntaxError as error:
        raise UsageError(f"{flag} '{parsed.spec}': {what} is {etype.name}: {error}") from None


def guess_scalar(text: str, flag: str, spec: str) -> TypedScalar:
    """A bare number with no signature to type it: integers are i32 (i64 when too wide for i32),
    anything else f32, which are IREE's cconv defaults for `5` and `2.5`."""
    for letter in ("i", "I", "f"):
        etype = SCALAR_CCONV_TYPES[letter]
        try:
            return TypedScalar(etype, scalar_from_text(text, etype))
        except ElementSyntaxError:
            continue
    raise UsageError(f"{flag} '{spec}': '{text}' is not a number; a tensor needs a shape and "
                     f"element type (`4x2xf32=...`, `f32=2.5` for a 0-d tensor)")


def _zeros_if_shape(text: str) -> np.ndarray | None:
    """`0xf32` reads as a hexadecimal number, but where a tensor is expected it is the shape
    and type of an empty tensor (IREE's reading): zeros of that shape, or None."""
    from weir.tools.io.parse_input import parse_contents, parse_shape_and_type  # (imports us)

    try:
        etype, shape = parse_shape_and_type(text)
    except UsageError:
        return None
    return parse_contents("", etype, shape)


def resolve_argument(parsed: ParsedInput, cconv_letter: str | None, *, index: int,
                     flag: str = "--input") -> object:
    """The value to pass for argument `index` whose calling-convention letter is `cconv_letter`
    (or whose declared scalar type it is: `i8`, `f16`; `None` when the signature is unknown): a
    numpy array, a Python int/float, or None."""
    scalar_type = scalar_type_of(cconv_letter)
    if isinstance(parsed, NullInput):
        if scalar_type is not None:
            return 0.0 if scalar_type.is_float else 0
        return None
    if isinstance(parsed, ScalarInput):
        if scalar_type is None and cconv_letter is None:
            return guess_scalar(parsed.text, flag, parsed.spec).value
        if scalar_type is None:
            zeros = _zeros_if_shape(parsed.text)
            if zeros is not None:
                return zeros
            raise UsageError(f"{flag} '{parsed.spec}': argument {index} is a tensor; give a shape "
                             f"and element type (`4x2xf32=...`, or `f32=2.5` for a 0-d tensor)")
        return read_scalar(parsed, scalar_type, flag, f"argument {index}").value
    if scalar_type is None:
        return parsed.array
    # `i64=5` for an i64 argument: a 0-d tensor of exactly the argument's type is that scalar.
    actual = element_type_of(parsed.array.dtype)
    if parsed.array.ndim != 0 or actual != scalar_type:
        shown = "x".join(str(d) for d in parsed.array.shape)
        shown = f"{shown}x{actual.name}" if shown else actual.name
        raise UsageError(f"{flag} '{parsed.spec}': argument {index} is a {scalar_type.name} "
                         f"scalar, not a {shown} tensor")
    return parsed.array.item()
