"""Reading and writing single element values in IREE's text form.

IREE reads integers with `strtol`-like rules (decimal, or `0x` hex), floats with `strtof` (which
also takes `inf`, `nan` and hex floats), narrows f16/bf16 from f32 the way its runtime does, and
prints floats with C's `%G` (`4`, `0.5`, `1E+10`, `NAN`) and booleans as one hex byte (`01`).
This module reproduces those rules so weir's output can be compared with IREE's line for line.
"""

from __future__ import annotations

import math
import re
import warnings

import numpy as np

from weir.tools.io.element_types import ElementType

_INT_RE = re.compile(r"[+-]?(0[xX][0-9a-fA-F]+|[0-9]+)")
_HEX_FLOAT_RE = re.compile(r"[+-]?0[xX][0-9a-fA-F]*\.?[0-9a-fA-F]*([pP][+-]?[0-9]+)?")
_BOOL_WORDS: dict[str, bool] = {
    "true": True, "false": False, "1": True, "0": False, "01": True, "00": False,
}


class ElementSyntaxError(ValueError):
    """One token that is not a value of the element type; callers add which flag it came from."""


def _int_range(etype: ElementType) -> tuple[int, int]:
    if etype.kind == "uint":
        return 0, (1 << etype.bits) - 1
    # Signless integers accept the unsigned range too (`i8=255` is -1), as IREE's parser does.
    return -(1 << (etype.bits - 1)), (1 << etype.bits) - 1


def parse_int(token: str, etype: ElementType) -> int:
    """An integer token of `etype`, wrapped to its width; raises ElementSyntaxError."""
    if not _INT_RE.fullmatch(token):
        raise ElementSyntaxError(f"'{token}' is not an integer")
    value = int(token, 0) if not re.fullmatch(r"[+-]?0[0-9]+", token) else int(token, 10)
    low, high = _int_range(etype)
    if not low <= value <= high:
        raise ElementSyntaxError(f"{value} is out of range for {etype.name} [{low}, {high}]")
    return value


def parse_float(token: str) -> float:
    """A float token in `strtod` syntax (decimal, exponent, inf, nan, hex); raises ElementSyntaxError."""
    if "_" in token:  # Python's float() takes `1_0`; C does not.
        raise ElementSyntaxError(f"'{token}' is not a number")
    try:
        return float(token)
    except ValueError:
        pass
    if _HEX_FLOAT_RE.fullmatch(token):
        try:
            return float.fromhex(token)
        except ValueError:
            pass
    raise ElementSyntaxError(f"'{token}' is not a number")


def parse_bool(token: str) -> bool:
    found = _BOOL_WORDS.get(token.lower())
    if found is None:
        raise ElementSyntaxError(f"'{token}' is not an i1 value (true, false, 1 or 0)")
    return found


def parse_elements(tokens: list[str], etype: ElementType) -> np.ndarray:
    """A 1-d array of `etype` from text tokens. Floats narrower than f32 go through f32 first,
    as IREE's parser does, so both round the same way."""
    if etype.kind == "bool":
        return np.array([parse_bool(t) for t in tokens], dtype=np.bool_)
    if etype.kind in ("int", "uint"):
        # Keep the two's-complement bit pattern so `i8=255` reads as -1, like a C cast.
        mask = (1 << etype.bits) - 1
        patterns = [parse_int(t, etype) & mask for t in tokens]
        if etype.bits < 8:  # i2/i4: ml_dtypes wraps the pattern to the element's width
            return np.array(patterns, dtype=np.int64).astype(etype.dtype)
        return np.array(patterns, dtype=np.dtype(f"u{etype.bits // 8}")).view(etype.dtype)
    floats = np.array([parse_float(t) for t in tokens], dtype=np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # overflow to inf, as strtof does
        if etype.bits <= 32:
            return floats.astype(np.float32).astype(etype.dtype)
        return floats.astype(etype.dtype)


def format_element(value: object, etype: ElementType) -> str:
    """One element as IREE prints it inside a buffer view."""
    if etype.kind == "bool":
        return "01" if bool(value) else "00"
    if etype.kind == "float":
        return format_float_upper(float(value))  # type: ignore[arg-type]
    return str(int(value))  # type: ignore[call-overload]


def format_elements(values: np.ndarray, etype: ElementType) -> list[str]:
    """Many elements at once (a 1-d array): the per-element rules of `format_element`."""
    if etype.kind == "bool":
        return ["01" if v else "00" for v in values.tolist()]
    if etype.kind == "float":
        return [format_float_upper(v) for v in values.astype(np.float64).tolist()]
    return [str(v) for v in values.tolist()]


def format_float_upper(value: float) -> str:
    """C's `%G`, which IREE uses for tensor elements (`1E+10`, `INF`, `NAN`, `-0`)."""
    return _signed_nan(value, "%G" % value)


def format_float_lower(value: float) -> str:
    """C's `%g`, which IREE uses for f32/f64 scalar results (`f32=2.5`, `f32=1e+10`)."""
    return _signed_nan(value, "%g" % value)


def _signed_nan(value: float, text: str) -> str:
    # glibc prints the sign of a NaN (`-nan`); Python's formatting drops it.
    if math.isnan(value) and math.copysign(1.0, value) < 0:
        return "-" + text
    return text
