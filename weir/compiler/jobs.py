"""Compilation work that may run in other processes: each job is a picklable (function,
arguments) pair whose function lives in a module light enough for a worker to import (no xDSL,
no passes). Results come back in the jobs' order, so the output does not depend on how many
processes ran them or which finished first. Jobs that share their expensive part (`SharedJob`)
run it once, as one unit of work."""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any, Callable

from weir.errors import CompileError

Job = tuple[Callable[..., bytes], tuple[Any, ...]]


@dataclass(frozen=True)
class SharedJob:
    """A job whose expensive part depends on `shared` alone: the jobs of a run with the same
    `function` and equal `shared` are one unit of work, `function(*shared, [own, ...])`, which
    returns one result per `own`, in order (llvm-cpu: executables whose kernels are the same
    get one compile of their IR)."""

    function: Callable[..., list[bytes]]
    shared: tuple[Any, ...]
    own: Any


# A unit of work: a function returning the results of one or more jobs, and its arguments.
_Unit = tuple[Callable[..., list[bytes]], tuple[Any, ...]]

# Fewer units of work than this run in this process: starting workers (a fork server, then an import
# of llvmlite in each) costs more than a few small executables take to compile.
PARALLEL_FROM = 4


def available_cpus() -> int:
    return len(os.sched_getaffinity(0))


def run_jobs(jobs: Sequence[Job | SharedJob], workers: int, filename: str,
             preload: tuple[str, ...] = (), parallel_from_chars: int = 0) -> list[bytes]:
    """Each job's result, in order: here when `workers` is 1, when there are few jobs or when
    the text they take (the IR they compile, counted in characters of their str arguments) is
    below `parallel_from_chars`; otherwise in up to `workers` processes (0: one per available
    CPU), forked from a fork server that has imported the modules in `preload`. A worker that
    dies or cannot start is one clear error naming `filename`."""
    units, owners = _units(jobs)
    if _text_size(units) < parallel_from_chars:
        workers = 1
    results: list[bytes] = [b""] * len(jobs)
    for unit_owners, unit_results in zip(owners, _run_units(units, workers, filename, preload),
                                         strict=True):
        for i, result in zip(unit_owners, unit_results, strict=True):
            results[i] = result
    return results


def _units(jobs: Sequence[Job | SharedJob]) -> tuple[list[_Unit], list[list[int]]]:
    """The units of work, in the order of their first jobs, and the jobs each gives results
    for."""
    units: list[_Unit] = []
    owners: list[list[int]] = []
    unit_of: dict[tuple[Any, ...], int] = {}  # (function, shared) -> its unit
    for i, job in enumerate(jobs):
        if not isinstance(job, SharedJob):
            units.append((_single, job))
            owners.append([i])
            continue
        key = (job.function, job.shared)
        if key not in unit_of:
            unit_of[key] = len(units)
            units.append((job.function, (*job.shared, [])))
            owners.append([])
        units[unit_of[key]][1][-1].append(job.own)
        owners[unit_of[key]].append(i)
    return units, owners


def _text_size(units: list[_Unit]) -> int:
    """Characters of the str arguments of the units' functions (and of the jobs they run)."""
    def size(value: Any) -> int:
        if isinstance(value, str):
            return len(value)
        if isinstance(value, (tuple, list)):
            return sum(size(v) for v in value)
        return 0
    return sum(size(args) for _, args in units)


def _single(function: Callable[..., bytes], args: tuple[Any, ...]) -> list[bytes]:
    return [function(*args)]


def _run_units(units: list[_Unit], workers: int, filename: str,
               preload: tuple[str, ...]) -> list[list[bytes]]:
    workers = workers or available_cpus()
    if workers <= 1 or len(units) < PARALLEL_FROM:
        return [function(*args) for function, args in units]
    # A fork server rather than fork: the compiling process may have threads (a runtime in the
    # same process), which fork would copy in whatever state their locks are.
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(list(preload))
    try:
        with ProcessPoolExecutor(min(workers, len(units)), mp_context=context) as pool:
            return list(pool.map(_run, units))
    except (BrokenProcessPool, OSError) as e:
        # A worker killed (out of memory), or workers that could not be started (the fork
        # server's socket, process limits): the system's doing, not the program's.
        raise CompileError(f"a worker process compiling executables stopped ({e}); "
                           "--weir-hal-executable-jobs=1 compiles them in this process",
                           filename) from None


def _run(unit: _Unit) -> list[bytes]:
    function, args = unit
    return function(*args)
