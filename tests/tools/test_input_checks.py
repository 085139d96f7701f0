"""weir-run-module's `--input` values meet the function's declared argument types before anything
is copied (issue 17): a wrong-shape npy file, raw file or splat is refused with the program's own
message having read no more than a header, and a big-endian npy file is taken in the host's
order, as an input and as an expected output."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import numpy as np
import pytest

import weir.api as weir
from weir.tools.run_module import main

SOURCE = """
func.func @mul(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.mulf %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}"""
BIG = 1 << 24  # elements: 64 MiB of f32


@pytest.fixture(scope="module")
def module(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("m") / "mul.wvm"
    path.write_bytes(weir.compile_string(SOURCE, "mul.mlir"))
    return str(path)


def test_a_big_endian_npy_input_and_expected_output(module: str, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    np.save(tmp_path / "a.npy", np.arange(4, dtype=">f4"))
    np.save(tmp_path / "want.npy", np.asfortranarray(np.arange(4, dtype=">f4") * 2))
    argv = [f"--module={module}", f"--input=@{tmp_path}/a.npy", "--input=4xf32=2"]
    assert main(argv) == 0
    assert capsys.readouterr().out == "EXEC @mul\nresult[0]: hal.buffer_view\n4xf32=0 2 4 6\n"
    assert main([*argv, f"--expected_output=@{tmp_path}/want.npy"]) == 0
    assert "[SUCCESS]" in capsys.readouterr().out


def _peak_while_refused(argv: list[str], capsys) -> int:  # type: ignore[no-untyped-def]
    """The most memory Python allocated while the tool ran and refused the input."""
    tracemalloc.start()
    try:
        assert main(argv) == 1
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"expects 4xf32, got {BIG}xf32" in err, err
    return peak


def test_a_wrong_shape_npy_file_is_refused_before_it_is_read(module: str, tmp_path: Path,
                                                             capsys) -> None:  # type: ignore[no-untyped-def]
    np.save(tmp_path / "big.npy", np.ones(BIG, np.float32))
    peak = _peak_while_refused([f"--module={module}", f"--input=@{tmp_path}/big.npy",
                                "--input=4xf32=1"], capsys)
    assert peak < BIG * 4 // 16


def test_a_wrong_shape_raw_file_is_refused_before_it_is_read(module: str, tmp_path: Path,
                                                             capsys) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "big.bin").write_bytes(bytes(BIG * 4))
    peak = _peak_while_refused([f"--module={module}", f"--input={BIG}xf32=@{tmp_path}/big.bin",
                                "--input=4xf32=1"], capsys)
    assert peak < BIG * 4 // 16


def test_a_wrong_shape_splat_is_refused_before_it_is_filled(module: str, capsys) -> None:  # type: ignore[no-untyped-def]
    peak = _peak_while_refused([f"--module={module}", f"--input={BIG}xf32=1",
                                "--input=4xf32=1"], capsys)
    assert peak < BIG * 4 // 16
