"""weir-benchmark-module on a small compiled module, in-process: the JSON report's structure
(a row per repetition, then mean/median/stddev/cv), fixed iteration counts (`Nx`), which
functions are benchmarked without --function, and one-line errors. Timings are never asserted:
only counts, names and fields."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import weir.api as weir
from weir.errors import UsageError
from weir.tools.benchmark_module import main
from weir.tools.io.benchmark_timing import Measurement, MinTime, next_iteration_count, parse_min_time

PROGRAM = """
func.func @square(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.mulf %a, %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @ones() -> tensor<4xf32> {
  %0 = arith.constant dense<1.0> : tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @twos() -> tensor<4xf32> {
  %0 = arith.constant dense<2.0> : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""
ITERATION_FIELDS = ["name", "family_index", "per_family_instance_index", "run_name", "run_type",
                    "repetitions", "repetition_index", "threads", "iterations", "real_time",
                    "cpu_time", "time_unit", "items_per_second"]
AGGREGATE_FIELDS = ["name", "family_index", "per_family_instance_index", "run_name", "run_type",
                    "repetitions", "threads", "aggregate_name", "aggregate_unit", "iterations",
                    "real_time", "cpu_time", "time_unit", "items_per_second"]


def _compile(directory: Path, model: str) -> Path:
    path = directory / f"program_{model}.wvm"
    options = weir.CompilerOptions(execution_model=model)  # type: ignore[arg-type]
    path.write_bytes(weir.compile_string(PROGRAM, "program.mlir", options))
    return path


@pytest.fixture(scope="module")
def module(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _compile(tmp_path_factory.mktemp("bench"), "async-internal")


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:  # type: ignore[type-arg]
    assert main([*argv, "--benchmark_format=json"]) == 0
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


def test_repetitions_give_one_row_each_then_the_aggregates(
        module: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = run_json(capsys, f"--module={module}", "--function=square", "--input=4xf32=1,2,3,4",
                      "--benchmark_repetitions=3", "--benchmark_min_time=4x")
    assert {"date", "host_name", "num_cpus", "mhz_per_cpu", "caches", "library_build_type",
            "json_schema_version"} <= set(report["context"])
    rows = report["benchmarks"]
    name = "BM_square/process_time/real_time"
    assert [r["name"] for r in rows] == [name] * 3 + [f"{name}_{a}" for a in
                                                      ("mean", "median", "stddev", "cv")]
    iterations, aggregates = rows[:3], rows[3:]
    assert [list(r) for r in iterations] == [ITERATION_FIELDS] * 3
    assert [r["repetition_index"] for r in iterations] == [0, 1, 2]
    assert all(r["run_type"] == "iteration" and r["iterations"] == 4 for r in iterations)
    assert [list(r) for r in aggregates] == [AGGREGATE_FIELDS] * 4
    assert [r["aggregate_unit"] for r in aggregates] == ["time"] * 3 + ["percentage"]
    assert all(r["run_type"] == "aggregate" and r["iterations"] == 3 and r["run_name"] == name
               for r in aggregates)
    assert all(r["repetitions"] == 3 and r["family_index"] == 0 and r["time_unit"] == "ms" and
               r["real_time"] >= 0 and r["cpu_time"] >= 0 for r in rows)


def test_one_repetition_has_no_aggregates_and_the_unit_is_chosen(
        module: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = run_json(capsys, f"--module={module}", "--function=ones", "--benchmark_min_time=7x",
                      "--benchmark_time_unit=us")
    (row,) = report["benchmarks"]
    assert (row["iterations"], row["time_unit"], row["run_type"]) == (7, "us", "iteration")


def test_a_minimum_time_runs_until_it_is_reached(
        module: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (row,) = run_json(capsys, f"--module={module}", "--function=ones",
                      "--benchmark_min_time=0.01")["benchmarks"]
    # Not a timing check: the loop only stops once a run has lasted the 0.01 s (10 ms) asked.
    assert row["iterations"] * row["real_time"] >= 10.0 * (1 - 1e-9)


def test_async_functions_are_timed_through_their_fences(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    module = _compile(tmp_path, "async-external")
    report = run_json(capsys, f"--module={module}", "--device=local-task", "--function=square",
                      "--input=4xf32=3", "--benchmark_min_time=3x", "--benchmark_repetitions=2")
    assert [r["iterations"] for r in report["benchmarks"]] == [3, 3, 2, 2, 2, 2]


def test_a_big_endian_npy_input(module: Path, tmp_path: Path,
                                capsys: pytest.CaptureFixture[str]) -> None:
    """Inputs are read as they lie in the file; the tool puts them in the host's order."""
    np.save(tmp_path / "a.npy", np.arange(4, dtype=">f4"))
    (row,) = run_json(capsys, f"--module={module}", "--function=square",
                      f"--input=@{tmp_path}/a.npy", "--benchmark_min_time=1x")["benchmarks"]
    assert row["iterations"] == 1


def test_without_function_every_export_without_arguments_is_a_family(
        module: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = run_json(capsys, f"--module={module}", "--benchmark_min_time=2x")["benchmarks"]
    assert [(r["name"], r["family_index"]) for r in rows] == [
        ("BM_ones/process_time/real_time", 0), ("BM_twos/process_time/real_time", 1)]


def test_console_table_and_out_file(module: Path, tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "report.json"
    assert main([f"--module={module}", "--function=ones", "--benchmark_min_time=2x",
                 "--benchmark_repetitions=2", f"--benchmark_out={out}"]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert lines[0] == "-" * len(lines[1]) == lines[2]
    assert lines[1].split() == ["Benchmark", "Time", "CPU", "Iterations", "UserCounters..."]
    assert [line.split()[0] for line in lines[3:]] == [
        "BM_ones/process_time/real_time"] * 2 + [
        f"BM_ones/process_time/real_time_{a}" for a in ("mean", "median", "stddev", "cv")]
    assert lines[3].split()[2] == "ms" and lines[3].split()[5] == "2"
    assert "Run on (" in captured.err
    assert len(json.loads(out.read_text())["benchmarks"]) == 6
    assert main([f"--module={module}", "--function=ones", "--benchmark_min_time=2x",
                 f"--benchmark_out={out}", "--benchmark_out_format=console"]) == 0
    assert out.read_text().splitlines()[3].startswith("BM_ones/process_time/real_time ")


@pytest.mark.parametrize("argv, message", [
    (["--function=square"], "function 'square' takes 1 argument(s), got 0 --input value(s)"),
    (["--function=square", "--input=3xf32=1"], "argument 0 (%input0) expects 4xf32, got 3xf32"),
    (["--function=nope"], "has no function 'nope'"),
    (["--input=4xf32=1"], "--input needs --function"),
    (["--function=ones", "--benchmark_min_time=later"], "--benchmark_min_time=later: expected"),
    (["--function=ones", "--benchmark_repetitions=0"], "must be at least 1, got 0"),
    (["--function=ones", "--benchmark_format=csv"], "--benchmark_format: 'csv' is not one of"),
    (["--function=ones", "--benchmark_time_unit=h"], "--benchmark_time_unit: 'h' is not one of"),
    (["--function=ones", "--benchmark_min_tim=1x"], "unknown flag '--benchmark_min_tim'"),
])
def test_errors_are_one_line_and_exit_1(module: Path, capsys: pytest.CaptureFixture[str],
                                        argv: list[str], message: str) -> None:
    assert main([f"--module={module}", "--benchmark_min_time=2x", *argv]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.err
    assert captured.err.startswith("weir-benchmark-module: error: ") and message in captured.err


def test_a_module_whose_functions_all_take_arguments_needs_function(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "square.wvm"
    path.write_bytes(weir.compile_string(PROGRAM.split("func.func @ones")[0], "square.mlir"))
    assert main([f"--module={path}"]) == 1
    assert "--function is required: every function of module" in capsys.readouterr().err


@pytest.mark.parametrize("text, expected", [
    ("0.3s", MinTime(seconds=0.3)), ("2", MinTime(seconds=2.0)), ("10x", MinTime(iterations=10)),
])
def test_min_time_spellings(text: str, expected: MinTime) -> None:
    assert parse_min_time(text) == expected


@pytest.mark.parametrize("text", ["", "x", "0x", "-1s", "1.5x", "2m"])
def test_bad_min_times(text: str) -> None:
    with pytest.raises(UsageError, match="--benchmark_min_time"):
        parse_min_time(text)


def test_iteration_growth_follows_google_benchmark() -> None:
    # A run too short to extrapolate from grows tenfold; a longer one aims 40% past the minimum.
    assert next_iteration_count(Measurement(1, 1e-6, 1e-6), 0.5) == 10
    assert next_iteration_count(Measurement(100, 0.1, 0.1), 0.5) == 700
