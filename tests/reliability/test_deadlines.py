"""Deadlines (issue 7, item 5): every wait has one. A wait stops at its own timeout or at the
calling thread's deadline (`deadline(seconds, what)`, `Function(..., timeout=)`,
`weir-run-module --deadline_ms=N`), whichever comes first; stopped by the deadline it raises
`DeadlineExceeded` naming the bounded call and what it waited for. A reached wait costs nothing
and never raises, however late. After a deadline the context keeps working.

The waits below are on fences nobody signals, so only the deadline can end them (or, were it
broken, a much later guard, which fails the test); the deadlines are short (50 ms) and nothing is
asserted about how long anything took."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from fault_programs import (DRIVERS, EXPECTED, HANG_GUARD_S, X, Custom, compiled, hanging_context,
                            recover)

import weir.api as weir
from weir.errors import DeadlineExceeded, RuntimeFault, UsageError
from weir.runtime.api import BufferView, Context, Fence, deadline
from weir.runtime.hal.drivers.local_sync import LocalSyncDevice, LocalSyncOptions
from weir.runtime.hal.semaphore import Semaphore
from weir.tools.run_module import main as run_module

SHORT = 0.05
HANGING = str(Path(__file__).parent / "fault_programs.py") + ":Hanging"


def expired(what: str, waiting_for: str) -> str:
    """The message of a wait cut short by a 50 ms deadline, as a regex."""
    return f"^{re.escape(f'{what} (timeout 0.05 s): deadline exceeded while {waiting_for}')}$"


@pytest.fixture(params=DRIVERS)
def driver(request: pytest.FixtureRequest) -> Iterator[str]:
    yield request.param


# --- the HAL ------------------------------------------------------------------------------------


def test_semaphore_and_fence_waits_stop_at_the_thread_deadline() -> None:
    sem = Semaphore(0)
    with deadline(SHORT, "step"):
        with pytest.raises(DeadlineExceeded,
                           match=expired("step", "waiting for a semaphore at 0 to reach 1")):
            sem.wait(1, HANG_GUARD_S)
        fence = Fence.join([Fence.create(), Fence.create()])
        with pytest.raises(DeadlineExceeded, match=expired("step", "waiting for the inputs")):
            fence.wait(HANG_GUARD_S, "waiting for the inputs")


def test_a_reached_wait_returns_even_past_the_deadline() -> None:
    sem = Semaphore(3)
    with deadline(0, "late"):
        assert sem.wait(2) and Fence.create(sem, 3).wait() and Fence.create(sem, 1).wait(0)


def test_the_earlier_of_timeout_and_deadline_wins() -> None:
    sem = Semaphore(0)
    with deadline(60, "outer"):
        assert sem.wait(1, timeout=0) is False  # its own timeout first: False, as without one
        with deadline(SHORT, "inner"):
            with deadline(60, "wider"):  # a later deadline inside never extends the earlier
                with pytest.raises(DeadlineExceeded, match="^inner "):
                    sem.wait(1, timeout=30)


def test_deadline_arguments_are_checked() -> None:
    for bad in (-1, "1", True, float("nan")):
        with pytest.raises(UsageError, match="timeout must be None or a number of seconds"):
            with deadline(bad, "f"):  # type: ignore[arg-type]
                pass


def test_a_local_sync_inline_wait_stops_at_the_deadline() -> None:
    device = LocalSyncDevice(LocalSyncOptions(wait_timeout_s=HANG_GUARD_S))
    never, signal = Fence.create(), Fence.create()
    with deadline(SHORT, "submit"):
        with pytest.raises(DeadlineExceeded, match=expired(
                "submit", "waiting inline for the wait fence of queue barrier")):
            device.queue_barrier(never, signal)
    with pytest.raises(RuntimeFault, match="^submit .*deadline exceeded"):
        signal.wait(0)  # the operation never runs: its signal fence says why


# --- the API ------------------------------------------------------------------------------------


def test_function_call_timeout_on_a_coarse_fences_function(driver: str) -> None:
    with hanging_context(driver, "async-external") as context:
        main = context.lookup("prog.main")
        waiting = ("waiting for the signal fence of prog.main" if driver == "local-task" else
                   "waiting inline for the wait fence of queue execute")
        with pytest.raises(DeadlineExceeded, match=expired("prog.main", waiting)):
            main(X, timeout=SHORT)
        view = BufferView.from_numpy(X, context.devices[0].allocator)
        with pytest.raises(DeadlineExceeded, match=expired("prog.main", waiting)):
            main.invoke_views([view], timeout=SHORT)
        recover(context)


def test_function_call_timeout_in_a_compiled_host_wait(driver: str) -> None:
    """async-internal: the program awaits the import's signal fence in hal.fence.await."""
    with hanging_context(driver, "async-internal") as context:
        waiting = "waiting in hal.fence.await"
        with pytest.raises(DeadlineExceeded, match=expired("prog.awaits", waiting)):
            context.lookup("prog.awaits")(X, timeout=SHORT)
        recover(context)


def test_invoke_async_timeout_bounds_its_host_waits_and_fails_its_signal() -> None:
    """`@awaits` waits on the host for its import; the deadline ends that wait and the caller's
    signal fence fails with the same message, so nothing waits on it for ever."""
    with hanging_context("local-task", "async-external") as context:
        device = context.devices[0]
        wait, signal = Fence.create(), Fence.create()
        wait.signal()
        view = BufferView.from_numpy(X, device.allocator)
        pattern = expired("prog.awaits", "waiting in hal.fence.await")
        with pytest.raises(DeadlineExceeded, match=pattern):
            context.lookup("prog.awaits").invoke_async([view], wait, signal, timeout=SHORT)
        with pytest.raises(RuntimeFault, match=pattern):
            signal.wait(0)
        recover(context)


def test_no_timeout_means_no_deadline() -> None:
    with weir.load([Custom(), compiled("async-external")], device="local-task") as context:
        assert np.array_equal(context.lookup("prog.main")(X, timeout=None), EXPECTED)
        assert np.array_equal(context.lookup("prog.main")(X, timeout=60), EXPECTED)


def test_bad_timeouts_are_usage_errors() -> None:
    with weir.load([Custom(), compiled("async-external")], device="local-sync") as context:
        with pytest.raises(UsageError, match="^prog.main: timeout must be"):
            context.lookup("prog.main")(X, timeout=-1)


# --- weir-run-module ----------------------------------------------------------------------------


def test_run_module_deadline_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    module = tmp_path / "prog.wvm"
    module.write_bytes(compiled("async-external"))
    for device in DRIVERS:
        code = run_module([f"--module=python:{HANGING}", f"--module={module}",
                           "--function=main", "--input=4xi32=1,2,3,4", f"--device={device}",
                           "--deadline_ms=50"])
        out, err = capsys.readouterr()
        assert code == 1 and out.startswith("EXEC @main\n")
        assert err.count("\n") == 1 and "Traceback" not in err
        assert err.startswith("weir-run-module: error: prog.main (timeout 0.05 s): deadline "
                              "exceeded while waiting ")
    # Without a deadline the same program runs to its result when nothing hangs.
    code = run_module([f"--module=python:{Path(__file__).parent / 'fault_programs.py'}:Custom",
                       f"--module={module}", "--function=main", "--input=4xi32=1,2,3,4",
                       "--deadline_ms=0"])
    out, err = capsys.readouterr()
    assert (code, err) == (0, "") and out.endswith("4xi32=4 16 36 64\n")
    code = run_module([f"--module={module}", "--deadline_ms=-5"])
    _, err = capsys.readouterr()
    assert code == 1
    assert err == "weir-run-module: error: --deadline_ms must not be negative, got -5\n"
