"""Scalar arguments and results of compiled functions at the Python API, typed by the
`weir.abi.scalar_types` reflection the compiler records (`i8,r,f16;i8`: arguments;results, `r` a
reference). The calling convention alone says only `i` (an integer of up to 32 bits) or `f` (f16,
bf16 or f32), so without it an i8 argument could receive 300 and an f16 argument an unrounded
double. With it, each argument is checked (one error naming the argument, the type it expects
and what it got) and put in the VM's canonical register form, and each result comes back as the
numpy scalar of its type, as tensors come back as arrays of theirs."""

from __future__ import annotations

from typing import Any, Callable, Mapping

import numpy as np

from weir.errors import InputError
from weir.format.element_types import BY_NAME, ElementType

SCALAR_TYPES_KEY = "weir.abi.scalar_types"
Converter = Callable[[Any, Any], Any]  # (value, allocator) -> VM value


def declared_scalar_types(reflection: Mapping[str, str], num_args: int, num_results: int,
                          ) -> tuple[tuple[str | None, ...], tuple[str | None, ...]] | None:
    """(argument types, result types), None for references; None when the function has no such
    reflection or it does not fit the signature (it is advice, never trusted over the cconv)."""
    text = reflection.get(SCALAR_TYPES_KEY)
    if text is None or text.count(";") != 1:
        return None
    args_text, results_text = text.split(";")
    args = [t for t in args_text.split(",") if t]
    results = [t for t in results_text.split(",") if t]
    if len(args) != num_args or len(results) != num_results or \
            any(t != "r" and t not in BY_NAME for t in args + results):
        return None
    return (tuple(None if t == "r" else t for t in args),
            tuple(None if t == "r" else t for t in results))


def _describe(value: Any) -> str:
    if isinstance(value, np.ndarray):
        shape = "x".join(str(d) for d in value.shape)
        return f"a {shape + 'x' if shape else ''}{value.dtype} array"
    if isinstance(value, np.generic):
        return f"{value.dtype} {value.item()!r}"
    return f"{type(value).__name__} {value!r}"


def _register(value: Any, etype: ElementType) -> Any:
    """`value` as a register of `etype`, or None when it is not a value of that type."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    is_bool = isinstance(value, (bool, np.bool_))
    is_int = isinstance(value, (int, np.integer)) and not is_bool
    if etype.kind == "bool":
        return bool(value) if is_bool or (is_int and int(value) in (0, 1)) else None
    if etype.kind in ("int", "uint"):
        if not is_int:
            return None
        # Signless: the signed and the unsigned reading of the bits are both accepted.
        v, bits = int(value), etype.bits
        if not -(1 << (bits - 1)) <= v < (1 << bits):
            return None
        low = v & ((1 << bits) - 1)
        return low - (1 << bits) if etype.kind == "int" and low >> (bits - 1) else low
    if is_int or isinstance(value, (float, np.floating)):
        with np.errstate(over="ignore"):  # too large for the type: infinity, as a cast gives
            return np.asarray(value).astype(etype.dtype).item()
    return None


def scalar_argument(dtype: str, function: str, index: int) -> Converter:
    etype = BY_NAME[dtype]

    def convert(value: Any, allocator: Any) -> Any:
        register = _register(value, etype)
        if register is None:
            raise InputError(f"function '{function}': argument {index} (%input{index}) expects "
                             f"{dtype}, got {_describe(value)}")
        return register
    return convert


def scalar_result(dtype: str) -> Callable[[Any], Any]:
    """A result register as the numpy scalar of its type; an i1 as an int32, as IREE's VM (which
    has no i1 register) returns it, and an index as an int64."""
    scalar_type = np.int32 if dtype == "i1" else BY_NAME[dtype].dtype.type
    return lambda value: scalar_type(value)
