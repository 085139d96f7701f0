"""IREE's Winograd transforms (`iree_linalg_ext.winograd.input_transform`, `filter_transform`,
`output_transform`), loaded into the `iree_linalg_ext` dialect. A 2-D convolution with an
r x r output tile and a k x k kernel works on tiles of T = r + k - 1:

- input_transform: each T x T tile d of the image (tiles start every r pixels; the image is
  zero-padded past its end) becomes B^T d B. An (N, H, W, C) or (N, C, H, W) image gives
  (T, T, N, H', W', C) with H' = ceil((H - k + 1) / r); a rank-2 tile (at most T x T) gives T x T;
- filter_transform: each k x k kernel g becomes G g G^T: (k, k, C, F) or (F, C, k, k) gives
  (T, T, C, F); a rank-2 kernel gives T x T;
- output_transform: each T x T tile m of the products becomes the r x r output A^T m A:
  (T, T, N, H', W', C) gives (N, r H', r W', C) or (N, C, r H', r W'); T x T gives r x r.

The image (kernel) dimensions say the layout: [1, 2] (NHWC; HWCF kernels: [0, 1]) or [2, 3]
(NCHW; FCHW). The matrices are those of weir.compiler.input.winograd_to_linalg, where the input
phase writes the transforms as linalg."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    AnyFloat,
    DenseArrayBase,
    DYNAMIC_INDEX,
    IntegerAttr,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Dialect
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    opt_prop_def,
    prop_def,
    operand_def,
    result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from weir.dialects.linalg_syntax import (
    parse_operands,
    parse_result_types,
    print_operands,
    print_result_types,
)

# The tile sizes weir has matrices for: (output tile r, kernel size k).
SUPPORTED_TILES = ((6, 3),)
_TILE_DIMS = (0, 1)  # where the T x T tile sits in a transformed tensor (IREE's default)


def _shape(t: Attribute) -> tuple[int, ...]:
    assert isinstance(t, TensorType)
    return tuple(t.get_shape())


def _agree(expected: Sequence[int], actual: Sequence[int]) -> bool:
    return len(expected) == len(actual) and all(
        e == a or DYNAMIC_INDEX in (e, a) for e, a in zip(expected, actual))


def _tiles(size: int, r: int, k: int) -> int:
    """H' = ceil((H - k + 1) / r): the output tiles along an image dimension of `size`."""
    return size if size == DYNAMIC_INDEX else max(0, -(-(size - k + 1) // r))


class WinogradOp(IRDLOperation):
    """The three ops' shared form: `output_tile_size(r) kernel_size(k) image_dimensions([..])
    [input_tile_dimensions([0, 1])] ins(%x : T) outs(%y : U) -> U`."""

    input = operand_def(TensorType)
    output = operand_def(TensorType)
    result = result_def(TensorType)
    output_tile_size = prop_def(IntegerAttr)
    kernel_size = prop_def(IntegerAttr)
    layout_dims = prop_def(DenseArrayBase)
    input_tile_dimensions = opt_prop_def(DenseArrayBase)

    # The name of the layout clause: image_dimensions or kernel_dimensions.
    LAYOUT: ClassVar[str] = "image_dimensions"
    # The layouts' dims: [NHWC-like, NCHW-like].
    LAYOUTS: ClassVar[tuple[tuple[int, int], ...]] = ((1, 2), (2, 3))

    @classmethod
    def parse(cls, parser: Parser) -> WinogradOp:
        props: dict[str, Attribute] = {}
        attrs = parser.parse_optional_attr_dict()

        def ints() -> list[int]:
            parser.parse_punctuation("(")
            values = parser.parse_comma_separated_list(
                Parser.Delimiter.SQUARE, lambda: parser.parse_integer(allow_boolean=False))
            parser.parse_punctuation(")")
            return values
        for word in ("output_tile_size", "kernel_size"):
            parser.parse_characters(word)
            parser.parse_punctuation("(")
            props[word] = IntegerAttr(parser.parse_integer(allow_boolean=False), i64)
            parser.parse_punctuation(")")
        parser.parse_characters(cls.LAYOUT)
        props["layout_dims"] = DenseArrayBase.from_list(i64, ints())
        if parser.parse_optional_characters("input_tile_dimensions") is not None:
            props["input_tile_dimensions"] = DenseArrayBase.from_list(i64, ints())
        pos = parser.pos
        inputs = parse_operands(parser, "ins")
        outputs = parse_operands(parser, "outs")
        results = parse_result_types(parser)
        if len(inputs) != 1 or len(outputs) != 1 or len(results) != 1:
            parser.raise_error("expected one input, one output and one result", pos, parser.pos)
        return cls.build(operands=[inputs[0], outputs[0]], result_types=[results[0]],
                         properties=props, attributes=attrs)

    def print(self, printer: Printer) -> None:
        if self.attributes:
            printer.print_string(" ")
            printer.print_attr_dict(self.attributes)
        printer.print_string(f" output_tile_size({self.r}) kernel_size({self.k}) "
                             f"{self.LAYOUT}({list(self.layout)})")
        if self.input_tile_dimensions is not None:
            printer.print_string(
                f" input_tile_dimensions({list(self.input_tile_dimensions.get_values())})")
        print_operands(printer, "ins", [self.input])
        print_operands(printer, "outs", [self.output])
        print_result_types(printer, [self.result.type])

    @property
    def r(self) -> int:
        return self.output_tile_size.value.data

    @property
    def k(self) -> int:
        return self.kernel_size.value.data

    @property
    def tile(self) -> int:
        """T = r + k - 1, the side of a transformed tile."""
        return self.r + self.k - 1

    @property
    def layout(self) -> tuple[int, ...]:
        return tuple(self.layout_dims.get_values())  # type: ignore[arg-type]

    @property
    def channels_first(self) -> bool:
        """NCHW (FCHW) rather than NHWC (HWCF)."""
        return self.layout == self.LAYOUTS[1]

    @property
    def source(self) -> TensorType:
        t = self.input.type
        assert isinstance(t, TensorType)
        return t

    @property
    def dest(self) -> TensorType:
        t = self.output.type
        assert isinstance(t, TensorType)
        return t

    def verify_(self) -> None:
        if self.result.type != self.output.type:
            raise VerifyException(f"the result must have the output's type {self.output.type}")
        if (self.r, self.k) not in SUPPORTED_TILES:
            raise VerifyException(f"output_tile_size({self.r}) kernel_size({self.k}) is not "
                                  f"supported (only {', '.join(f'{r} and {k}' for r, k in SUPPORTED_TILES)})")
        if self.input_tile_dimensions is not None and \
                tuple(self.input_tile_dimensions.get_values()) != _TILE_DIMS:
            raise VerifyException("only input_tile_dimensions([0, 1]) is supported")
        element = self.source.element_type
        if element != self.dest.element_type or not isinstance(element, AnyFloat):
            raise VerifyException("input and output must have one float element type")
        if len(_shape(self.source)) > 2 and self.layout not in self.LAYOUTS:
            raise VerifyException(f"{self.LAYOUT} must be {list(self.LAYOUTS[0])} or "
                                  f"{list(self.LAYOUTS[1])}")
        expected = self.expected_dest()
        if not _agree(expected, _shape(self.dest)):
            shape = "x".join("?" if d == DYNAMIC_INDEX else str(d) for d in expected)
            raise VerifyException(f"the output {self.dest} must have shape {shape}")

    def expected_dest(self) -> tuple[int, ...]:
        raise NotImplementedError


class InputTransform(WinogradOp):
    def expected_dest(self) -> tuple[int, ...]:
        shape = _shape(self.source)
        t = self.tile
        if len(shape) == 2:
            if any(d > t for d in shape if d != DYNAMIC_INDEX):
                raise VerifyException(f"a rank-2 input {self.source} must be at most {t}x{t}")
            return (t, t)
        if len(shape) != 4:
            raise VerifyException(f"the input {self.source} must have rank 4 (or 2)")
        h, w = self.layout
        channels = 1 if self.channels_first else 3
        return (t, t, shape[0], _tiles(shape[h], self.r, self.k),
                _tiles(shape[w], self.r, self.k), shape[channels])


class FilterTransform(WinogradOp):
    LAYOUT: ClassVar[str] = "kernel_dimensions"
    LAYOUTS: ClassVar[tuple[tuple[int, int], ...]] = ((0, 1), (2, 3))

    def expected_dest(self) -> tuple[int, ...]:
        shape = _shape(self.source)
        t = self.tile
        if len(shape) not in (2, 4):
            raise VerifyException(f"the input {self.source} must have rank 4 (or 2)")
        kernel = shape if len(shape) == 2 else tuple(shape[d] for d in self.layout)
        if any(d != self.k for d in kernel):
            raise VerifyException(f"the kernel dimensions of {self.source} must be {self.k}")
        if len(shape) == 2:
            return (t, t)
        c, f = (shape[1], shape[0]) if self.channels_first else (shape[2], shape[3])
        return (t, t, c, f)


class OutputTransform(WinogradOp):
    def expected_dest(self) -> tuple[int, ...]:
        shape = _shape(self.source)
        t, r = self.tile, self.r
        if len(shape) not in (2, 6) or not _agree((t, t), shape[:2]):
            raise VerifyException(f"the input {self.source} must be {t}x{t} (rank 2) or "
                                  f"{t}x{t}xNxH'xW'xC")
        if len(shape) == 2:
            return (r, r)
        n, th, tw, c = shape[2:]
        h, w = (DYNAMIC_INDEX if d == DYNAMIC_INDEX else d * r for d in (th, tw))
        return (n, c, h, w) if self.channels_first else (n, h, w, c)


def _define(base: type[WinogradOp], name: str) -> type[WinogradOp]:
    return irdl_op_definition(type(base.__name__ + "Op", (base,), {"name": name,
                                                                   "__doc__": base.__doc__}))


WinogradInputTransformOp = _define(InputTransform, "iree_linalg_ext.winograd.input_transform")
WinogradFilterTransformOp = _define(FilterTransform, "iree_linalg_ext.winograd.filter_transform")
WinogradOutputTransformOp = _define(OutputTransform, "iree_linalg_ext.winograd.output_transform")

DIALECT = Dialect("iree_linalg_ext", [WinogradInputTransformOp, WinogradFilterTransformOp,
                                      WinogradOutputTransformOp], [])
