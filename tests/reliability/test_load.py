"""Load: 8 threads x 1,000 invocations of one shared compiled module on local-task, each call
with its own inputs checked exactly against numpy, for both targets and both execution models
(async-external: every call with its own wait and signal fences), with each thread on its own
context and with all threads on one context (which weir/runtime/vm/context.py says is safe).
Afterwards the runtime's own counts show nothing left behind: no pending queue operation, no
live buffer, no thread of a closed device, and process-wide the semaphores, buffers and devices
of before the test.

`make test` runs the full 8 x 1,000 (alternating the multiply and the matmul); `make stress`
runs 8 x 1,000 of each function. Threads are joined with a bound, so a hang fails the test
rather than stalling it."""

from __future__ import annotations

import gc
import threading
from typing import Callable

import numpy as np
import pytest
from load_programs import MODELS, TARGETS, call, compiled, expected, inputs, settled

from weir.runtime.api import Context, Function, Instance, load_module_bytes, runtime_statistics
from weir.runtime.hal.drivers.local_task import LocalTaskDevice
from weir.runtime.hal.statistics import DeviceStatistics, RuntimeStatistics
from weir.runtime.vm.bytecode_module import BytecodeModule

THREADS = 8
CALLS = 1_000  # per thread
JOIN_S = 300.0  # bound on a whole thread's run; a hang fails here instead of stalling make test

_modules: dict[tuple[str, str], BytecodeModule] = {}


def shared_module(target: str, model: str) -> BytecodeModule:
    """One loaded module per (target, model) for the whole session, linked into every context."""
    key = (target, model)
    if key not in _modules:
        _modules[key] = load_module_bytes(compiled(target, model))
    return _modules[key]


def run_threads(body: Callable[[int], None]) -> list[str]:
    """Runs body(thread_index) on THREADS threads released together; returns the failures."""
    start = threading.Barrier(THREADS)
    failures: list[str] = []

    def thread(index: int) -> None:
        try:
            start.wait(JOIN_S)
            body(index)
        except BaseException as e:  # reported by the test, with the thread it happened on
            failures.append(f"thread {index}: {type(e).__name__}: {e}")

    threads = [threading.Thread(target=thread, args=(i,), name=f"load-{i}") for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(JOIN_S)
    hung = [t.name for t in threads if t.is_alive()]
    assert not hung, f"threads still running after {JOIN_S:g} s: {hung}"
    return failures


def calls_of(index: int, count: int, both: bool) -> list[tuple[str, int]]:
    """(function, seed) of each call of one thread: seeds are distinct across all threads."""
    names = ("mul", "matmul")
    if both:
        return [(name, index * count + k) for k in range(count) for name in names]
    return [(names[k % 2], index * count + k) for k in range(count)]


def invoke_all(functions: dict[str, Function], plan: list[tuple[str, int]],
               own_fences: bool) -> None:
    for name, seed in plan:
        args = inputs(name, seed)
        result = call(functions[name], args, own_fences)
        want = expected(name, args)
        if not np.array_equal(result, want):
            raise AssertionError(f"{name} seed {seed}: got {result.tolist()}, "
                                 f"expected {want.tolist()}")


def device_bound(device: LocalTaskDevice) -> int:
    """The most threads a local-task device may run: workers, the deadline monitor and the
    workgroup helpers (the dispatching worker is one of the workgroup threads)."""
    options = device.options
    return options.worker_count + 1 + options.workgroup_threads - 1


def assert_idle(stats: DeviceStatistics, dispatches: int) -> None:
    s = stats.snapshot()
    assert (s["queue_pending"], s["queue_failed"]) == (0, 0)
    assert s["dispatches_executed"] == dispatches
    assert s["queue_completed"] == sum(s["queue_submitted"].values())
    assert (s["buffers_alive"], s["buffer_bytes_alive"]) == (0, 0), \
        "device buffers alive after every call's result was copied out"


def assert_back_to(baseline: RuntimeStatistics, closed: list[DeviceStatistics]) -> None:
    """Every closed device's threads ended (shutdown joins them); the process holds at most what
    it held before (other tests' devices, and what they hold, may be collected meanwhile)."""
    assert [s.threads.alive for s in closed] == [0] * len(closed)
    after = settled()
    for key in ("devices_alive", "queue_pending", "semaphores_alive", "buffers_alive",
                "buffer_bytes_alive", "pooled_bytes", "threads_alive"):
        assert after[key] <= baseline[key], f"{key}: {baseline[key]} before, {after[key]} after"



@pytest.fixture(params=[(t, m) for t in TARGETS for m in MODELS], ids=lambda p: f"{p[0]}-{p[1]}")
def variant(request: pytest.FixtureRequest) -> tuple[str, str]:
    return request.param  # type: ignore[no-any-return]


def test_each_thread_on_its_own_context(variant: tuple[str, str], stress: bool) -> None:
    target, model = variant
    module = shared_module(target, model)
    instance = Instance()
    closed: list[DeviceStatistics] = []
    baseline = settled()

    def body(index: int) -> None:
        # Contexts are made (and the module's executables loaded) on all threads at once too.
        with Context(instance, devices=[instance.create_device("local-task")], modules=[module],
                     owns_devices=True) as ctx:
            device = ctx.devices[0]
            assert isinstance(device, LocalTaskDevice)
            closed.append(device.statistics)
            functions = {name: ctx.lookup_function(name) for name in ("mul", "matmul")}
            plan = calls_of(index, CALLS, both=stress)
            invoke_all(functions, plan, own_fences=model == "async-external")
            gc.collect()
            assert_idle(device.statistics, len(plan))
            assert device.statistics.threads.alive <= device_bound(device)

    assert run_threads(body) == []
    assert len(closed) == THREADS
    assert_back_to(baseline, closed)


def test_all_threads_on_one_context(variant: tuple[str, str], stress: bool) -> None:
    target, model = variant
    baseline = settled()
    instance = Instance()
    ctx = Context(instance, devices=[instance.create_device("local-task")],
                  modules=[shared_module(target, model)], owns_devices=True)
    device = ctx.devices[0]
    assert isinstance(device, LocalTaskDevice)
    functions = {name: ctx.lookup_function(name) for name in ("mul", "matmul")}
    plans = [calls_of(i, CALLS, both=stress) for i in range(THREADS)]

    failures = run_threads(lambda i: invoke_all(functions, plans[i],
                                                own_fences=model == "async-external"))
    assert failures == []
    gc.collect()
    assert_idle(device.statistics, sum(map(len, plans)))
    assert device.statistics.threads.alive <= device_bound(device)
    stats = device.statistics
    ctx.close()
    assert stats.threads.alive == 0
    del ctx, device, functions
    assert_back_to(baseline, [stats])
