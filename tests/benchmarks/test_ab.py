"""benchmarks/ab.py: two builds of one program timed against each other in one process. It
reports both builds and the median ratio of the pairs, refuses builds whose results differ, and
names a missing input or a bad --pairs in one line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import weir.api as weir
from benchmarks import ab

ADD = """func.func @main(%a: tensor<8xf32>) -> tensor<8xf32> {
  %c = arith.constant dense<%s> : tensor<8xf32>
  %0 = arith.addf %a, %c : tensor<8xf32>
  return %0 : tensor<8xf32>
}"""


def _build(tmp_path: Path, name: str, constant: str) -> str:
    path = tmp_path / f"{name}.wvm"
    path.write_bytes(weir.compile_string(ADD.replace("%s", constant), f"{name}.mlir",
                                         weir.CompilerOptions(target_backends=("llvm-cpu",))))
    return str(path)


def test_two_builds_are_paired(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = _build(tmp_path, "a", "1.0"), _build(tmp_path, "b", "1.0")
    x = tmp_path / "x.npy"
    np.save(x, np.arange(8, dtype=np.float32))
    assert ab.main([a, b, "--inputs", str(x), "--pairs", "6", "--device", "local-sync"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("A: median") and out[1].startswith("B: median")
    assert out[2].startswith("B/A: median of 6 pairs")


def test_pairs_alternate_their_order() -> None:
    calls: list[str] = []
    ta, tb = ab.paired_ratios(lambda: calls.append("a"), lambda: calls.append("b"), 4)
    assert calls == ["a", "b", "b", "a", "a", "b", "b", "a"] and len(ta) == len(tb) == 4


def test_builds_that_disagree_are_refused(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    a, b = _build(tmp_path, "a", "1.0"), _build(tmp_path, "b", "2.0")
    x = tmp_path / "x.npy"
    np.save(x, np.zeros(8, dtype=np.float32))
    assert ab.main([a, b, "--inputs", str(x), "--pairs", "2"]) == 1
    assert capsys.readouterr().err.strip() == f"error: result 0 differs between {a} and {b}"


def test_bad_arguments_are_one_line(tmp_path: Path) -> None:
    a = _build(tmp_path, "a", "1.0")
    with pytest.raises(SystemExit, match=r"--inputs: no file .*missing.npy"):
        ab.main([a, a, "--inputs", str(tmp_path / "missing.npy")])
    with pytest.raises(SystemExit):
        ab.main([a, a, "--pairs", "0"])
