"""The benchmark suite end to end on its two quickest workloads (reference target, one short
repetition, no IREE): the table and the JSON have a row per workload with numbers in it. And
every program of the suite compiles with weir, so the suite never measures a broken program.
No timing is asserted: the numbers only have to exist and be positive."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import weir.api as weir
from benchmarks.__main__ import main
from benchmarks.suite.peers import Timing
from benchmarks.suite.torch_peer import benchmark_torch
from benchmarks.suite.workloads import PROGRAMS, WORKLOADS, Workload


def test_suite_writes_a_row_with_numbers_per_workload(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--target=reference", "--workloads=tiny,ew_mul_4k", "--repetitions=1",
                 "--min-time=2x", "--no-torch-compile", f"--out={tmp_path}"]) == 0
    printed = capsys.readouterr().out
    table = (tmp_path / "results.md").read_text()
    assert printed == table
    rows = {line.split(" | ")[0].strip("| "): line.split(" | ")
            for line in table.splitlines() if line.startswith("| ") and "---" not in line}
    assert set(rows) == {"workload", "ew_mul_4k", "tiny"}
    for name in ("ew_mul_4k", "tiny"):
        weir_cell, numpy_cell, iree_cell, eager_cell, inductor_cell = rows[name][1:6]
        assert weir_cell.endswith(("µs", "ms", " s")) and numpy_cell.endswith(("µs", "ms", " s"))
        assert eager_cell.endswith(("µs", "ms", " s"))
        assert iree_cell == "—" and inductor_cell == "—"

    document = json.loads((tmp_path / "results.json").read_text())
    assert document["limits"]["bandwidth_bytes_per_s"] > 0
    assert document["limits"]["peak_flops"] > 0
    by_name = {w["name"]: w for w in document["workloads"]}
    assert list(by_name) == ["ew_mul_4k", "tiny"]  # the suite's order, not the flag's
    for entry in by_name.values():
        assert entry["weir_error"] is None and entry["mismatch"] is None
        assert entry["weir_s"] > 0 and entry["numpy_s"] > 0 and entry["weir_compile_s"] > 0
        assert entry["iree_s"] is None and entry["speedup_vs_numpy"] > 0
        assert entry["torch_eager_s"] > 0 and entry["torch_inductor_s"] is None
        assert entry["best_peer"] in ("numpy", "eager") and entry["speedup_vs_best"] > 0
    assert by_name["ew_mul_4k"]["fraction_of_limit"] > 0
    assert by_name["tiny"]["limit_s"] is None  # pure call overhead has no hardware limit


def test_an_unknown_target_is_a_row_with_the_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--target=no-such-target", "--workloads=ew_mul_4k", "--repetitions=1",
                 "--min-time=1x", f"--out={tmp_path}"]) == 0
    (entry,) = json.loads((tmp_path / "results.json").read_text())["workloads"]
    assert "unknown target backend 'no-such-target'" in entry["weir_error"]
    assert entry["weir_s"] is None and entry["numpy_s"] > 0
    assert "| ew_mul_4k | failed |" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["--workloads=nope"], "unknown workload(s) nope"),
    (["--repetitions=0"], "--repetitions must be at least 1"),
    (["--min-time=soon"], "--benchmark_min_time=soon"),
    (["--iree-venv=/nonexistent"], "no bin/iree-benchmark-module there"),
])
def test_bad_options_are_one_line(argv: list[str], message: str,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("benchmarks: error: ") and message in err and err.count("\n") == 1


@pytest.mark.parametrize("workload", WORKLOADS, ids=lambda w: w.name)
def test_torch_computes_what_numpy_does(workload: Workload) -> None:
    """benchmark_torch checks torch's result against numpy's before it times anything."""
    arrays = workload.make_inputs()
    outcome = benchmark_torch(workload.name, arrays, workload.numpy(*arrays), Timing(1, "1x"),
                              compiled=False)
    assert outcome.error is None and outcome.seconds is not None and outcome.seconds > 0


def test_a_torch_result_unlike_numpys_is_no_time() -> None:
    (workload,) = [w for w in WORKLOADS if w.name == "tiny"]
    arrays = workload.make_inputs()
    outcome = benchmark_torch("tiny", arrays, workload.numpy(*arrays) + 1.0, Timing(1, "1x"),
                              compiled=False)
    assert outcome.seconds is None and outcome.error == "torch's result differs from numpy's"


def test_every_workload_has_a_program() -> None:
    assert sorted(p.stem for p in PROGRAMS.glob("*.mlir")) == sorted(w.name for w in WORKLOADS)


@pytest.mark.parametrize("workload", [w.name for w in WORKLOADS])
def test_program_compiles_to_flow(workload: str) -> None:
    source = (PROGRAMS / f"{workload}.mlir").read_text()
    flow = weir.compile_to_phase(source, f"{workload}.mlir", weir.CompilerOptions(), "flow")
    assert f"@{workload}" in flow and '"flow.dispatch"(' in flow
