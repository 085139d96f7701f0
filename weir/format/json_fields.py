"""Typed readers for untrusted JSON metadata. Every reader raises `ModuleFormatError` naming the
field path, so a decoder built from them can never leak a KeyError/TypeError from a bad file."""

from __future__ import annotations

from typing import Any

from weir.errors import ModuleFormatError


def fail(where: str, message: str) -> ModuleFormatError:
    """One-line error naming where in the metadata the problem is."""
    return ModuleFormatError(f"{where}: {message}")


def as_dict(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise fail(where, f"expected an object, got {type(value).__name__}")
    return value  # type: ignore[return-value]


def as_list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise fail(where, f"expected a list, got {type(value).__name__}")
    return value  # type: ignore[return-value]


def field(obj: dict[str, Any], key: str, where: str) -> Any:
    if key not in obj:
        raise fail(where, f"missing field '{key}'")
    return obj[key]


def as_int(value: Any, where: str, minimum: int | None = 0, limit: int | None = None) -> int:
    """An int (bools are rejected: JSON true is not an index)."""
    if type(value) is not int:
        raise fail(where, f"expected an integer, got {type(value).__name__}")
    if minimum is not None and value < minimum:
        raise fail(where, f"{value} is below {minimum}")
    if limit is not None and value >= limit:
        raise fail(where, f"{value} is out of range (must be < {limit})")
    return value


def as_str(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise fail(where, f"expected a string, got {type(value).__name__}")
    return value


def as_bool(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise fail(where, f"expected a boolean, got {type(value).__name__}")
    return value


def as_int_list(value: Any, where: str, limit: int | None = None, minimum: int | None = 0) -> tuple[int, ...]:
    items = as_list(value, where)
    return tuple(as_int(v, f"{where}[{i}]", minimum, limit) for i, v in enumerate(items))


def as_str_list(value: Any, where: str) -> tuple[str, ...]:
    items = as_list(value, where)
    return tuple(as_str(v, f"{where}[{i}]") for i, v in enumerate(items))


def as_scalar(value: Any, where: str) -> int | float | str | bool | None:
    """A VM/kernel constant: int, float, str, bool or null."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value  # type: ignore[no-any-return]
    raise fail(where, f"expected a scalar constant, got {type(value).__name__}")
