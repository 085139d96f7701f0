"""The compile-time benchmark end to end at small sizes (reference target, no IREE): a row per
program with a figure per compiler, the generated programs checked against numpy by running
them, and bad flags refused before anything is compiled. No timing is asserted."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import weir.api as weir
from benchmarks.compile_time import SHAPES, main


def test_a_row_per_program_with_seconds_per_thousand_ops(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--sizes=12,30", "--shapes=chain,dispatches", "--targets=reference",
                 f"--out={tmp_path}"]) == 0
    table = (tmp_path / "compile_time.md").read_text()
    assert capsys.readouterr().out == table
    rows = [line.split(" | ") for line in table.splitlines()
            if line.startswith("| ") and "---" not in line]
    assert rows[0][:3] == ["| program", "ops", "weir reference s/1k ops"]
    assert [(r[0].strip("| "), r[1]) for r in rows[1:]] == [
        ("chain", "12"), ("chain", "30"), ("dispatches", "12"), ("dispatches", "30")]
    for row in rows[1:]:
        assert float(row[2]) > 0 and row[3].strip(" |") == ""  # a figure, and no note

    document = json.loads((tmp_path / "compile_time.json").read_text())
    assert document["iree_version"] is None
    for entry in document["rows"]:
        assert entry["compiler"] == "weir reference" and entry["mismatch"] is None
        assert entry["compile"]["error"] is None and entry["seconds_per_1000_ops"] > 0


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_each_program_computes_what_numpy_computes(shape: str) -> None:
    """What the benchmark checks weir against must itself be right: a generated program, run,
    gives the result its generator computed with numpy."""
    program = SHAPES[shape](9)
    module = weir.compile_string(program.text, f"{shape}.mlir")
    with weir.load([module]) as context:
        actual = context.lookup_function("main")(*program.inputs)
    np.testing.assert_allclose(actual, program.expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("argv, message", [
    (["--sizes=0"], "--sizes: expected op counts of at least 1"),
    (["--sizes=many"], "--sizes: expected comma-separated op counts"),
    (["--shapes=spiral"], "--shapes: unknown spiral"),
    (["--targets=cuda"], "--targets: unknown cuda"),
    (["--iree-venv=/nonexistent"], "no bin/iree-compile there"),
])
def test_bad_flags_are_one_line_errors(argv: list[str], message: str,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 1
    assert message in capsys.readouterr().err
