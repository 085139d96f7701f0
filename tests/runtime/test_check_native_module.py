"""The built-in `check` module: loaded on demand by a module that imports it, comparisons as
IREE's check module defines them, failures that describe the values, raised by default and
collected for a test runner."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from runtime_builders import fn

from weir.errors import LoadError
from weir.format.image import ExportDef, ImportDef, ModuleImage, Signature
from weir.format.vm_isa import Call, Const, Return
from weir.runtime.api import BufferView, Context, Instance
from weir.runtime.modules.check import CheckFailed, CheckModule, CheckState


def _context() -> Context:
    instance = Instance()
    return Context(instance, devices=[instance.create_device("local-sync")],
                   modules=[CheckModule()])


def _collecting() -> tuple[Context, CheckState]:
    context = _context()
    state = context.module_state("check")
    assert isinstance(state, CheckState)
    state.collect = True
    return context, state


def _call(context: Context, name: str, *args: object) -> None:
    views = [BufferView.from_numpy(a) if isinstance(a, np.ndarray) else a for a in args]
    context.lookup(f"check.{name}").invoke_views(views)


def _failures(name: str, *args: object) -> list[str]:
    context, state = _collecting()
    _call(context, name, *args)
    return [str(f) for f in state.take_failures()]


def _test_program(dependencies: tuple[str, ...]) -> ModuleImage:
    """`test() { check.expect_true(0); check.expect_false(3) }`, as the compiler emits it."""
    body = [Const(0, 0), Call((), "check.expect_true", (0,)), Const(1, 3),
            Call((), "check.expect_false", (1,)), Return(())]
    return ModuleImage(
        name="tests", dependencies=dependencies,
        imports=(ImportDef("check.expect_true", Signature.parse("0i_")),
                 ImportDef("check.expect_false", Signature.parse("0i_"))),
        exports=(ExportDef("test", 0),), functions=(fn("test", "0_", 2, (), body),))


@pytest.mark.parametrize("dependencies", [("check",), ()])
def test_a_module_importing_check_gets_it_loaded(dependencies: tuple[str, ...]) -> None:
    from weir.runtime.vm.bytecode_module import BytecodeModule

    instance = Instance()
    context = Context(instance, devices=[instance.create_device("local-sync")],
                      modules=[BytecodeModule(_test_program(dependencies))])
    assert [m.name for m in context.modules] == ["hal", "check", "tests"]
    state = context.module_state("check")
    assert isinstance(state, CheckState)
    state.collect = True
    context.lookup("tests.test").invoke_views([])
    assert [str(f) for f in state.take_failures()] == [
        "check.expect_true failed: expected 0 to be nonzero",
        "check.expect_false failed: expected 3 to be zero"]


def test_a_check_module_loaded_first_is_the_one_used() -> None:
    from weir.runtime.vm.bytecode_module import BytecodeModule

    mine = CheckModule()
    instance = Instance()
    context = Context(instance, devices=[instance.create_device("local-sync")],
                      modules=[mine, BytecodeModule(_test_program(("check",)))])
    assert context.module("check") is mine
    with pytest.raises(LoadError, match="already loaded"):
        context.add_module(CheckModule())


def test_a_failure_raises_unless_collected() -> None:
    context = _context()
    _call(context, "expect_true", 1)
    with pytest.raises(CheckFailed, match="expected 0 to be nonzero"):
        _call(context, "expect_true", 0)


def test_collected_failures_are_all_kept_in_order() -> None:
    context, state = _collecting()
    _call(context, "expect_true", 0)
    _call(context, "expect_eq", np.arange(3), np.arange(3))
    _call(context, "expect_eq", np.arange(3), np.arange(3) + 1)
    failures = state.take_failures()
    assert [f.check for f in failures] == ["check.expect_true", "check.expect_eq"]
    assert state.take_failures() == []


def test_expect_eq_reports_indices_values_and_max_diff() -> None:
    lhs = np.array([[1, 2, 3], [4, 5, 6]], np.int32)
    rhs = np.array([[1, 2, 9], [4, 0, 6]], np.int32)
    (failure,) = _failures("expect_eq", lhs, rhs)
    assert failure.splitlines() == [
        "check.expect_eq failed: 2 of 6 elements differ (2x3xi32)",
        "first mismatches: [0, 2] lhs=3 rhs=9, [1, 1] lhs=5 rhs=0",
        "max abs diff: 6 at [0, 2]",
        "lhs: 2x3xi32=1 2 3 4 5 6",
        "rhs: 2x3xi32=1 2 9 4 0 6",
    ]


def test_expect_eq_compares_bits_and_layouts() -> None:
    nan = np.array([np.nan, 1.0], np.float32)
    assert _failures("expect_eq", nan, nan.copy()) == []
    (zero,) = _failures("expect_eq", np.array([0.0], np.float32), np.array([-0.0], np.float32))
    assert "1 of 1 elements differ (1xf32)" in zero
    (shape,) = _failures("expect_eq", np.zeros((2, 2), np.int8), np.zeros(4, np.int8))
    assert shape == "check.expect_eq failed: lhs is 2x2xi8, rhs is 4xi8"
    (dtype,) = _failures("expect_eq", np.zeros(4, np.int16), np.zeros(4, np.int32))
    assert dtype == "check.expect_eq failed: lhs is 4xi16, rhs is 4xi32"


def test_expect_eq_lists_at_most_eight_mismatches() -> None:
    (failure,) = _failures("expect_eq", np.zeros(100, np.int64), np.ones(100, np.int64))
    assert "(and 92 more)" in failure
    assert failure.splitlines()[-1].endswith(" ...")  # contents elided


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.float32, np.float64])
def test_expect_almost_eq_tolerances(dtype: type) -> None:
    lhs = np.array([1.0, 100.0, 2.0], dtype)
    rhs = np.array([1.0, 100.5, 2.0], dtype)
    assert _failures("expect_almost_eq", lhs, rhs, 0.5, 0.0) == []  # |diff| <= atol
    assert _failures("expect_almost_eq", lhs, rhs, 0.0, 0.01) == []  # <= rtol * |rhs|
    (failure,) = _failures("expect_almost_eq", lhs, rhs, 0.25, 0.0)
    assert "1 of 3 elements differ by more than atol 0.25 + rtol 0 * |rhs|" in failure
    assert "first mismatches: [1] lhs=100 rhs=100.5" in failure
    assert "max abs diff: 0.5 at [1]" in failure


def test_expect_almost_eq_nan_and_infinities_as_iree() -> None:
    inf, nan = np.inf, np.nan
    same = np.array([nan, inf, -inf, 1.0], np.float32)
    assert _failures("expect_almost_eq", same, same.copy(), 1e-4, 0.0) == []
    (failure,) = _failures("expect_almost_eq", np.array([nan, 1.0, inf], np.float32),
                           np.array([1.0, nan, 1e30], np.float32), 1e-4, 0.0)
    assert "3 of 3 elements differ" in failure
    assert "max abs diff: inf at [2]" in failure


def test_expect_almost_eq_refuses_integers() -> None:
    context, _ = _collecting()
    with pytest.raises(Exception, match="must hold floats, got 2xi32"):
        _call(context, "expect_almost_eq", np.zeros(2, np.int32), np.zeros(2, np.int32),
              1e-4, 0.0)


def test_expect_all_true() -> None:
    assert _failures("expect_all_true", np.array([True, True])) == []
    (failure,) = _failures("expect_all_true", np.array([[1, 0], [0, 7]], np.int16))
    assert failure.splitlines() == [
        "check.expect_all_true failed: 2 of 4 elements are zero (2x2xi16)",
        "first zeros: [0, 1], [1, 0]",
        "operand: 2x2xi16=1 0 0 7",
    ]
