"""The `custom` module of the asynchronous sample, written in Python.

`call.async` must not block its caller: it takes a queue-ordered allocation for its result
(chained on the wait fence, so it is handed out now and usable once the input is ready), queues
the work for its own worker thread, and returns the not-yet-populated result at once. The worker
doubles each element when the input is ready and signals the signal fence, or fails it with the
reason, which then reaches whoever waits on the program's results.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable

from weir.errors import RuntimeFault, WeirError
from weir.runtime.api import BufferView, Device, Fence, NativeModule, export
from weir.runtime.vm.context import Context

# How long the worker waits for an input before giving up with an error (never forever).
INPUT_TIMEOUT_S = 60.0


class _Worker:
    """One daemon thread per context running queued jobs in order: the module's own 'queue'."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._loop, name="custom-worker", daemon=True)
        self._thread.start()

    def submit(self, job: Callable[[], None]) -> None:
        self._jobs.put(job)

    def _loop(self) -> None:
        while True:
            self._jobs.get()()


class CustomState:
    def __init__(self, device: Device) -> None:
        self.device = device
        self.worker = _Worker()
        self.completed = 0  # calls whose work has run; lets tests see that nothing ran early


class CustomModule(NativeModule):
    module_name = "custom"

    def create_state(self, context: Context) -> CustomState:
        if not context.devices:
            raise RuntimeFault("module 'custom' needs a device in its context")
        return CustomState(context.devices[0])

    @export("0rrr_r", name="call.async", model="coarse-fences")
    def call_async(self, state: CustomState, arg: BufferView, wait: Fence,
                   signal: Fence) -> BufferView:
        allocated = Fence.create()
        buffer = state.device.queue_alloca(wait, allocated, arg.byte_length)
        result = BufferView(buffer, 0, arg.dtype, arg.shape)

        def work() -> None:
            try:
                if not allocated.wait(INPUT_TIMEOUT_S):
                    signal.fail(f"custom.call.async: the input was not ready within "
                                f"{INPUT_TIMEOUT_S:g} s")
                    return
                result.to_numpy()[...] = arg.to_numpy() * 2
            except WeirError as e:  # the wait failed: pass the original message on
                signal.fail(e)
                return
            state.completed += 1
            signal.signal()

        state.worker.submit(work)
        return result
