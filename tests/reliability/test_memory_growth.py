"""Memory: resident memory after 10,000 invocations stays within 10% of what it was after
1,000 (after a warm-up), on local-task, for the synchronous ABI, for async-external calls with
the caller's own fences, and for a 1 MiB multiply whose arguments are lent to the call and
whose output is handed over (none of them goes through the buffer pool: a fresh output on
every call must not grow the process either). Each run is a fresh worker process
(memory_growth_worker.py), so the figures are that program's alone. The runtime's own counts
agree: at both points no buffer is alive, nothing is pending, the device runs the same threads;
once the context is closed the process holds nothing.

`make test` compares 1,000 with 3,000 invocations (300 with 900 for the 1 MiB multiply);
`make stress` 1,000 with 10,000 for every case. Measured (llvm-cpu, the 2-core development
machine), after 1,000 and after 10,000 invocations: 87.55 and 87.55 MiB (sync), 87.57 and
87.57 MiB (own fences), 93.27 and 93.27 MiB (1 MiB, when it was pooled): under 0.02% growth
each."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from load_programs import compiled

WORKER = Path(__file__).resolve().parent / "memory_growth_worker.py"
ALLOWED_GROWTH = 0.10
WARMUP = 200
WORKER_S = 600.0  # bound on one worker run (a hang fails the test)
# Finished operations a local-task device's deadline monitor keeps until its heap compacts (at
# twice max(64, still waiting)); each holds its signal fence's semaphore meanwhile. Bounded,
# and released when the device shuts down: more than this while the context is open is a leak.
MONITOR_RETAINED = 128

CASES = {
    # id: (execution model, function, own fences, make-test sizes)
    "sync-mul": ("async-internal", "mul", False, (1_000, 3_000)),
    "async-external-own-fences-mul": ("async-external", "mul", True, (1_000, 3_000)),
    "sync-1MiB-mul": ("async-internal", "big_mul", False, (300, 900)),
}


def run_worker(module: Path, function: str, own_fences: bool, first: int,
               second: int) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, str(WORKER), str(module), function, "1" if own_fences else "0",
         str(WARMUP), str(first), str(second)],
        capture_output=True, text=True, timeout=WORKER_S, check=False)
    assert done.returncode == 0, f"worker failed:\n{done.stderr}"
    return json.loads(done.stdout)  # type: ignore[no-any-return]


@pytest.mark.parametrize("case", CASES)
def test_resident_memory_does_not_grow(case: str, stress: bool, tmp_path: Path) -> None:
    model, function, own_fences, fast = CASES[case]
    first, second = (1_000, 10_000) if stress else fast
    module = tmp_path / "program.wvm"
    module.write_bytes(compiled("llvm-cpu", model))
    report = run_worker(module, function, own_fences, first, second)
    at_first, at_second = report["points"]
    assert (at_first["invocations"], at_second["invocations"]) == (first, second)
    growth = (at_second["rss"] - at_first["rss"]) / at_first["rss"]
    assert growth <= ALLOWED_GROWTH, (
        f"{case}: resident memory {at_first['rss'] / 2**20:.2f} MiB after {first} invocations, "
        f"{at_second['rss'] / 2**20:.2f} MiB after {second} (+{growth:.1%})")
    # The runtime's own counts: the same (and nothing alive, nothing pending) at both points.
    assert at_first["device"] == at_second["device"]
    assert at_second["device"]["buffers_alive"] == at_second["device"]["queue_pending"] == 0
    if function == "big_mul":  # arguments lent, the output the caller's: nothing pooled
        assert at_second["device"]["pooled_bytes"] == 0
    for point in (at_first, at_second):
        runtime = point["runtime"]
        assert (runtime["buffers_alive"], runtime["queue_pending"]) == (0, 0)
        assert runtime["semaphores_alive"] <= MONITOR_RETAINED
    closed = report["closed"]
    assert closed["threads"] == 0
    assert closed["runtime"] == {"devices_alive": 0, "queue_pending": 0, "semaphores_alive": 0,
                                 "buffers_alive": 0, "buffer_bytes_alive": 0, "pooled_bytes": 0,
                                 "threads_alive": 0}
