"""The built-in `check` module: what the `check.*` ops of a test program call (the compiler's
`lower-checks` pass makes the calls). A context loads it on demand, when a module imports it.

    expect_true(i32)            the value is non-zero
    expect_false(i32)           the value is zero
    expect_all_true(view)       every element is non-zero
    expect_eq(view, view)       same shape, element type and bits (as IREE: a bitwise compare)
    expect_almost_eq(view, view, atol: f32, rtol: f32)
                                |lhs - rhs| <= atol + rtol * |rhs| per element, as numpy's
                                isclose and IREE's check module define it (equal values, infinities
                                included, always match; NaN matches NaN)

A failure describes the values: the shape and element type, how many elements differ, the first
mismatching indices with both values, the largest absolute difference, and the (elided)
contents. By default it raises at once (a `CheckFailed`), so a program run from Python cannot
pass a failed check unnoticed. A test runner (weir-check-module) sets `collect` on the state
instead: the call then records the failure and returns, so one test reports all its failures,
and the runner takes them with `take_failures()` after each test.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from weir.errors import RuntimeFault
from weir.format.element_types import BY_NAME
from weir.runtime.hal.buffer_view import BufferView, format_type
from weir.runtime.vm.context import Context
from weir.runtime.vm.native_module import NativeModule, export

FIRST_MISMATCHES = 8
"""How many mismatching elements a failure lists."""
SHOWN_ELEMENTS = 16
"""How many elements of each operand a failure prints before eliding the rest."""


class CheckFailed(RuntimeFault):
    """A check that did not hold, raised when the state is not collecting failures."""


@dataclass(frozen=True)
class CheckFailure:
    """One failed check: the function (`check.expect_eq`) and what it saw, in words."""

    check: str
    message: str

    def __str__(self) -> str:
        return f"{self.check} failed: {self.message}"


class CheckState:
    """Per-context: whether failures are collected, and the ones collected so far."""

    def __init__(self) -> None:
        self.collect = False
        self._failures: list[CheckFailure] = []

    def record(self, failure: CheckFailure) -> None:
        if not self.collect:
            raise CheckFailed(str(failure))
        self._failures.append(failure)

    def take_failures(self) -> list[CheckFailure]:
        """The failures recorded since the last call, oldest first."""
        taken, self._failures = self._failures, []
        return taken


class CheckModule(NativeModule):
    module_name = "check"

    def create_state(self, context: Context) -> CheckState:
        return CheckState()

    @export("0i_")
    def expect_true(self, state: CheckState, operand: int) -> None:
        if operand == 0:
            state.record(CheckFailure("check.expect_true", "expected 0 to be nonzero"))

    @export("0i_")
    def expect_false(self, state: CheckState, operand: int) -> None:
        if operand != 0:
            state.record(CheckFailure("check.expect_false", f"expected {operand} to be zero"))

    @export("0r_")
    def expect_all_true(self, state: CheckState, operand: BufferView) -> None:
        array = _array(operand, "check.expect_all_true", "operand")
        zero = array == 0
        if zero.any():
            lines = [f"{int(zero.sum())} of {array.size} elements are zero ({_describe(operand)})",
                     "first zeros: " + ", ".join(_index(i, array.shape)
                                                 for i in _first(zero))]
            lines.append(f"operand: {_contents(operand, array)}")
            state.record(CheckFailure("check.expect_all_true", "\n".join(lines)))

    @export("0rr_")
    def expect_eq(self, state: CheckState, lhs: BufferView, rhs: BufferView) -> None:
        a = _array(lhs, "check.expect_eq", "lhs")
        b = _array(rhs, "check.expect_eq", "rhs")
        if _layout_differs(lhs, rhs):
            state.record(CheckFailure("check.expect_eq", _layout_message(lhs, rhs)))
            return
        # Bits, as IREE compares: -0.0 differs from 0.0, a NaN equals the same NaN.
        bits = f"u{a.dtype.itemsize}"
        differs = a.view(bits) != b.view(bits)
        if differs.any():
            head = f"{int(differs.sum())} of {a.size} elements differ ({_describe(lhs)})"
            state.record(CheckFailure("check.expect_eq",
                                      _mismatch_report(head, lhs, rhs, a, b, differs)))

    @export("0rrff_")
    def expect_almost_eq(self, state: CheckState, lhs: BufferView, rhs: BufferView,
                         atol: float, rtol: float) -> None:
        a = _array(lhs, "check.expect_almost_eq", "lhs")
        b = _array(rhs, "check.expect_almost_eq", "rhs")
        if _layout_differs(lhs, rhs):
            state.record(CheckFailure("check.expect_almost_eq", _layout_message(lhs, rhs)))
            return
        if not BY_NAME[lhs.dtype].is_float:
            raise RuntimeFault(f"check.expect_almost_eq: the operands must hold floats, got "
                               f"{_describe(lhs)}")
        x = a.astype(np.float64)
        y = b.astype(np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            close = (x == y) | (np.isfinite(y) & (np.abs(x - y) <= atol + rtol * np.abs(y))) \
                | (np.isnan(x) & np.isnan(y))
        differs = ~close
        if differs.any():
            head = (f"{int(differs.sum())} of {a.size} elements differ by more than "
                    f"atol {atol:g} + rtol {rtol:g} * |rhs| ({_describe(lhs)})")
            state.record(CheckFailure("check.expect_almost_eq",
                                      _mismatch_report(head, lhs, rhs, a, b, differs)))


# --- describing values ---------------------------------------------------------------------------

def _array(view: object, check: str, what: str) -> np.ndarray:
    if not isinstance(view, BufferView):
        raise RuntimeFault(f"{check}: {what} must be a buffer view, got {type(view).__name__}")
    return view.to_numpy()


def _describe(view: BufferView) -> str:
    return format_type(view.dtype, view.shape)


def _layout_differs(lhs: BufferView, rhs: BufferView) -> bool:
    return lhs.dtype != rhs.dtype or lhs.shape != rhs.shape


def _layout_message(lhs: BufferView, rhs: BufferView) -> str:
    return f"lhs is {_describe(lhs)}, rhs is {_describe(rhs)}"


def _first(mask: np.ndarray) -> list[int]:
    """Flat indices of the first `FIRST_MISMATCHES` true elements of `mask`."""
    flat = np.flatnonzero(mask.reshape(-1))
    return [int(i) for i in flat[:FIRST_MISMATCHES]]


def _index(flat: int, shape: tuple[int, ...]) -> str:
    if not shape:
        return "[]"
    return "[" + ", ".join(str(int(i)) for i in np.unravel_index(flat, shape)) + "]"


def _element(value: np.generic) -> str:
    """One element as the smallest text that reads back as the same value of its type."""
    if isinstance(value, np.bool_):
        return str(int(value))
    text = str(value)  # numpy's shortest round-trip text for the element's own type
    return text[:-2] if text.endswith(".0") else text


def _contents(view: BufferView, array: np.ndarray) -> str:
    """`4xf32=1 2 3 4`, elided after `SHOWN_ELEMENTS` elements (flat order)."""
    flat = array.reshape(-1)
    shown = " ".join(_element(v) for v in flat[:SHOWN_ELEMENTS])
    more = " ..." if flat.size > SHOWN_ELEMENTS else ""
    return f"{_describe(view)}={shown}{more}"


def _mismatch_report(head: str, lhs: BufferView, rhs: BufferView, a: np.ndarray, b: np.ndarray,
                     differs: np.ndarray) -> str:
    flat_a, flat_b = a.reshape(-1), b.reshape(-1)
    first = _first(differs)
    pairs = ", ".join(f"{_index(i, a.shape)} lhs={_element(flat_a[i])} rhs={_element(flat_b[i])}"
                      for i in first)
    more = f" (and {int(differs.sum()) - len(first)} more)" if differs.sum() > len(first) else ""
    lines = [head, f"first mismatches: {pairs}{more}"]
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(flat_a.astype(np.float64) - flat_b.astype(np.float64))
    diff = np.where(differs.reshape(-1), diff, np.nan)
    if not np.isnan(diff).all():  # NaN against a number has no distance worth printing
        worst = int(np.nanargmax(diff))
        lines.append(f"max abs diff: {diff[worst]:.9g} at {_index(worst, a.shape)}")
    lines += [f"lhs: {_contents(lhs, a)}", f"rhs: {_contents(rhs, b)}"]
    return "\n".join(lines)
