"""What the fault, deadline, interrupt and wait-cycle tests share: one small program with a
coarse-fences import, a sync import and a plain export, compiled once per execution model, and
the `custom` module it imports, written in Python, whose calls can be told to raise, to fail
inside the work they queue, or never to signal.

`custom.call.async` does its work the way a module with its own device work would: it records a
dispatch of a host executable (`custom::double`) and queues it behind the call's wait fence, so
the work runs on the device's queue and a failure there is a failing dispatch.

Also loadable by weir-run-module: `--module=python:tests/reliability/fault_programs.py:Hanging`
(every call to the coarse-fences imports leaves its signal fence unsignalled and prints WAITING),
and `...:Blocker` (`blocker.hang` prints WAITING and waits on a fence nobody signals)."""

from __future__ import annotations

import functools
import sys
import threading
from typing import Any, Sequence

import numpy as np

import weir.api as weir
from weir.runtime.api import BufferView, Context, Device, Fence, NativeModule, export
from weir.runtime.hal.buffer import Buffer
from weir.runtime.hal.command_buffer import CommandBuffer
from weir.runtime.hal.executable import Executable
from weir.runtime.hal.workgroups import WorkgroupRunner

PROGRAM = """
module @prog {
  func.func private @custom.call.async(tensor<?xi32>) -> tensor<?xi32> attributes {
    iree.abi.model = "coarse-fences", nosideeffects}
  func.func private @custom.awaited(tensor<?xi32>) -> tensor<?xi32> attributes {
    iree.abi.model = "coarse-fences"}
  func.func private @custom.sync_double(tensor<?xi32>) -> tensor<?xi32>
  func.func @main(%arg0: tensor<?xi32>) -> tensor<?xi32> {
    %0 = arith.muli %arg0, %arg0 : tensor<?xi32>
    %1 = call @custom.call.async(%0) : (tensor<?xi32>) -> tensor<?xi32>
    %2 = arith.addi %1, %1 : tensor<?xi32>
    return %2 : tensor<?xi32>
  }
  func.func @awaits(%arg0: tensor<?xi32>) -> tensor<?xi32> {
    %0 = arith.muli %arg0, %arg0 : tensor<?xi32>
    %1 = call @custom.awaited(%0) : (tensor<?xi32>) -> tensor<?xi32>
    %2 = arith.addi %1, %1 : tensor<?xi32>
    return %2 : tensor<?xi32>
  }
  func.func @with_sync(%arg0: tensor<?xi32>) -> tensor<?xi32> {
    %0 = arith.muli %arg0, %arg0 : tensor<?xi32>
    %1 = call @custom.sync_double(%0) : (tensor<?xi32>) -> tensor<?xi32>
    %2 = arith.addi %1, %1 : tensor<?xi32>
    return %2 : tensor<?xi32>
  }
  func.func @plain(%arg0: tensor<?xi32>) -> tensor<?xi32> {
    %0 = arith.addi %arg0, %arg0 : tensor<?xi32>
    return %0 : tensor<?xi32>
  }
}
"""

# A "hanging" call's signal fence fails after this long anyway, so a test of a deadline or an
# interrupt that does not work fails instead of hanging.
HANG_GUARD_S = 20.0

X = np.array([1, 2, 3, 4], dtype=np.int32)
# main, awaits and with_sync: square, double (the import), double.
EXPECTED = X * X * 2 * 2
DRIVERS = ("local-sync", "local-task")


@functools.cache
def compiled(model: str) -> bytes:
    """The program as a module file, `model` = async-external or async-internal."""
    # Imported here: weir-run-module loads this file and needs no compiler.
    from weir.compiler.api import compile_string
    from weir.compiler.options import CompilerOptions

    return compile_string(PROGRAM, "prog.mlir",
                          CompilerOptions(target_backends=("vmvx",), execution_model=model))


class HostKernel(Executable):
    """One entry point running a Python function over its bindings."""

    def __init__(self, name: str, entry: str, body: Any) -> None:
        self.name = name
        self._entry = entry
        self._body = body

    @property
    def entry_points(self) -> tuple[str, ...]:
        return (self._entry,)

    def dispatch(self, entry: int, workgroups: tuple[int, ...], constants: Sequence[int],
                 bindings: Sequence[Buffer], runner: WorkgroupRunner) -> None:
        self._body(bindings)


class CustomState:
    def __init__(self, device: Device) -> None:
        self.device = device
        # What the next calls do: "ok", "raise" (in the call), "fail_work" (in the dispatch
        # the call queued) or "hang" (never signal). Tests set it between calls.
        self.mode = "ok"
        self.signals: list[Fence] = []  # every signal fence received, in order
        self.guards: list[threading.Timer] = []

    def cancel_guards(self) -> None:
        """Stops the hang guards' timer threads (tests call it when done)."""
        for guard in self.guards:
            guard.cancel()
            guard.join()
        self.guards.clear()


class Custom(NativeModule):
    module_name = "custom"
    default_mode = "ok"

    def create_state(self, context: Any) -> CustomState:
        state = CustomState(context.devices[0])
        state.mode = self.default_mode
        return state

    def _queue_double(self, state: CustomState, arg: BufferView, wait: Fence,
                      signal: Fence) -> BufferView:
        state.signals.append(signal)
        mode = state.mode
        if mode == "raise":
            raise ValueError("boom")
        buffer = state.device.allocator.allocate(arg.byte_length)
        result = BufferView(buffer, 0, arg.dtype, arg.shape)
        if mode == "hang":  # the signal fence is not signalled (and fails only at the guard)
            guard = threading.Timer(HANG_GUARD_S, signal.fail,
                                    ("custom: hang guard expired: nothing ended the wait",))
            guard.daemon = True
            guard.start()
            state.guards.append(guard)
            sys.stdout.write("WAITING\n")
            sys.stdout.flush()
            return result

        def double(bindings: Sequence[Buffer]) -> None:
            if mode == "fail_work":
                raise ValueError("boom in the work")
            result.to_numpy()[...] = arg.to_numpy() * 2

        cb = CommandBuffer()
        cb.dispatch(HostKernel("custom", "double", double), 0, (1, 1, 1), (),
                    (arg.buffer, buffer))
        cb.finalize()
        state.device.queue_execute(wait, signal, [cb])
        return result

    @export("0rrr_r", name="call.async", model="coarse-fences")
    def call_async(self, state: CustomState, arg: BufferView, wait: Fence,
                   signal: Fence) -> BufferView:
        return self._queue_double(state, arg, wait, signal)

    @export("0rrr_r", model="coarse-fences")
    def awaited(self, state: CustomState, arg: BufferView, wait: Fence,
                signal: Fence) -> BufferView:
        return self._queue_double(state, arg, wait, signal)

    @export("0r_r")
    def sync_double(self, state: CustomState, arg: BufferView) -> BufferView:
        if state.mode == "raise":
            raise ValueError("boom")
        return BufferView.from_numpy(arg.to_numpy() * 2)


class Hanging(Custom):
    """For weir-run-module: `custom.call.async` never signals."""

    default_mode = "hang"


class Blocker(NativeModule):
    """For weir-run-module: `blocker.hang` waits on a fence nobody signals."""

    module_name = "blocker"

    @export("0r_r")
    def hang(self, state: None, arg: BufferView) -> BufferView:
        never = Fence.create()
        sys.stdout.write("WAITING\n")
        sys.stdout.flush()
        never.wait(HANG_GUARD_S)
        return arg


def hanging_context(driver: str, model: str) -> Context:
    """A context whose custom module hangs until `recover` (or its guard) releases it."""
    context = weir.load([Custom(), compiled(model)], device=driver)
    state = context.module_state("custom")
    assert isinstance(state, CustomState)
    state.mode = "hang"
    return context


def recover(context: Context) -> None:
    """Releases the hang and shows the context still computes the right result."""
    state = context.module_state("custom")
    assert isinstance(state, CustomState)
    state.cancel_guards()
    state.mode = "ok"
    assert np.array_equal(context.lookup("prog.main")(X), EXPECTED)
    assert np.array_equal(context.lookup("prog.awaits")(X), EXPECTED)
