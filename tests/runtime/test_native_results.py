"""What a module written in Python returns is checked where it returns it (issue 17): a string,
a numpy array or a number where its cconv declares `r`, a float where it declares an integer,
the wrong number of results. The error names the function, the result and what the signature
declares, instead of surfacing later in whatever used the value (`hal.buffer_view.dim: view must
be a BufferView, got str`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from runtime_builders import S

from weir.errors import RuntimeFault
from weir.format.hal_abi import HAL_FUNCTIONS
from weir.format.image import Block, ExportDef, FunctionDef, ImportDef, ModuleImage
from weir.format.vm_isa import Call, Const, Return
from weir.runtime.api import (
    BufferView,
    BytecodeModule,
    Context,
    Fence,
    Instance,
    NativeModule,
    export,
)
from weir.runtime.modules.hal import HalModule


class Sloppy(NativeModule):
    """Each export returns `state["value"]`, whatever a test put there."""

    module_name = "custom"

    def create_state(self, context: Any) -> dict[str, Any]:
        return {"value": None}

    @export("0_r")
    def ref(self, state: dict[str, Any]) -> Any:
        return state["value"]

    @export("0_i")
    def i32(self, state: dict[str, Any]) -> Any:
        return state["value"]

    @export("0_F")
    def f64(self, state: dict[str, Any]) -> Any:
        return state["value"]

    @export("0_")
    def nothing(self, state: dict[str, Any]) -> Any:
        return state["value"]

    @export("0_rI")
    def pair(self, state: dict[str, Any]) -> Any:
        return state["value"]

    @export("0r_r")
    def foo(self, state: dict[str, Any], view: BufferView) -> Any:
        return state["value"]

    @export("0rrr_r", model="coarse-fences")
    def later(self, state: dict[str, Any], view: BufferView, wait: Fence, signal: Fence) -> Any:
        return state["value"]


def _context(*modules: Any) -> Context:
    instance = Instance()
    return Context(instance, devices=[instance.create_device("local-sync")],
                   modules=[Sloppy(), *modules])


def _returning(value: Any, function: str, *args: Any) -> Any:
    context = _context()
    context.module_state("custom")["value"] = value
    return context.lookup(f"custom.{function}").invoke_views(list(args))


VIEW = BufferView.from_numpy(np.ones(2, np.float32))
REF = r"a reference \('r': a BufferView, Buffer, Fence or None\)"


@pytest.mark.parametrize("function, value, message", [
    ("ref", "f32", rf"^custom.ref: returned str where its signature 0_r declares {REF} "
                   rf"\(result 0\)$"),
    ("ref", np.ones(2), rf"^custom.ref: returned numpy.ndarray where its signature 0_r declares "
                        rf"{REF} \(result 0\); wrap a numpy array with BufferView.from_numpy$"),
    ("ref", 7, rf"returned int where its signature 0_r declares {REF}"),
    ("i32", 2.5, r"^custom.i32: returned float where its signature 0_i declares an integer "
                 r"\(i32, 'i'\) \(result 0\)$"),
    ("i32", 1 << 40, r"^custom.i32: returned 1099511627776, out of range, where its signature "
                     r"0_i declares an integer \(i32, 'i'\) \(result 0\)$"),
    ("i32", None, r"returned NoneType where its signature 0_i declares an integer"),
    ("f64", "1.5", r"returned str where its signature 0_F declares a float \(f64, 'F'\)"),
    ("f64", True, r"returned bool where its signature 0_F declares a float"),
    ("nothing", VIEW, r"^custom.nothing: returned weir.runtime.hal.buffer_view.BufferView where "
                      r"its signature 0_ declares no result$"),
    ("pair", VIEW, r"^custom.pair: returned one weir.runtime.hal.buffer_view.BufferView where its "
                   r"signature 0_rI declares 2 results \(return a tuple\)$"),
    ("pair", (VIEW, 1, 2), r"returned 3 values where its signature 0_rI declares 2 results"),
    ("pair", (VIEW, "1"), rf"returned str where its signature 0_rI declares an integer \(i64, "
                          rf"'I'\) \(result 1\)$"),
])
def test_a_wrong_result_is_one_error_naming_the_function(function: str, value: Any,
                                                         message: str) -> None:
    with pytest.raises(RuntimeFault, match=message):
        _returning(value, function)


@pytest.mark.parametrize("function, value, expected", [
    ("ref", VIEW, (VIEW,)),
    ("ref", None, (None,)),
    ("i32", np.int16(-3), (-3,)),
    ("i32", True, (1,)),
    ("i32", (1 << 32) - 1, ((1 << 32) - 1,)),  # i32 is signless: the unsigned reading too
    ("f64", 2, (2.0,)),
    ("f64", np.float32(0.5), (0.5,)),
    ("nothing", None, ()),
    ("pair", [VIEW, np.int64(9)], (VIEW, 9)),
])
def test_results_of_the_declared_kinds_pass_as_their_register_form(
        function: str, value: Any, expected: tuple[Any, ...]) -> None:
    got = _returning(value, function)
    assert got == expected and [type(v) for v in got] == [type(v) for v in expected]


def test_the_error_names_the_import_a_compiled_program_called() -> None:
    """The program would next ask the view for its size: the error names `custom.foo`, not
    `hal.buffer_view.dim`."""
    caller = FunctionDef("run", S("0r_I"), 4, (Block((0,), (
        Call((1,), "custom.foo", (0,)), Const(2, 0),
        Call((3,), "hal.buffer_view.dim", (1, 2)), Return((3,)))),))
    program = BytecodeModule(ModuleImage(
        "program", ("custom",), (ImportDef("custom.foo", S("0r_r")),
                                 ImportDef("hal.buffer_view.dim", S("0ri_I"))),
        (ExportDef("run", 0),), (caller,), devices=()))
    context = _context(program)
    context.module_state("custom")["value"] = VIEW
    assert context.lookup("program.run")(np.zeros((3, 2), np.float32)) == 2
    context.module_state("custom")["value"] = "f32"
    with pytest.raises(RuntimeFault, match="^custom.foo: returned str where its signature 0r_r "
                                           "declares a reference"):
        context.lookup("program.run")(np.zeros(3, np.float32))


def test_a_coarse_fences_export_that_returns_a_wrong_result_fails_its_signal_fence() -> None:
    """Whoever waits on the signal fence hears of it too, instead of waiting forever."""
    context = _context()
    context.module_state("custom")["value"] = "oops"
    signal = Fence.create()
    with pytest.raises(RuntimeFault, match="custom.later: returned str"):
        context.lookup("custom.later").invoke_async([VIEW], Fence(), signal)
    with pytest.raises(RuntimeFault, match="custom.later: returned str"):
        signal.wait(0)


def test_the_hal_module_is_the_only_one_left_unchecked_and_matches_the_verifiers_table() -> None:
    """`hal.buffer.load` returns a scalar through `r`, by design: the hal module's results are
    not checked, and the verifier knows each one's kind from weir/format/hal_abi.py, which must
    describe exactly the functions the module exports, with the same calling conventions."""
    hal = HalModule()
    assert hal.checks_results is False and Sloppy.checks_results is True
    assert {name: e.signature.cconv for name, e in hal.exports.items()} == \
        {name: f.cconv for name, f in HAL_FUNCTIONS.items()}
    for name, entry in HAL_FUNCTIONS.items():
        sig = hal.exports[name].signature
        assert (len(entry.args), len(entry.results)) == (len(sig.args), len(sig.results)), name
