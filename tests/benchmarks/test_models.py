"""The model benchmark end to end on the zoo's MLP at its test size (one short repetition, no
IREE, one more paired round of weir local-task and onnxruntime): the table and the JSON have its
row with op and dispatch counts, a difference from eager within the registry's tolerance and a
time for every peer that ran. No timing is asserted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch")  # the `torch` extra; `make test` installs it
from benchmarks.models.__main__ import main  # noqa: E402


def test_model_benchmark_writes_a_row_with_numbers(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--size=test", "--models=mlp", "--repetitions=1", "--min-time=2x",
                 "--peak-gflops=100", "--paired-rounds=1", f"--out={tmp_path}"]) == 0
    table = (tmp_path / "models.md").read_text()
    captured = capsys.readouterr()
    assert captured.out == table
    assert "mlp: 1 more round of weir local-task and onnxruntime" in captured.err
    row = next(line for line in table.splitlines() if line.startswith("| mlp |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1] == "13" and int(cells[2]) >= 1  # 3 linear layers, 2 relus; dispatches
    assert float(cells[3]) <= 1e-5
    for time_cell in cells[4:8] + cells[10:11]:  # weir sync and task, eager, inductor, ort
        assert time_cell.endswith(("ms", " s")), row
    assert cells[8:10] == ["-"] * 2  # no IREE environment given
    model = json.loads((tmp_path / "models.json").read_text())["models"][0]
    assert model["model"] == "mlp" and model["weir_local_task"]["seconds"] > 0
    assert model["onnxruntime"]["seconds"] > 0
    # 3 linear layers: 2 x (4x16x32 + 4x32x32 + 4x32x8) multiply-adds.
    assert model["flops"] == 2 * (4 * 16 * 32 + 4 * 32 * 32 + 4 * 32 * 8)
    weir_memory = model["memory"]["weir"]
    # Per call at least the input and the result (4x16 and 4x8 f32) go through the allocator.
    assert weir_memory["bytes_per_call"] >= 4 * (4 * 16 + 4 * 8)
    assert weir_memory["peak_bytes"] >= weir_memory["bytes_per_call"] > 0
    assert model["memory"]["onnxruntime"]["peak_rss_bytes"] > 0
    assert model["memory"]["torch_eager"]["peak_rss_bytes"] > 0


def test_unknown_model_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--models=mlp,alexnet"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--models: unknown alexnet; known: mlp," in err


def test_negative_paired_rounds_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--models=mlp", "--paired-rounds=-1"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--paired-rounds must be at least 0, got -1" in err


def test_onnx_row_goes_through_weir_import_onnx(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("onnx")  # the `onnx` extra
    assert main(["--size=test", "--models=mlp-onnx", "--repetitions=1", "--min-time=2x",
                 "--peak-gflops=100", f"--out={tmp_path}"]) == 0
    table = (tmp_path / "models.md").read_text()
    row = next(line for line in table.splitlines() if line.startswith("| mlp-onnx |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    # Gemm imports as matmul + bias add (torch-mlir's ONNX lowering), Relu as generics.
    assert int(cells[1]) > 0 and int(cells[2]) >= 1, row
    assert float(cells[3]) <= 1e-5
    for time_cell in cells[4:8]:
        assert time_cell.endswith(("ms", " s")), row
    assert "Notes:" not in table
