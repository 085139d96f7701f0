"""Ctrl-C (issue 7, item 5): SIGINT interrupts a wait.

- weir-run-module blocked in a wait (a module written in Python waiting on a fence nobody
  signals; a compiled program whose import never signals, waited for inline, in
  hal.fence.await, or on the call's signal fence) exits 130 with one line, and exits at once:
  no thread keeps the process alive. SIGINT is sent once the process has said it is waiting.
- The Python API: a call blocked in a wait raises KeyboardInterrupt once the main thread is
  parked in the wait (a helper thread watches for that, then sends SIGINT to it); the fences the
  call would have signalled fail instead of staying pending, and the context keeps working."""

from __future__ import annotations

import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
from fault_programs import EXPECTED, HANG_GUARD_S, X, compiled, hanging_context, recover

import weir.api as weir
from weir.errors import RuntimeFault
from weir.runtime.api import BufferView, Context, Fence, deadline
from weir.runtime.hal.semaphore import Semaphore

PROGRAMS = Path(__file__).parent / "fault_programs.py"
REPO = Path(__file__).resolve().parents[2]


# --- weir-run-module ------------------------------------------------------------------------------


def _lines(stream: object, into: queue.SimpleQueue[str]) -> None:
    for line in stream:  # type: ignore[attr-defined]
        into.put(line)
    into.put("")  # end of output


@pytest.mark.parametrize("case", ["python-module", "coarse-fences-local-task",
                                  "awaited-local-sync"])
def test_run_module_exits_130_on_sigint_while_waiting(case: str, tmp_path: Path) -> None:
    module = tmp_path / "prog.wvm"
    if case == "python-module":
        argv = [f"--module=python:{PROGRAMS}:Blocker", "--function=hang", "--input=4xi32=1"]
        exec_line = "EXEC @hang\n"
    elif case == "coarse-fences-local-task":
        module.write_bytes(compiled("async-external"))
        argv = [f"--module=python:{PROGRAMS}:Hanging", f"--module={module}", "--function=main",
                "--device=local-task", "--input=4xi32=1,2,3,4"]
        exec_line = "EXEC @main\n"
    else:
        module.write_bytes(compiled("async-internal"))
        argv = [f"--module=python:{PROGRAMS}:Hanging", f"--module={module}",
                "--function=awaits", "--device=local-sync", "--input=4xi32=1,2,3,4"]
        exec_line = "EXEC @awaits\n"
    proc = subprocess.Popen([sys.executable, "-m", "weir.tools.run_module", *argv], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out: queue.SimpleQueue[str] = queue.SimpleQueue()
        reader = threading.Thread(target=_lines, args=(proc.stdout, out), daemon=True)
        reader.start()
        seen = []
        while not seen or seen[-1] not in ("WAITING\n", ""):
            seen.append(out.get(timeout=HANG_GUARD_S))
        assert seen == [exec_line, "WAITING\n"], (seen, proc.stderr.read() if proc.stderr else "")
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=HANG_GUARD_S)  # a live non-daemon thread would block exit
        reader.join(HANG_GUARD_S)
        assert proc.stderr is not None
        assert (code, proc.stderr.read()) == (130, "weir-run-module: interrupted\n")
        assert out.get(timeout=HANG_GUARD_S) == ""  # nothing printed after the marker
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


# --- the Python API -------------------------------------------------------------------------------


def _parked(frame: object) -> bool:
    return getattr(frame, "f_code", None) is Semaphore._park.__code__


@pytest.fixture
def interrupt_when_parked() -> Iterator[Callable[[], None]]:
    """Arms a helper thread that sends SIGINT to the main thread once the main thread sleeps in
    a semaphore wait (it looks at the main thread's innermost frame)."""
    main_id = threading.main_thread().ident
    assert main_id == threading.get_ident(), "signals reach only the main thread"
    assert main_id is not None
    helpers: list[threading.Thread] = []

    def watch() -> None:
        give_up = time.monotonic() + HANG_GUARD_S
        while time.monotonic() < give_up:
            if _parked(sys._current_frames().get(main_id)):
                signal.pthread_kill(main_id, signal.SIGINT)
                return
            time.sleep(0.001)  # polling the condition, not ordering anything

    def arm() -> None:
        helper = threading.Thread(target=watch, name="test-interrupter", daemon=True)
        helpers.append(helper)
        helper.start()

    yield arm
    for helper in helpers:
        helper.join(HANG_GUARD_S)
        assert not helper.is_alive()


def test_a_fence_wait_without_limit(interrupt_when_parked: Callable[[], None]) -> None:
    never = Fence.create()
    interrupt_when_parked()
    with pytest.raises(KeyboardInterrupt):
        never.wait(HANG_GUARD_S)
    ((sem, _),) = never.points
    assert sem._sleepers == []  # the interrupted waiter withdrew
    never.signal()
    assert never.wait(0)


@pytest.mark.parametrize("driver, model, function", [
    ("local-task", "async-external", "main"),     # Function waits on the call's signal fence
    ("local-task", "async-internal", "awaits"),   # hal.fence.await inside the program
    ("local-sync", "async-external", "main"),     # local-sync's inline wait
    ("local-sync", "async-internal", "awaits"),
])
def test_a_call_blocked_in_a_wait(interrupt_when_parked: Callable[[], None], driver: str,
                                  model: str, function: str) -> None:
    with hanging_context(driver, model) as context:
        interrupt_when_parked()
        with deadline(HANG_GUARD_S, "test"), pytest.raises(KeyboardInterrupt):
            context.lookup(f"prog.{function}")(X)
        recover(context)


def test_an_interrupted_async_call_fails_its_signal_fence(
        interrupt_when_parked: Callable[[], None]) -> None:
    with hanging_context("local-sync", "async-external") as context:
        device = context.devices[0]
        wait, done = Fence.create(), Fence.create()
        wait.signal()
        view = BufferView.from_numpy(X, device.allocator)
        interrupt_when_parked()
        with deadline(HANG_GUARD_S, "test"), pytest.raises(KeyboardInterrupt):
            context.lookup("prog.awaits").invoke_async([view], wait, done)
        with pytest.raises(RuntimeFault, match=r"^prog\.awaits: interrupted \(KeyboardInterrupt\)$"):
            done.wait(0)
        recover(context)
