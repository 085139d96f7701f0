"""Decimal float literals too large for their type become ±inf, as in MLIR.

Defect fix (DESIGN.md §3): MLIR reads a decimal float literal as a double and rounds it to the
element type (nearest, ties to even), so `70000.0 : f16` and `dense<[1.0e6]> : tensor<1xf16>`
are +inf (IREE's generated math tests expect exp() of large inputs as such literals). xDSL 0.74
packs f16 and f32 values with `struct`, which raises OverflowError where the rounded value would
be infinite. bf16 already rounds to inf; f64 literals beyond its range are inf when read."""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.dialects.builtin import AnyFloat
from xdsl.parser import AttrParser


def rounded(value: float, float_type: AnyFloat) -> float:
    """`value` as `float_type` holds it once rounded: ±inf where it overflows the type."""
    try:
        float_type.pack((value,))
    except OverflowError:
        return math.copysign(math.inf, value)
    return value


@dataclass
class DecimalFloatElement(AttrParser._TensorLiteralElement):  # pyright: ignore[reportPrivateUsage]
    """A dense-literal element written as a decimal float: rounded to its float element type."""

    def to_type(self, parser: AttrParser, type):  # type: ignore[override]
        value = super().to_type(parser, type)
        if isinstance(type, AnyFloat) and isinstance(value, float):
            return rounded(value, type)
        return value
