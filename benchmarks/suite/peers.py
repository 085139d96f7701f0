"""How each peer compiles and runs a workload, every one timed the same way (Google Benchmark's
loop: weir/tools/io/benchmark_timing.py, or IREE's own copy of it in iree-benchmark-module)
and reported as the median time of one invocation over the repetitions.

- weir: `weir-compile`, then `weir-benchmark-module --device=local-task` in a subprocess,
  read from its JSON report, so it is measured exactly as IREE's tool measures IREE.
- IREE: `iree-compile` and `iree-benchmark-module` from the IREE virtual environment, in
  subprocesses with the same flags and the same `.npy` inputs; IREE is never imported here.
- numpy, and torch eager and inductor (`torch_peer.py`): the same computation in this process,
  through the same timing loop.
- the per-call overhead workload: each runtime's Python API (`python_call.py`), run by the
  interpreter of the runtime's own virtual environment.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from weir.tools.io.benchmark_report import TIME_UNITS
from weir.tools.io.benchmark_timing import measure, parse_min_time

REPO_ROOT = Path(__file__).resolve().parents[2]
# A hung tool must not hang the suite: this is far beyond any workload here.
TIMEOUT_S = 900
_MAX_ERROR_CHARS = 240


@dataclass(frozen=True)
class Timing:
    """How long to measure: Google Benchmark's `--benchmark_min_time` and repetitions."""

    repetitions: int
    min_time: str


@dataclass(frozen=True)
class Outcome:
    """A time in seconds, or the one-line reason there is none."""

    seconds: float | None = None
    error: str | None = None


def _error_line(stderr: str, returncode: int) -> str:
    """The line of a failed tool's output that says what went wrong (its first `error:` line,
    else its last line), shortened to fit a table cell."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    flagged = [line for line in lines if "error" in line.lower()]
    text = (flagged or lines or [f"exited with status {returncode}"])[0 if flagged else -1]
    return text if len(text) <= _MAX_ERROR_CHARS else text[:_MAX_ERROR_CHARS - 3] + "..."


def _run(command: Sequence[str]) -> tuple[Outcome, str]:
    """Runs a tool; the wall time it took (or why it failed) and its standard output."""
    began = time.perf_counter()
    try:
        done = subprocess.run(list(command), capture_output=True, text=True, cwd=REPO_ROOT,
                              timeout=TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        return Outcome(error=f"{Path(command[0]).name} timed out after {TIMEOUT_S} s"), ""
    except OSError as error:
        return Outcome(error=f"cannot run {command[0]}: {error.strerror or error}"), ""
    seconds = time.perf_counter() - began
    if done.returncode != 0:
        return Outcome(error=_error_line(done.stderr, done.returncode)), done.stdout
    return Outcome(seconds=seconds), done.stdout


def _weir_tool(name: str) -> list[str]:
    """A weir tool run by this interpreter, so it is the weir this suite imports."""
    return [sys.executable, "-m", f"weir.tools.{name}"]


def compile_weir(program: Path, target: str, output: Path,
                 flags: Sequence[str] = ()) -> Outcome:
    """`weir-compile` wall time, start-up included, as a user sees it."""
    outcome, _ = _run([*_weir_tool("compile"), f"--iree-hal-target-backends={target}", *flags,
                       str(program), "-o", str(output)])
    return outcome


def compile_iree(venv: Path, program: Path, output: Path) -> Outcome:
    outcome, _ = _run([str(venv / "bin" / "iree-compile"), "--iree-hal-target-backends=llvm-cpu",
                       "--iree-llvmcpu-target-cpu=host", str(program), "-o", str(output)])
    return outcome


def iree_version(venv: Path) -> str:
    """The version `iree-compile --version` reports, for the report's header."""
    try:
        done = subprocess.run([str(venv / "bin" / "iree-compile"), "--version"],
                              capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    for line in done.stdout.splitlines():
        # `IREE compiler version 3.13.0rc20261016 @ 89ece87...`: the version, without the commit.
        _, found, rest = line.partition("version")
        if found and rest.strip():
            return rest.split("@")[0].strip()
    return "unknown"


def median_from_report(text: str) -> float:
    """The median seconds per invocation in a Google Benchmark JSON report (the `median`
    aggregate when there were repetitions, else the one run)."""
    rows = json.loads(text)["benchmarks"]
    chosen = [r for r in rows if r.get("aggregate_name") == "median"] or \
        [r for r in rows if r["run_type"] == "iteration"]
    if len(chosen) != 1:
        raise ValueError(f"expected one median or one run in the report, found {len(chosen)}")
    return float(chosen[0]["real_time"]) / TIME_UNITS[chosen[0]["time_unit"]]


def _benchmark_flags(function: str, inputs: Sequence[Path], timing: Timing) -> list[str]:
    return [f"--function={function}", *(f"--input=@{p}" for p in inputs),
            f"--benchmark_repetitions={timing.repetitions}",
            f"--benchmark_min_time={timing.min_time}", "--benchmark_format=json"]


def _from_report(command: Sequence[str]) -> Outcome:
    outcome, stdout = _run(command)
    if outcome.error is not None:
        return outcome
    try:
        return Outcome(seconds=median_from_report(stdout))
    except (ValueError, KeyError) as error:
        return Outcome(error=f"{Path(command[0]).name}: unreadable report: {error}")


def benchmark_weir(module: Path, function: str, inputs: Sequence[Path], timing: Timing) -> Outcome:
    return _from_report([*_weir_tool("benchmark_module"), "--device=local-task",
                         f"--module={module}", *_benchmark_flags(function, inputs, timing)])


def benchmark_iree(venv: Path, module: Path, function: str, inputs: Sequence[Path],
                   timing: Timing) -> Outcome:
    return _from_report([str(venv / "bin" / "iree-benchmark-module"), "--device=local-task",
                         f"--module={module}", *_benchmark_flags(function, inputs, timing)])


@dataclass(frozen=True)
class Memory:
    """What one runtime's process used (benchmarks/suite/python_call.py): bytes its allocator
    handed out per call and the most it held at once (None where the runtime keeps no such
    statistics), and the process's peak RSS."""

    bytes_per_call: int | None = None
    peak_bytes: int | None = None
    peak_rss_bytes: int | None = None


def python_call_measured(python: Path, runtime: str, module: Path, function: str,
                         inputs: Sequence[Path], timing: Timing, target: str = "",
                         device: str = "local-sync") -> tuple[Outcome, Memory]:
    """One call through a runtime's Python API, timed by `python_call.py` in `python`'s own
    environment (for weir, `module` is the MLIR source, which the API compiles, or a compiled
    `.wvm`), and what the call cost in memory."""
    outcome, stdout = _run([str(python), "-m", "benchmarks.suite.python_call",
                            f"--runtime={runtime}", f"--module={module}",
                            f"--function={function}", f"--target={target}",
                            f"--device={device}",
                            f"--repetitions={timing.repetitions}",
                            f"--min-time={timing.min_time}", *map(str, inputs)])
    if outcome.error is not None:
        return outcome, Memory()
    report = json.loads(stdout)
    return Outcome(seconds=float(report["median_s"])), Memory(**report["memory"])


def python_call(python: Path, runtime: str, module: Path, function: str,
                inputs: Sequence[Path], timing: Timing, target: str = "",
                device: str = "local-sync") -> Outcome:
    """`python_call_measured`'s time alone."""
    return python_call_measured(python, runtime, module, function, inputs, timing, target,
                                device)[0]


def benchmark_in_process(compute: Callable[..., object], arguments: Sequence[object],
                         timing: Timing) -> Outcome:
    """A library called in this process (numpy, torch), timed by the same loop."""
    measured = measure(lambda: compute(*arguments), parse_min_time(timing.min_time),
                       timing.repetitions)
    return Outcome(seconds=float(np.median([m.real_per_iteration for m in measured])))


def run_weir_once(module: Path, function: str, inputs: Sequence[Path], output: Path) -> Outcome:
    """One run with weir-run-module, its result saved to `output` to be checked against numpy:
    a fast wrong answer is no result."""
    outcome, _ = _run([*_weir_tool("run_module"), "--device=local-task", f"--module={module}",
                       f"--function={function}", *(f"--input=@{p}" for p in inputs),
                       f"--output=@{output}"])
    return outcome


def mismatch(actual: np.ndarray, expected: np.ndarray) -> str | None:
    """Why weir's result is not numpy's (beyond f32 rounding), or None when it matches."""
    if actual.shape != expected.shape:
        return f"weir's result has shape {actual.shape}, numpy's {expected.shape}"
    scale = float(np.max(np.abs(expected))) or 1.0
    error = float(np.max(np.abs(actual.astype(np.float64) - expected)))
    if not error <= 1e-3 * scale:
        return f"weir's result differs from numpy's by up to {error:.3g} (largest value {scale:.3g})"
    return None
