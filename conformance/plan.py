"""What the runner runs: every .mlir file of the suite on each of weir's two host targets, with
the compiler flags IREE's build passes for that file and backend where weir-compile takes them.

A file may sit in several of IREE's suites for one backend (conv2d.mlir: plain and Winograd);
the runner compiles it once, with the suite whose flags weir takes best (fewest dropped, then
the first in the BUILD file), and records what it dropped, so a flag weir ignores is visible in
the report instead of silently changing what was tested. A file IREE's build does not run on a
backend runs there with the flags of the suite that runs it on the other host backend: its
expected values were computed under them (associative_reordering.mlir's in-order sum).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from conformance.build_files import BuildFile, BuildFileError, Suite, read_build_file
from weir.tools.check_module import PARSER as CHECK_PARSER
from weir.tools.compile import PARSER as COMPILE_PARSER


@dataclass(frozen=True)
class Target:
    """One way of running a file: IREE's backend name (weir takes it as
    --iree-hal-target-backends; vmvx is weir's alias of its reference target) and the device
    weir-check-module runs it on."""

    backend: str
    device: str

    @property
    def label(self) -> str:
        return f"{self.backend}/{self.device}"


TARGETS: tuple[Target, ...] = (Target("llvm-cpu", "local-task"), Target("vmvx", "local-sync"))
TARGET_BY_NAME = {t.backend: t for t in TARGETS}


@dataclass(frozen=True)
class Job:
    """One file on one target, with the flags it is compiled and run with and why."""

    path: Path            # the .mlir file
    name: str             # relative to the suite: `linalg/conv2d.mlir`
    folder: str           # `linalg`, `regression/stablehlo`
    target: Target
    compile_flags: tuple[str, ...]
    dropped_flags: tuple[str, ...]   # IREE's flags weir-compile / weir-check-module do not take
    iree_suite: str | None           # the IREE suite whose flags were used
    iree_runs: bool                  # IREE's build runs this file on this backend
    notes: tuple[str, ...] = field(default=())


def discover(suite_dir: Path) -> list[Path]:
    """Every .mlir file under the suite, in a stable order."""
    return sorted(suite_dir.rglob("*.mlir"), key=lambda p: p.relative_to(suite_dir).as_posix())


def takes_flag(flag: str, parser_flags: set[str]) -> bool:
    """Whether a tool's flag parser knows `--name[=value]` (IREE spells `-`/`_` both ways)."""
    name = flag.lstrip("-").split("=", 1)[0].replace("-", "_")
    return name in parser_flags


_COMPILE_FLAGS = {f.key for f in COMPILE_PARSER.flags}
_CHECK_FLAGS = {f.key for f in CHECK_PARSER.flags}
_SHELL_ESCAPE = re.compile(r"\\(.)")


def _unescape(flag: str) -> str:
    """BUILD files escape shell characters for IREE's test scripts (`builtin.module\\(...`);
    the runner passes arguments without a shell."""
    return _SHELL_ESCAPE.sub(r"\1", flag)


def _split_flags(suite: Suite | None) -> tuple[list[str], list[str]]:
    """(flags weir takes, flags it does not) of `suite`; target flags are the runner's own."""
    taken: list[str] = []
    dropped: list[str] = []
    if suite is None:
        return taken, dropped
    for flag in map(_unescape, suite.compiler_flags):
        if takes_flag(flag, {"iree_hal_target_backends"}):
            continue
        (taken if takes_flag(flag, _COMPILE_FLAGS) else dropped).append(flag)
    for arg in map(_unescape, suite.runner_args):
        if not takes_flag(arg, _CHECK_FLAGS):
            dropped.append(arg)
    return taken, dropped


def plan_job(path: Path, suite_dir: Path, target: Target, build: BuildFile | None,
             build_problem: str | None = None) -> Job:
    """The job for `path` on `target`. Its notes say how the file stands in IREE's build (not
    compiled for this backend, in several suites, only compiled), shown beside its result."""
    rel = path.relative_to(suite_dir).as_posix()
    folder = path.parent.relative_to(suite_dir).as_posix()
    suites = build.check_suites(path.name, target.backend) if build is not None else []
    notes: list[str] = []
    if build_problem is not None:
        notes.append(f"run without IREE's flags: {build_problem}")
    best: Suite | None = None
    if suites:
        # Suites that run the file first, then fewest dropped flags; min keeps the first on ties.
        best = min(suites, key=lambda s: (s.driver is None, len(_split_flags(s)[1])))
        if len(suites) > 1:
            others = ", ".join(s.name for s in suites if s is not best)
            notes.append(f"also in IREE's {others}")
    elif build is not None:
        if build.lit_suites(path.name):
            notes.append("IREE runs it as a lit test, not a check test")
        else:
            notes.append(f"IREE's build does not compile it for {target.backend}")
    iree_runs = best is not None and any(s.driver is not None for s in suites)
    if best is not None and not iree_runs:
        notes.append(f"IREE's build only compiles it for {target.backend}")
    if best is None and build is not None:
        # The file's expected values hold under the flags IREE runs it with on another host
        # backend (associative_reordering.mlir's in-order sum): run it under those here too.
        others = [s for t in TARGETS if t != target
                  for s in build.check_suites(path.name, t.backend) if s.driver is not None]
        if others:
            best = min(others, key=lambda s: len(_split_flags(s)[1]))
            notes.append(f"with the flags of IREE's {best.name}")
    taken, dropped = _split_flags(best)
    return Job(path=path, name=rel, folder=folder, target=target,
               compile_flags=(f"--iree-hal-target-backends={target.backend}", *taken),
               dropped_flags=tuple(dropped), iree_suite=best.name if best else None,
               iree_runs=iree_runs, notes=tuple(notes))


def plan(suite_dir: Path, targets: tuple[Target, ...] = TARGETS,
         folders: tuple[str, ...] | None = None) -> list[Job]:
    """Every file under `suite_dir` (or under `folders`, names relative to it) on `targets`.
    Each file's flags come from the BUILD.bazel of its own folder."""
    builds: dict[Path, tuple[BuildFile | None, str | None]] = {}
    jobs: list[Job] = []
    for path in discover(suite_dir):
        folder = path.parent.relative_to(suite_dir).as_posix()
        if folders is not None and folder not in folders:
            continue
        if path.parent not in builds:
            builds[path.parent] = read_folder_build(path.parent)
        build, problem = builds[path.parent]
        jobs.extend(plan_job(path, suite_dir, t, build, problem) for t in targets)
    return jobs


def read_folder_build(folder: Path) -> tuple[BuildFile | None, str | None]:
    """A folder without a BUILD file, or with one this reader cannot follow, still runs: its
    files are compiled without IREE's flags and the report says why."""
    build_path = folder / "BUILD.bazel"
    if not build_path.exists():
        return None, "no BUILD.bazel"
    try:
        return read_build_file(build_path), None
    except BuildFileError as error:
        return None, str(error)
