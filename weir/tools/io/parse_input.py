"""`--input` and `--expected_output` values in every form IREE's tools accept:

    4096xf32=-2.0          splat: one value fills the shape
    2x2xi32=[1 2][3 4]     brackets, whitespace and commas all separate values
    4xf32=1,2,3,4          (the same)
    2x3xf32                no `=`: zeros
    f32=2.5                a 0-d tensor
    5 / 2.5                a bare scalar, typed by the function signature
    @file.npy              the first array of a .npy file; `+file.npy` the next one
    *file.npy              every remaining array of the file
    4xf32=@file.bin        raw little-endian bytes (`+file.bin` continues)
    (null) / (ignored)     no value
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

import numpy as np

from weir.errors import UsageError
from weir.tools.io.element_types import ElementType, parse_element_type
from weir.tools.io.elements import ElementSyntaxError, parse_elements, parse_float
from weir.tools.io.npy import FileStreams
from weir.tools.io.values import NullInput, ParsedInput, ScalarInput, TensorInput

_SEPARATORS = re.compile(r"[\s,\[\]]+")

# The most data one `--input` written as text (a splat, zeros or a list) may make: a mistyped
# shape (`999999x999999xf32=1`) is reported instead of exhausting memory.
MAX_TEXT_INPUT_BYTES = 1 << 32
_NULL_SPELLINGS = ("(null)", "(ignored)")


def parse_inputs(specs: Iterable[str], *, flag: str = "--input",
                 streams: FileStreams | None = None) -> list[ParsedInput]:
    """Every value of a repeated flag, in order. One `FileStreams` spans the list so `+file`
    continues a file an earlier value of the same flag opened."""
    streams = streams if streams is not None else FileStreams()
    values: list[ParsedInput] = []
    for spec in specs:
        values.extend(parse_input(spec, flag=flag, streams=streams))
    return values


def parse_input(spec: str, *, flag: str = "--input",
                streams: FileStreams | None = None) -> list[ParsedInput]:
    """The values one flag value stands for: one, except `*file.npy` (zero or more)."""
    streams = streams if streams is not None else FileStreams()
    text = spec.strip()
    try:
        return _parse(text, spec, streams)
    except (UsageError, ElementSyntaxError) as error:
        raise UsageError(f"{flag} '{spec}': {error}") from None


def _parse(text: str, spec: str, streams: FileStreams) -> list[ParsedInput]:
    if not text:
        raise UsageError("no value given")
    if text in _NULL_SPELLINGS:
        return [NullInput(spec)]
    if text[0] in "@+*":
        return _parse_npy_reference(text, spec, streams)
    if text.startswith("&"):
        raise UsageError("output storage arguments ('&') are not supported by weir")
    if "=" not in text and _is_number(text):
        return [ScalarInput(spec, text)]
    if "=" not in text and "x" not in text:
        raise UsageError(f"'{text}' is neither a number nor a tensor with a shape and element "
                         f"type (`4x2xf32=...`, `f32=2.5` for a 0-d tensor)")
    metadata, _, contents = text.partition("=")
    etype, shape = parse_shape_and_type(metadata)
    contents = contents.strip()
    if contents[:1] in ("@", "+"):
        array = streams.read_raw(contents[1:], etype, shape, append=contents[0] == "+")
    else:
        array = parse_contents(contents, etype, shape)
    return [TensorInput(spec, array)]


def _is_number(text: str) -> bool:
    """Whether a bare value reads as a scalar (`5`, `-2.5`, `0x10`, `inf`)."""
    try:
        parse_float(text)
    except ElementSyntaxError:
        return False
    return True


def _parse_npy_reference(text: str, spec: str, streams: FileStreams) -> list[ParsedInput]:
    mode, path = text[0], text[1:]
    if not path.endswith(".npy"):
        raise UsageError("only numpy (.npy) files can be read without a shape and type; "
                         "give one for raw binary files (`4xf32=@file.bin`)")
    if mode == "*":
        return [TensorInput(spec, a) for a in streams.read_all_npy(path, append=True)]
    return [TensorInput(spec, streams.read_npy(path, append=mode == "+"))]


def parse_shape_and_type(metadata: str) -> tuple[ElementType, tuple[int, ...]]:
    """`4x2xf32` -> (f32, (4, 2)); `f32` -> (f32, ())."""
    metadata = metadata.strip()
    if not metadata:
        raise UsageError("missing shape and element type before '='")
    shape_text, x, type_text = metadata.rpartition("x")
    etype = parse_element_type(type_text)
    if not x:
        return etype, ()
    shape: list[int] = []
    for i, dim in enumerate(shape_text.split("x")):
        if not dim.isdigit():
            raise UsageError(f"shape dimension {i} '{dim}' of '{metadata}' is not a "
                             f"non-negative integer")
        shape.append(int(dim))
    return etype, tuple(shape)


def format_shape_and_type(shape: tuple[int, ...], etype: ElementType) -> str:
    """(4, 2), f32 -> `4x2xf32`; (), f32 -> `f32` (IREE's spelling of both)."""
    return "".join(f"{d}x" for d in shape) + etype.name


def parse_contents(contents: str, etype: ElementType, shape: tuple[int, ...]) -> np.ndarray:
    """The text after `=`: no values give zeros, one value fills the shape, otherwise exactly
    one value per element in row-major order. Zeros and a splat cost no memory until the
    function they are passed to has checked their shape and copies them."""
    tokens = [t for t in _SEPARATORS.split(contents) if t]
    count = math.prod(shape)
    if count * etype.dtype.itemsize > MAX_TEXT_INPUT_BYTES:
        raise UsageError(f"{format_shape_and_type(shape, etype)} holds "
                         f"{count * etype.dtype.itemsize} bytes; a value given as text may hold "
                         f"at most {MAX_TEXT_INPUT_BYTES} (give larger ones as @file.npy)")
    if not tokens:
        return np.zeros(shape, dtype=etype.dtype)
    if len(tokens) == 1:  # a read-only view of one element: nothing is filled until it is used
        return np.broadcast_to(parse_elements(tokens, etype)[0], shape)
    if len(tokens) != count:
        raise UsageError(f"{len(tokens)} values given for {format_shape_and_type(shape, etype)} "
                         f"({count} elements); give {count} values, or one to fill the shape")
    return parse_elements(tokens, etype).reshape(shape)
