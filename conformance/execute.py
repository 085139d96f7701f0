"""Runs jobs the way a user would: `weir-compile` then `weir-check-module`, each in its own
process with a time limit (and an address-space limit), so a crash, a hang or a runaway
allocation in weir is one classified result, never the end of the run.

Jobs run in parallel, one per core: the work happens in the child processes, so a thread pool
that waits on them is the process pool.
"""

from __future__ import annotations

import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from conformance.plan import Job

# Every status a job can end in; "pass" is the only good one.
STATUSES = ("pass", "compile-error", "check-failure", "run-error", "crash", "timeout")

_LOCATED = re.compile(r"^[^\s:][^:\n]*:\d+:\d+: ")
_RUN = re.compile(r"^\[ RUN      \] (.+)$")
_FAILED = re.compile(r"^\[  FAILED  \] (.+)$")
_MAX_REASON = 300


@dataclass(frozen=True)
class Outcome:
    """How one job ended: a status from STATUSES and a one-line reason (empty for a pass)."""

    status: str
    reason: str = ""
    located: bool = True   # for compile errors: the message says file:line:col

    @property
    def passed(self) -> bool:
        return self.status == "pass"


@dataclass(frozen=True)
class Result:
    """A job, how it ended, and the wall time of its compile and run together."""

    job: Job
    outcome: Outcome
    seconds: float


@dataclass(frozen=True)
class Limits:
    """Per-process limits: wall-clock seconds, and address space in bytes (0: none)."""

    timeout_s: float = 300.0
    memory_bytes: int = 8 << 30


@dataclass(frozen=True)
class Finished:
    """A finished process; returncode None: killed at the time limit."""

    returncode: int | None
    stdout: str
    stderr: str


def tool(name: str) -> Path:
    """A weir console script of the interpreter running the runner (the project's venv)."""
    path = Path(sys.executable).parent / name
    if not path.exists():
        raise FileNotFoundError(f"{path} not found: run `make venv` first")
    return path


def run_process(argv: list[str], limits: Limits, cwd: Path) -> Finished:
    """Runs `argv` to its end or to the time limit, under the address-space limit."""
    # Its own session, so that at the time limit the whole process group goes, helpers included.
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, errors="replace", start_new_session=True)
    if limits.memory_bytes:
        try:
            resource.prlimit(proc.pid, resource.RLIMIT_AS,
                             (limits.memory_bytes, limits.memory_bytes))
        except (ProcessLookupError, PermissionError):
            pass  # already gone: its output says what happened
    try:
        out, err = proc.communicate(timeout=limits.timeout_s)
        return Finished(proc.returncode, out, err)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        return Finished(None, out, err)


def _one_line(text: str, root: str | None = None) -> str:
    if root:
        text = text.replace(root.rstrip("/") + "/", "")
    text = " ".join(text.split())
    return text if len(text) <= _MAX_REASON else text[:_MAX_REASON - 1] + "…"


def _crash(step: str, done: Finished) -> Outcome | None:
    """A signal, an exit code other than 0/1, or weir's own 'internal error'/a traceback."""
    if done.returncode is not None and done.returncode < 0:
        try:
            name = signal.Signals(-done.returncode).name
        except ValueError:
            name = f"signal {-done.returncode}"
        return Outcome("crash", f"{step} killed by {name}")
    for line in done.stderr.splitlines():
        if "internal error" in line:
            return Outcome("crash", f"{step}: {line.strip()}")
    if "Traceback (most recent call last)" in done.stderr:
        last = [ln for ln in done.stderr.splitlines() if ln.strip()][-1]
        return Outcome("crash", f"{step} traceback: {last.strip()}")
    if done.returncode not in (0, 1):
        first = next((ln for ln in done.stderr.splitlines() if ln.strip()), "")
        return Outcome("crash", f"{step} exited with code {done.returncode}: {first.strip()}")
    return None


def classify_compile(done: Finished, timeout_s: float, root: str | None = None) -> Outcome | None:
    """None when weir-compile succeeded; otherwise why it did not."""
    if done.returncode is None:
        return Outcome("timeout", f"compile timed out after {timeout_s:g} s")
    crash = _crash("compile", done)
    if crash is not None:
        return Outcome(crash.status, _one_line(crash.reason, root))
    if done.returncode == 0:
        return None
    lines = [ln.strip() for ln in done.stderr.splitlines() if ln.strip()]
    first = next((ln for ln in lines if "error:" in ln), lines[0] if lines else "no message")
    return Outcome("compile-error", _one_line(first, root), located=bool(_LOCATED.match(first)))


def classify_check(done: Finished, timeout_s: float, root: str | None = None) -> Outcome:
    """weir-check-module's verdict: the first failing test and its first problem."""
    if done.returncode is None:
        return Outcome("timeout", f"run timed out after {timeout_s:g} s")
    crash = _crash("run", done)
    if crash is not None:
        return Outcome(crash.status, _one_line(crash.reason, root))
    if done.returncode == 0:
        return Outcome("pass")
    test: str | None = None
    problem: str | None = None
    failed = total = 0
    current: str | None = None
    lines_of_test: list[str] = []
    for line in done.stdout.splitlines():
        if (m := _RUN.match(line)) is not None:
            current, lines_of_test, total = m.group(1), [], total + 1
        elif (m := _FAILED.match(line)) is not None:
            failed += 1
            if test is None:
                test = m.group(1)
                problem = next((ln for ln in lines_of_test if ln.strip()), "failed")
        elif current is not None and not line.startswith("  "):
            lines_of_test.append(line)
    if test is None or problem is None:
        lines = [ln.strip() for ln in done.stderr.splitlines() if ln.strip()]
        return Outcome("run-error", _one_line(lines[0] if lines else "exit code 1", root))
    status = "run-error" if problem.startswith("error:") else "check-failure"
    return Outcome(status, _one_line(f"{test} ({failed} of {total} tests failed): {problem}",
                                     root))


def run_job(job: Job, limits: Limits, work_dir: Path) -> Result:
    """Compiles then checks one file; the module goes to `work_dir` and is deleted after."""
    start = time.monotonic()
    root = str(job.path.parents[len(Path(job.name).parts) - 1])
    with tempfile.TemporaryDirectory(dir=work_dir) as tmp:
        module = Path(tmp) / "module.wvm"
        compiled = run_process([str(tool("weir-compile")), *job.compile_flags, str(job.path),
                                "-o", str(module)], limits, Path(tmp))
        outcome = classify_compile(compiled, limits.timeout_s, root)
        if outcome is None and not module.exists():
            outcome = Outcome("crash", "compile exited 0 but wrote no module")
        if outcome is None:
            checked = run_process([str(tool("weir-check-module")), f"--module={module}",
                                   f"--device={job.target.device}"], limits, Path(tmp))
            outcome = classify_check(checked, limits.timeout_s, root)
    return Result(job, outcome, time.monotonic() - start)


def default_jobs() -> int:
    """The cores this process may use: each job keeps about one busy."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def run_all(jobs: Iterable[Job], limits: Limits, work_dir: Path, parallel: int,
            on_result: Callable[[Result], None] | None = None) -> list[Result]:
    """Runs every job, `parallel` at a time; results come back in the jobs' order."""
    job_list = list(jobs)
    work_dir.mkdir(parents=True, exist_ok=True)
    results: dict[int, Result] = {}
    with ThreadPoolExecutor(max_workers=max(1, parallel)) as pool:
        futures = {pool.submit(run_job, job, limits, work_dir): i for i, job in enumerate(job_list)}
        for future in as_completed(futures):
            result = future.result()
            results[futures[future]] = result
            if on_result is not None:
                on_result(result)
    return [results[i] for i in range(len(job_list))]
