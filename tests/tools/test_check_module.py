"""weir-check-module end to end: test programs compiled with the check dialect, run through the
tool's `main`: every test reported, failed checks printed with their values, exit code 1 on any
failure, and one clear line for bad flags and bad modules."""

from __future__ import annotations

import io
import types
from pathlib import Path

import pytest

import weir.api as weir
from weir.tools.check_module import main

PASSING = """
func.func @adds() {
  %a = util.unfoldable_constant dense<[1, 2, 3]> : tensor<3xi32>
  %0 = arith.addi %a, %a : tensor<3xi32>
  check.expect_eq_const(%0, dense<[2, 4, 6]> : tensor<3xi32>) : tensor<3xi32>
  return
}

func.func @scales() {
  %a = util.unfoldable_constant dense<[0.5, 1.5]> : tensor<2xf32>
  %0 = arith.mulf %a, %a : tensor<2xf32>
  check.expect_almost_eq_const(%0, dense<[0.25, 2.25]> : tensor<2xf32>) : tensor<2xf32>
  return
}

func.func @not_a_test(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}
"""

# `wrong` has two failing checks and a passing one: both failures must be reported.
WRONG = """
func.func @right() {
  %one = util.unfoldable_constant 1 : i32
  check.expect_true(%one) : i32
  return
}

func.func @wrong() {
  %a = util.unfoldable_constant dense<[1, 2, 3, 4]> : tensor<4xi32>
  %0 = arith.muli %a, %a : tensor<4xi32>
  check.expect_eq_const(%0, dense<[1, 4, 10, 16]> : tensor<4xi32>) : tensor<4xi32>
  %f = util.unfoldable_constant dense<[1.0, 2.0]> : tensor<2xf32>
  %g = arith.addf %f, %f : tensor<2xf32>
  check.expect_almost_eq_const(%g, dense<[2.0, 4.5]> : tensor<2xf32>, atol 0.1) : tensor<2xf32>
  check.expect_eq_const(%a, dense<[1, 2, 3, 4]> : tensor<4xi32>) : tensor<4xi32>
  return
}
"""


def _module(tmp_path: Path, source: str, name: str = "tests", **options: object) -> str:
    path = tmp_path / f"{name}.wvm"
    path.write_bytes(weir.compile_string(source, f"{name}.mlir",
                                         weir.CompilerOptions(**options)))  # type: ignore[arg-type]
    return str(path)


@pytest.mark.parametrize("device", ["local-sync", "local-task"])
def test_a_passing_module(tmp_path: Path, capsys: pytest.CaptureFixture[str], device: str) -> None:
    assert main([f"--module={_module(tmp_path, PASSING)}", f"--device={device}"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "[ RUN      ] adds", "[       OK ] adds",
        "[ RUN      ] scales", "[       OK ] scales",
        "2 passed, 0 failed",
    ]


def test_a_wrong_module_fails_with_every_failure_and_its_values(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--module", _module(tmp_path, WRONG), "--device=local-task"]) == 1
    out = capsys.readouterr().out
    assert out.splitlines() == [
        "[ RUN      ] right", "[       OK ] right",
        "[ RUN      ] wrong",
        "check.expect_eq failed: 1 of 4 elements differ (4xi32)",
        "  first mismatches: [2] lhs=9 rhs=10",
        "  max abs diff: 1 at [2]",
        "  lhs: 4xi32=1 4 9 16",
        "  rhs: 4xi32=1 4 10 16",
        "check.expect_almost_eq failed: 1 of 2 elements differ by more than atol 0.1 + rtol 0 * "
        "|rhs| (2xf32)",
        "  first mismatches: [1] lhs=4 rhs=4.5",
        "  max abs diff: 0.5 at [1]",
        "  lhs: 2xf32=2 4",
        "  rhs: 2xf32=2 4.5",
        "[  FAILED  ] wrong",
        "1 passed, 1 failed",
    ]


def test_async_external_tests_and_modules_it_imports(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Repeated --module: the tests call into a module loaded before them; coarse-fences tests
    (wait and signal fences only) are tests too."""
    helper = _module(tmp_path, """
        func.func @twice(%x: tensor<3xi32>) -> tensor<3xi32> {
          %0 = arith.addi %x, %x : tensor<3xi32>
          return %0 : tensor<3xi32>
        }""", name="helper", execution_model="async-external")
    tests = _module(tmp_path, """
        func.func private @helper.twice(tensor<3xi32>) -> tensor<3xi32> attributes {
          iree.abi.model = "coarse-fences"}
        func.func @calls_helper() {
          %a = util.unfoldable_constant dense<[1, -2, 3]> : tensor<3xi32>
          %0 = call @helper.twice(%a) : (tensor<3xi32>) -> tensor<3xi32>
          check.expect_eq_const(%0, dense<[2, -4, 6]> : tensor<3xi32>) : tensor<3xi32>
          return
        }""", execution_model="async-external")
    assert main([f"--module={helper}", f"--module={tests}", "--device=local-task"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "1 passed, 0 failed"


def test_module_from_stdin(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                           monkeypatch: pytest.MonkeyPatch) -> None:
    data = Path(_module(tmp_path, WRONG)).read_bytes()
    monkeypatch.setattr("sys.stdin", types.SimpleNamespace(buffer=io.BytesIO(data)))
    assert main(["--module=-", "--device=local-sync"]) == 1
    assert capsys.readouterr().out.splitlines()[-1] == "1 passed, 1 failed"


def test_a_module_without_tests_is_an_error(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    module = _module(tmp_path, """
        func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
          return %x : tensor<2xf32>
        }""")
    assert main([f"--module={module}"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == ("weir-check-module: error: module 'tests' has no test functions "
                            "(exported functions that take no arguments and return nothing); "
                            "it exports: f\n")


@pytest.mark.parametrize("argv, message", [
    ([], "no module given; use --module=tests.wvm (or --module=- for stdin)"),
    (["--module=-", "--module=-"], "--module=- (stdin) can be given only once"),
    (["tests.wvm"], "unexpected argument 'tests.wvm'; give modules as --module=tests.wvm"),
    (["--module=x.wvm", "--function=f"], "unknown flag"),
    (["--module=/nonexistent/x.wvm"], "cannot read module file"),
    (["--module=x.wvm", "--device=nope"], "nope"),
])
def test_bad_flags_and_modules_are_one_line(argv: list[str], message: str,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("weir-check-module: error: ") and message in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_a_corrupted_module_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = Path(_module(tmp_path, PASSING))
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    path.write_bytes(bytes(data))
    assert main([f"--module={path}"]) == 1
    err = capsys.readouterr().err
    assert "checksum mismatch" in err and err.count("\n") == 1


def test_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    assert "--module" in capsys.readouterr().out


BOOM = '''
from weir.runtime.api import NativeModule, export


class Boom(NativeModule):
    module_name = "boom"

    @export("0_")
    def explode(self, state):
        raise ValueError("the fuse was lit")
'''


def test_an_error_in_a_test_fails_it_and_the_next_test_runs(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "boom.py").write_text(BOOM)
    tests = _module(tmp_path, """
        func.func private @boom.explode()
        func.func @explodes() {
          call @boom.explode() : () -> ()
          return
        }
        func.func @after() {
          %one = util.unfoldable_constant 1 : i32
          check.expect_true(%one) : i32
          return
        }""")
    assert main([f"--module=python:{tmp_path / 'boom.py'}:Boom", f"--module={tests}"]) == 1
    assert capsys.readouterr().out.splitlines() == [
        "[ RUN      ] explodes",
        "error: boom.explode: ValueError: the fuse was lit",
        "[  FAILED  ] explodes",
        "[ RUN      ] after", "[       OK ] after",
        "1 passed, 1 failed",
    ]
