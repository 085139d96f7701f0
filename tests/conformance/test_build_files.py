"""The runner's reading of IREE's BUILD.bazel files: the real files of the suite give the file
counts IREE's build runs (51 on llvm-cpu in the six linalg-level folders), and the Starlark
subset it evaluates (concatenation, enforce_glob, comprehensions, both check rules) gives exact
suites, with anything else a located error rather than a wrong list."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.build_files import BuildFileError, read_build_file
from conformance.plan import TARGET_BY_NAME, plan, plan_job, read_folder_build, takes_flag
from weir.tools.compile import PARSER as COMPILE_PARSER

LINALG_LEVEL = ("linalg", "linalg_ext_ops", "math", "regression", "subbyte_types", "tensor_ops")
ALL_FOLDERS = LINALG_LEVEL + ("regression/stablehlo", "stablehlo_ops", "tosa_ops")


def _run_on(suite_dir: Path, folder: str, backend: str) -> set[str]:
    build = read_build_file(suite_dir / folder / "BUILD.bazel")
    present = {p.name for p in (suite_dir / folder).glob("*.mlir")}
    return build.files_run_on(backend) & present


def test_iree_runs_51_linalg_level_files_on_llvm_cpu(suite_dir: Path) -> None:
    # linalg's argmax.mlir and index.mlir are excluded from its main llvm-cpu suite but have
    # suites of their own: a reader of the main suite alone would count 49.
    counts = {f: len(_run_on(suite_dir, f, "llvm-cpu")) for f in LINALG_LEVEL}
    assert counts == {"linalg": 14, "linalg_ext_ops": 14, "math": 1, "regression": 15,
                      "subbyte_types": 1, "tensor_ops": 6}
    assert sum(counts.values()) == 51
    assert sum(len(list((suite_dir / f).glob("*.mlir"))) for f in LINALG_LEVEL) == 58
    assert {"argmax.mlir", "index.mlir"} <= _run_on(suite_dir, "linalg", "llvm-cpu")


def test_vmvx_counts_and_compile_only_suites(suite_dir: Path) -> None:
    counts = {f: len(_run_on(suite_dir, f, "vmvx")) for f in LINALG_LEVEL}
    assert counts == {"linalg": 14, "linalg_ext_ops": 13, "math": 0, "regression": 8,
                      "subbyte_types": 0, "tensor_ops": 6}
    # A check suite without a driver is only compiled by IREE: it does not count as run.
    regression = read_build_file(suite_dir / "regression" / "BUILD.bazel")
    compile_only = [s for s in regression.suites if s.kind == "check" and s.driver is None]
    assert [s.name for s in compile_only] == ["check_regression_compilation_only_vmvx_ukernels"]


def test_every_build_file_of_the_suite_is_understood(suite_dir: Path) -> None:
    for folder in ALL_FOLDERS:
        build, problem = read_folder_build(suite_dir / folder)
        assert problem is None and build is not None, problem
    assert len(_run_on(suite_dir, "stablehlo_ops", "llvm-cpu")) == 63
    assert len(_run_on(suite_dir, "tosa_ops", "vmvx")) == 40


def test_math_suites_come_from_a_comprehension(suite_dir: Path) -> None:
    build = read_build_file(suite_dir / "math" / "BUILD.bazel")
    by_name = {s.name: s for s in build.suites}
    assert set(by_name) == {"math_ops_llvm-cpu", "math_ops_rocm"}
    cpu = by_name["math_ops_llvm-cpu"]
    assert (cpu.srcs, cpu.backend, cpu.driver) == (("math_ops_llvm-cpu.mlir",), "llvm-cpu",
                                                   "local-task")
    assert cpu.compiler_flags == ("--iree-llvmcpu-target-cpu=generic",)
    assert by_name["math_ops_rocm"].compiler_flags == ()


def test_a_file_in_several_suites_uses_the_one_weir_takes_best(suite_dir: Path) -> None:
    jobs = {(j.name, j.target.backend): j for j in plan(suite_dir, folders=("linalg",))}
    conv = jobs[("linalg/conv2d.mlir", "llvm-cpu")]
    assert conv.iree_suite == "check_llvm-cpu_local-task"
    assert conv.compile_flags == ("--iree-hal-target-backends=llvm-cpu",
                                  "--iree-llvmcpu-target-cpu=generic")
    assert any("check_winograd_llvm-cpu_local-task" in n for n in conv.notes)
    large = jobs[("linalg/large_linalg_matmul.mlir", "llvm-cpu")]
    assert not large.iree_runs and large.iree_suite is None
    known = {f.key for f in COMPILE_PARSER.flags}
    for job in plan(suite_dir):
        assert not any(takes_flag(f, known) for f in job.dropped_flags), job


BUILD = '''
load("//build_tools/bazel:enforce_glob.bzl", "enforce_glob")
COMMON = ["a.mlir", "b.mlir"]
ALL = enforce_glob(COMMON + ["c.mlir"], include = ["*.mlir"], exclude = ["d.mlir"])
iree_check_single_backend_test_suite(
    name = "cpu",
    srcs = ALL,
    compiler_flags = ["--iree-llvmcpu-target-cpu=generic", "--iree-made-up-flag"],
    driver = "local-task",
    target_backend = "llvm-cpu",
)
iree_check_test_suite(
    name = "both",
    srcs = [":d.mlir"],
    target_backends_and_drivers = [("vmvx", "local-sync"), ("llvm-cpu", "local-task")],
    runner_args = ["--some_runner_flag=1"],
)
[iree_check_single_backend_test_suite(
    name = "gen_%s" % backend,
    srcs = ["//x:gen_%s.mlir" % backend],
    compiler_flags = ["--iree-llvmcpu-target-cpu=generic"] if backend == "llvm-cpu" else [],
    driver = driver,
    target_backend = backend,
) for backend, driver in [("llvm-cpu", "local-task"), ("rocm", "hip")] if backend != "none"]
iree_lit_test_suite(name = "lit", srcs = ["e.mlir"])
test_suite(name = "check", tests = [":cpu"])
'''


def test_the_starlark_subset(tmp_path: Path) -> None:
    (tmp_path / "BUILD.bazel").write_text(BUILD)
    build = read_build_file(tmp_path / "BUILD.bazel")
    got = [(s.name, s.kind, s.srcs, s.backend, s.driver, s.compiler_flags, s.runner_args)
           for s in build.suites]
    flags = ("--iree-llvmcpu-target-cpu=generic", "--iree-made-up-flag")
    assert got == [
        ("cpu", "check", ("a.mlir", "b.mlir", "c.mlir"), "llvm-cpu", "local-task", flags, ()),
        ("both_vmvx_local-sync", "check", ("d.mlir",), "vmvx", "local-sync", (),
         ("--some_runner_flag=1",)),
        ("both_llvm-cpu_local-task", "check", ("d.mlir",), "llvm-cpu", "local-task", (),
         ("--some_runner_flag=1",)),
        ("gen_llvm-cpu", "check", ("gen_llvm-cpu.mlir",), "llvm-cpu", "local-task",
         ("--iree-llvmcpu-target-cpu=generic",), ()),
        ("gen_rocm", "check", ("gen_rocm.mlir",), "rocm", "hip", (), ()),
        ("lit", "lit", ("e.mlir",), None, None, (), ()),
    ]
    for name in "abcd":
        (tmp_path / f"{name}.mlir").write_text("")
    job = plan_job(tmp_path / "a.mlir", tmp_path, TARGET_BY_NAME["llvm-cpu"], build)
    assert job.compile_flags == ("--iree-hal-target-backends=llvm-cpu",
                                 "--iree-llvmcpu-target-cpu=generic")
    assert job.dropped_flags == ("--iree-made-up-flag",) and job.iree_runs
    vmvx = plan_job(tmp_path / "d.mlir", tmp_path, TARGET_BY_NAME["vmvx"], build)
    assert vmvx.dropped_flags == ("--some_runner_flag=1",)
    none = plan_job(tmp_path / "a.mlir", tmp_path, TARGET_BY_NAME["vmvx"], build)
    assert not none.iree_runs and "does not compile it for vmvx" in none.notes[0]
    # Its expected values hold under the flags IREE runs it with on llvm-cpu: vmvx takes them.
    assert none.notes[1] == "with the flags of IREE's cpu" and none.iree_suite == "cpu"
    assert none.compile_flags == ("--iree-hal-target-backends=vmvx",
                                  "--iree-llvmcpu-target-cpu=generic")
    assert none.dropped_flags == ("--iree-made-up-flag",)


@pytest.mark.parametrize("source, message", [
    ("X = {'a': 1}\n", ":1: unsupported expression (Dict)"),
    ("\ndef f():\n    pass\n", ":2: unsupported statement (FunctionDef)"),
    ("X = Y + [1]\n", ":1: 'Y' is not defined"),
    ("X = ['a'] + 'b'\n", ":1: unsupported operation Add on list and str"),
    ("iree_check_single_backend_test_suite(name = 'x', srcs = 'a.mlir', target_backend = 'v')",
     ":1: iree_check_single_backend_test_suite: 'srcs' must be a list of strings"),
    ("X = [\n", ": not Starlark"),
])
def test_anything_else_is_a_located_error(tmp_path: Path, source: str, message: str) -> None:
    (tmp_path / "BUILD.bazel").write_text(source)
    with pytest.raises(BuildFileError) as error:
        read_build_file(tmp_path / "BUILD.bazel")
    assert str(error.value).startswith(str(tmp_path / "BUILD.bazel"))
    assert message in str(error.value)


def test_a_folder_whose_build_file_is_not_understood_still_runs(tmp_path: Path) -> None:
    folder = tmp_path / "odd"
    folder.mkdir()
    (folder / "BUILD.bazel").write_text("X = {}\n")
    (folder / "a.mlir").write_text("")
    jobs = plan(tmp_path)
    assert [(j.name, j.target.backend) for j in jobs] == [("odd/a.mlir", "llvm-cpu"),
                                                         ("odd/a.mlir", "vmvx")]
    assert jobs[0].compile_flags == ("--iree-hal-target-backends=llvm-cpu",)
    assert "unsupported expression (Dict)" in jobs[0].notes[0]
