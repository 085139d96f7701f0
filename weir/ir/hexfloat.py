"""Hex integer literals as float bit patterns inside `dense<...>`.

Defect fix (DESIGN.md §3): in MLIR, an integer literal written in hex where a float is
expected is the float's bit pattern: `dense<0xFF800000> : tensor<4xf32>` is -inf,
`dense<0x7C00> : tensor<2xf16>` is +inf. xDSL 0.74 does this for scalar attributes
(`0xFF800000 : f32`) but inside dense literals it converts the integer's *value* to float,
giving 4.28657869e+09. `WeirParser._parse_tensor_literal_element` returns a
`HexBitsElement` for such literals, whose conversion reinterprets the bits once the element
type is known.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import AnyFloat
from xdsl.parser import AttrParser


def is_hex_literal(text: str) -> bool:
    return text.lstrip("-").lstrip()[:2] in ("0x", "0X")


def float_from_bits(bits: int, float_type: AnyFloat) -> float:
    """Reinterpret `bits` as a value of `float_type` (f16, bf16, f32, f64, ...)."""
    size = float_type.compile_time_size
    raw = bits.to_bytes(size, "little")
    return next(iter(float_type.iter_unpack(raw)))


@dataclass
class HexBitsElement(AttrParser._TensorLiteralElement):  # pyright: ignore[reportPrivateUsage]
    """A dense-literal element written in hex: a bit pattern when the element type is float."""

    def to_type(self, parser: AttrParser, type):  # type: ignore[override]
        if not isinstance(type, AnyFloat):
            return super().to_type(parser, type)
        if self.is_negative:
            parser.raise_error("hexadecimal float literal should not have a leading minus", self.span)
        assert isinstance(self.value, int)
        if self.value >> type.bitwidth:
            parser.raise_error(f"hexadecimal float constant out of range for type {type}", self.span)
        return float_from_bits(self.value, type)
