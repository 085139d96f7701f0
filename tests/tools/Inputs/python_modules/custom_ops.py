"""Modules written in Python for tests/tools/test_python_modules.py, loaded with
`weir-run-module --module=python:tests/tools/Inputs/python_modules/custom_ops.py:ClassName`."""

from __future__ import annotations

from typing import Any

from weir.errors import RuntimeFault
from weir.runtime.hal.buffer_view import BufferView
from weir.runtime.hal.fence import Fence
from weir.runtime.vm.native_module import NativeModule, export


class Doubler(NativeModule):
    module_name = "doubler"

    @export("0r_r")
    def double(self, state: None, view: BufferView) -> BufferView:
        return BufferView.from_numpy(view.to_numpy() * 2)

    @export("0rf_r", name="scale")
    def scale_by(self, state: None, view: BufferView, factor: float) -> BufferView:
        return BufferView.from_numpy(view.to_numpy() * factor)


class Counter(NativeModule):
    """Per-context state: every context starts counting from zero."""

    module_name = "counter"

    def create_state(self, context: Any) -> dict[str, int]:
        return {"calls": 0}

    @export("0_i")
    def count(self, state: dict[str, int]) -> int:
        state["calls"] += 1
        return state["calls"]


class AsyncTripler(NativeModule):
    """coarse-fences exports: a wait fence and a signal fence trail the user's arguments."""

    module_name = "async_tripler"

    @export("0rrr_r", model="coarse-fences")
    def triple(self, state: None, view: BufferView, wait: Fence, signal: Fence) -> BufferView:
        if not wait.wait(0):  # never block: the caller must hand a reached wait fence here
            raise RuntimeFault("async_tripler.triple: wait fence not reached")
        out = BufferView.from_numpy(view.to_numpy() * 3)
        signal.signal()
        return out

    @export("0rrr_r", model="coarse-fences")
    def fail(self, state: None, view: BufferView, wait: Fence, signal: Fence) -> BufferView:
        signal.fail("async_tripler.fail: the device caught fire")
        return view


class Faulty(NativeModule):
    module_name = "faulty"

    @export("0r_r")
    def explode(self, state: None, view: BufferView) -> BufferView:
        raise ValueError("no such luck")


class ReturnsArray(NativeModule):
    """Returns the numpy array itself where its signature declares a reference."""

    module_name = "custom"

    @export("0r_r")
    def foo(self, state: None, view: BufferView) -> Any:
        return view.to_numpy() * 2


class BrokenInit(NativeModule):
    module_name = "broken_init"

    def __init__(self) -> None:
        super().__init__()
        raise RuntimeError("cannot open the device")


class NoSuperInit(NativeModule):
    module_name = "no_super"

    def __init__(self) -> None:
        self.ready = True


class NeedsArgument(NativeModule):
    module_name = "needs_argument"

    def __init__(self, path: str) -> None:
        super().__init__()


class NoName(NativeModule):
    pass


class Plain:
    """Not a NativeModule."""


def helper() -> None:
    """Not a class at all."""


LIMIT = 4
