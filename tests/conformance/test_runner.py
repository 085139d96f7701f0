"""The runner's verdicts: each way a file can end (pass, compile error, failed check, runtime
error, crash, hang) is told apart from the tools' real output, processes past their time or
memory limit are stopped, and `python -m conformance` on a small suite prints the per-folder
counts, writes its reports and fails only for a listed file that failed."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conformance.__main__ import main
from conformance.execute import (
    Finished,
    Limits,
    Outcome,
    Result,
    classify_check,
    classify_compile,
    run_process,
)
from conformance.must_pass import check_required
from conformance.plan import TARGET_BY_NAME, plan_job
from conformance.report import reason_key


def test_a_hang_is_stopped_at_the_time_limit(tmp_path: Path) -> None:
    done = run_process(["sleep", "60"], Limits(timeout_s=0.2), tmp_path)
    assert done.returncode is None
    assert classify_check(done, 0.2).reason == "run timed out after 0.2 s"
    assert classify_compile(done, 0.2).status == "timeout"  # type: ignore[union-attr]


def test_a_signal_is_a_crash(tmp_path: Path) -> None:
    done = run_process([sys.executable, "-c", "import os, signal; "
                        "os.kill(os.getpid(), signal.SIGSEGV)"], Limits(), tmp_path)
    outcome = classify_check(done, 1)
    assert (outcome.status, outcome.reason) == ("crash", "run killed by SIGSEGV")


def test_the_address_space_is_limited(tmp_path: Path) -> None:
    done = run_process([sys.executable, "-c", "bytearray(3 << 30)"],
                       Limits(memory_bytes=1 << 30), tmp_path)
    outcome = classify_compile(done, 1)
    assert outcome is not None and outcome.status == "crash"
    assert outcome.reason == "compile traceback: MemoryError"


@pytest.mark.parametrize("rc, stderr, status, reason, located", [
    (1, "/s/f/a.mlir:3:8: error: Operation x.y is not registered\n", "compile-error",
     "f/a.mlir:3:8: error: Operation x.y is not registered", True),
    (1, "weir-compile: error: no target\n", "compile-error", "weir-compile: error: no target",
     False),
    (1, "weir-compile: error: internal error (KeyError: 'x'); this is a bug in weir\n", "crash",
     "compile: weir-compile: error: internal error (KeyError: 'x'); this is a bug in weir",
     True),
    (3, "boom\n", "crash", "compile exited with code 3: boom", True),
])
def test_compile_outcomes(rc: int, stderr: str, status: str, reason: str,
                          located: bool) -> None:
    outcome = classify_compile(Finished(rc, "", stderr), 1, "/s")
    assert outcome is not None
    assert (outcome.status, outcome.reason, outcome.located) == (status, reason, located)


CHECK_OUT = """[ RUN      ] ok
[       OK ] ok
[ RUN      ] bad
check.expect_eq failed: 1 of 2 elements differ (2xi32)
  first mismatches: [1] lhs=4 rhs=5
[  FAILED  ] bad
[ RUN      ] broken
error: dispatch failed
[  FAILED  ] broken
1 passed, 2 failed
"""


def test_check_outcomes() -> None:
    assert classify_check(Finished(0, "1 passed, 0 failed\n", ""), 1).passed
    failed = classify_check(Finished(1, CHECK_OUT, ""), 1)
    assert (failed.status, failed.reason) == (
        "check-failure", "bad (2 of 3 tests failed): check.expect_eq failed: 1 of 2 elements "
                         "differ (2xi32)")
    errored = classify_check(Finished(1, CHECK_OUT.replace("[  FAILED  ] bad\n", ""), ""), 1)
    assert errored.status == "run-error" and errored.reason.endswith("error: dispatch failed")
    load = classify_check(Finished(1, "", "weir-check-module: error: no test functions\n"), 1)
    assert (load.status, load.reason) == ("run-error",
                                          "weir-check-module: error: no test functions")


PASS = """func.func @adds() {
  %a = arith.constant dense<[1, 2]> : tensor<2xi32>
  %b = arith.addi %a, %a : tensor<2xi32>
  check.expect_eq_const(%b, dense<[2, 4]> : tensor<2xi32>) : tensor<2xi32>
  return
}
"""
FAILS = PASS.replace("[2, 4]", "[2, 5]")
BROKEN = "func.func @f() {\n  %a = arith.bogus 1 : i32\n  return\n}\n"
BUILD = """iree_check_single_backend_test_suite(
    name = "cpu",
    srcs = ["pass.mlir", "fails.mlir", "broken.mlir"],
    compiler_flags = ["--iree-llvmcpu-target-cpu=generic", "--iree-not-a-weir-flag"],
    driver = "local-task",
    target_backend = "llvm-cpu",
)
"""


def test_the_command_line_on_a_small_suite(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "suite" / "t"
    folder.mkdir(parents=True)
    for name, text in {"pass": PASS, "fails": FAILS, "broken": BROKEN}.items():
        (folder / f"{name}.mlir").write_text(text)
    (folder / "BUILD.bazel").write_text(BUILD)
    listed = tmp_path / "passing.txt"
    listed.write_text("# must pass\nt/pass.mlir llvm-cpu\nt/fails.mlir llvm-cpu\n"
                      "t/fails.mlir vmvx  # not run: vmvx is not among --targets\n")
    out = tmp_path / "out"
    rc = main(["--suite", str(tmp_path / "suite"), "--targets", "llvm-cpu", "--out", str(out),
               "--jobs", "3", "--require-list", str(listed)])
    captured = capsys.readouterr()
    assert rc == 1
    lines = captured.out.splitlines()
    assert lines[0] == "t llvm-cpu/local-task: 1 passed, 2 failed (of IREE's 3: 1 passed)"
    assert lines[1] == ("  t/broken.mlir: compile-error: t/broken.mlir:2:8: error: Operation "
                        "arith.bogus is not registered [dropped: --iree-not-a-weir-flag]")
    assert lines[2].startswith("  t/fails.mlir: check-failure: adds (1 of 1 tests failed): "
                               "check.expect_eq failed")
    assert "REGRESSION t/fails.mlir llvm-cpu: check-failure: adds" in captured.err
    assert "must-pass list: 1 of 2 passed" in captured.err
    document = json.loads((out / "results.json").read_text())
    statuses = {r["file"]: r["status"] for r in document["results"]}
    assert statuses == {"t/broken.mlir": "compile-error", "t/fails.mlir": "check-failure",
                        "t/pass.mlir": "pass"}
    assert document["results"][0]["compile_flags"] == [
        "--iree-hal-target-backends=llvm-cpu", "--iree-llvmcpu-target-cpu=generic"]
    assert "| `t` | 3 | 1/3 | 1/3 |" in (out / "results.md").read_text()


def test_the_list_judges_only_what_ran(tmp_path: Path) -> None:
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "a.mlir").write_text("")
    job = plan_job(tmp_path / "t" / "a.mlir", tmp_path, TARGET_BY_NAME["vmvx"], None)
    passed = [Result(job, Outcome("pass"), 1.0)]
    logged: list[str] = []
    assert check_required(passed, [("t/a.mlir", "vmvx"), ("u/b.mlir", "vmvx")], tmp_path,
                          ("t",), {"vmvx"}, logged.append) == 0
    assert logged == ["must-pass list: 1 of 1 passed"]
    # Without a folder filter the listed file that is gone from the suite is a regression.
    assert check_required(passed, [("u/b.mlir", "vmvx")], tmp_path, None, {"vmvx"},
                          logged.append) == 1
    assert logged[1].startswith("REGRESSION u/b.mlir vmvx: listed as passing but not in")


def test_reasons_group_across_files() -> None:
    job = plan_job(Path("/s/t/a.mlir"), Path("/s"), TARGET_BY_NAME["vmvx"], None)
    keys = {reason_key(Result(job, Outcome("compile-error", f"t/{n}.mlir:{n}:8: error: Operation "
                                           "util.optimization_barrier is not registered"), 1))
            for n in (1, 2)}
    assert keys == {"compile-error: Operation util.optimization_barrier is not registered"}
    parser = {reason_key(Result(job, Outcome("compile-error", f"t/a.mlir:3:1: error: Expected "
                                             f"'->', got '{got}'"), 1))
              for got in ("check.expect_eq_const", "%input_opt_barrier")}
    assert parser == {"compile-error: Expected '->', got '…'"}
    check = {reason_key(Result(job, Outcome("check-failure", f"t{n} (1 of {n} tests failed): "
                                            f"check.expect_eq failed: {n} of {n}0 elements "
                                            f"differ ({n}x4xi32)"), 1)) for n in (2, 3)}
    assert check == {"check-failure: check.expect_eq failed: N of N elements differ (NxNxi32)"}
