"""Executables compiled in worker processes (--weir-hal-executable-jobs): the module is the
same byte for byte as one compiled in the compiling process, results come back in the jobs'
order, and a worker that dies is one clear error rather than a hang or a traceback."""

from __future__ import annotations

import os
import zlib

import pytest

import weir.api as weir
from weir.compiler.hal import translate_executables
from weir.compiler.jobs import PARALLEL_FROM, run_jobs, SharedJob
from weir.errors import CompileError, UsageError
from weir.format.module_file import deserialize
from weir.tools import compile as compile_tool

# Four dispatches that do not fuse (no producer feeds another): four llvm-cpu executables.
SRC = """
func.func @f(%a: tensor<64xf32>, %b: tensor<64xf32>, %c: tensor<8x8xf32>, %d: tensor<16xi32>)
    -> (tensor<64xf32>, tensor<64xf32>, tensor<8x8xf32>, tensor<16xi32>) {
  %0 = arith.mulf %a, %b : tensor<64xf32>
  %1 = math.exp %b : tensor<64xf32>
  %2 = arith.addf %c, %c : tensor<8x8xf32>
  %3 = arith.muli %d, %d : tensor<16xi32>
  return %0, %1, %2, %3 : tensor<64xf32>, tensor<64xf32>, tensor<8x8xf32>, tensor<16xi32>
}"""


def _compile(jobs: int) -> bytes:
    options = weir.CompilerOptions(target_backends=("llvm-cpu",), executable_jobs=jobs)
    return weir.compile_string(SRC, "jobs.mlir", options)


def test_a_module_compiled_by_workers_is_the_same_as_one_compiled_here(
        monkeypatch: pytest.MonkeyPatch) -> None:
    here = _compile(1)
    assert len(deserialize(here).executables) >= PARALLEL_FROM
    # The program is small: workers take it only without the threshold of IR text.
    monkeypatch.setattr(translate_executables, "PARALLEL_FROM_CHARS", 0)
    assert _compile(2) == here


def test_results_come_back_in_the_jobs_order() -> None:
    jobs = [(zlib.compress, (bytes([i]) * (1000 * (6 - i)),)) for i in range(6)]
    assert run_jobs(jobs, 2, "x.mlir") == [zlib.compress(bytes([i]) * (1000 * (6 - i)))
                                           for i in range(6)]


def _tagged(prefix: bytes, owns: list[bytes]) -> list[bytes]:
    """One result per job, each also saying how many jobs shared the call."""
    return [prefix + own + bytes([len(owns)]) for own in owns]


def test_jobs_that_share_their_work_run_it_once_and_each_gets_its_own_result() -> None:
    jobs = [SharedJob(_tagged, (b"a",), b"1"), (zlib.compress, (b"x",)),
            SharedJob(_tagged, (b"a",), b"2"), SharedJob(_tagged, (b"b",), b"3")]
    assert run_jobs(jobs, 1, "x.mlir") == [b"a1\x02", zlib.compress(b"x"), b"a2\x02", b"b3\x01"]


def test_a_worker_that_dies_is_one_clear_error() -> None:
    jobs = [(zlib.compress, (b"x",))] * (PARALLEL_FROM - 1) + [(os._exit, (3,))]
    with pytest.raises(CompileError, match=r"^x\.mlir:0:0: error: a worker process compiling "
                                           r"executables stopped .*--weir-hal-executable-jobs=1"):
        run_jobs(jobs, 2, "x.mlir")


def test_the_flag_sets_the_jobs_and_rejects_a_negative_count() -> None:
    flags = compile_tool.PARSER.parse(["--weir-hal-executable-jobs=3", "x.mlir"])
    assert compile_tool.options_from_flags(flags).executable_jobs == 3
    flags = compile_tool.PARSER.parse(["x.mlir"])
    assert compile_tool.options_from_flags(flags).executable_jobs == 0  # the tool's: one per CPU
    assert weir.CompilerOptions().executable_jobs == 1  # the API's: in process
    flags = compile_tool.PARSER.parse(["--weir-hal-executable-jobs=1", "x.mlir"])
    assert compile_tool.options_from_flags(flags).executable_jobs == 1
    flags = compile_tool.PARSER.parse(["--weir-hal-executable-jobs=-1", "x.mlir"])
    with pytest.raises(UsageError, match="--weir-hal-executable-jobs: expected a count >= 0, got -1"):
        compile_tool.options_from_flags(flags)


def test_jobs_on_little_text_run_in_this_process() -> None:
    """Below `parallel_from_chars` characters of text arguments (the IR to compile), the jobs
    run here: starting workers would cost more than they save."""
    pids: list[tuple[object, tuple[object, ...]]] = [(os.getpid, ())] * PARALLEL_FROM
    text = [(str.upper, ("x" * 1000,))]
    here = run_jobs(pids + text, 2, "x.mlir", parallel_from_chars=1001)  # type: ignore[arg-type]
    assert here == [os.getpid()] * PARALLEL_FROM + ["X" * 1000]
    there = run_jobs(pids + text, 2, "x.mlir", parallel_from_chars=1000)  # type: ignore[arg-type]
    assert os.getpid() not in there[:PARALLEL_FROM] and there[-1] == "X" * 1000
