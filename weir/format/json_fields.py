"""Typed readers for untrusted JSON metadata. Every reader raises `ModuleFormatError` naming the
field path, so a decoder built from them can never leak a KeyError/TypeError from a bad file."""

from __future__ import annotations

from typing import Any

from weir.errors import ModuleFormatError


# Integers in a module file are indices, counts, sizes and offsets of 64-bit quantities.
INT_LIMIT = 1 << 63


def fail(where: str, message: str) -> ModuleFormatError:
    """One-line error naming where in the metadata the problem is."""
    return ModuleFormatError(f"{where}: {message}")


def printable(value: object) -> str:
    """A value from a module file as it may appear in a one-line message: quoted, with control
    and other unprintable characters escaped, cut short when long."""
    if isinstance(value, str):
        text = f"'{value}'" if value.isprintable() and "'" not in value else repr(value)
    elif value is None or isinstance(value, (bool, int, float)):
        text = repr(value)
    else:
        text = f"a {type(value).__name__}"
    return text if len(text) <= 80 else text[:77] + "..."


def exact_keys(obj: dict[str, Any], keys: tuple[str, ...], where: str) -> None:
    """The object has exactly these fields: every producer writes them all, so a missing one
    would silently take a default and an unknown one (a misspelt key) would be ignored."""
    for key in obj:
        if key not in keys:
            raise fail(where, f"unknown field {printable(key)}")
    for key in keys:
        if key not in obj:
            raise fail(where, f"missing field '{key}'")


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
    """An int (bools are rejected: JSON true is not an index) within 64 bits."""
    if type(value) is not int:
        raise fail(where, f"expected an integer, got {type(value).__name__}")
    if minimum is not None and value < minimum:
        raise fail(where, f"{value} is below {minimum}")
    if value >= (INT_LIMIT if limit is None else min(limit, INT_LIMIT)) or value < -INT_LIMIT:
        raise fail(where, f"{printable(value)} is out of range (must be < "
                          f"{INT_LIMIT if limit is None else limit})")
    return value


def as_str(value: Any, where: str) -> str:
    """A name, type, opcode, label or constant string: printable text, so every message that
    quotes one stays on one line."""
    if not isinstance(value, str):
        raise fail(where, f"expected a string, got {type(value).__name__}")
    if not value.isprintable():
        raise fail(where, f"{printable(value)} contains unprintable characters")
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
    """A VM/kernel constant: int, float, printable str, bool or null. Constant strings are
    input names, element types and failure messages, which errors quote: printable, so every
    message stays on one line."""
    if isinstance(value, str):
        return as_str(value, where)
    if value is None or isinstance(value, (bool, int, float)):
        return value  # type: ignore[no-any-return]
    raise fail(where, f"expected a scalar constant, got {type(value).__name__}")
