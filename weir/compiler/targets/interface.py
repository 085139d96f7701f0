"""What a target must provide: translate one outlined dispatch module into a payload the
runtime's loader for `format` can execute. New targets start as a copy of `null/`."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Callable, ClassVar

from weir.compiler.jobs import Job, SharedJob
from weir.compiler.options import CompilerOptions
from weir.compiler.state import CompilationState
from weir.format.workgroups import WorkgroupGrid
from weir.ir.upstream import func


@dataclass
class Translation:
    """An executable part way through translation: `jobs` (say, LLVM's optimisation and code
    generation of one module) may run in any process, in any order; `finish` makes the payload
    from their results, in the jobs' order."""

    jobs: list[Job | SharedJob]
    finish: Callable[[list[bytes]], bytes]


class Target(ABC):
    name: ClassVar[str]
    format: ClassVar[str]

    def check_options(self, options: CompilerOptions) -> None:
        """Raise UsageError for an option this target cannot honour. Called before parsing, so a
        bad flag is reported even for a program that needs no dispatch (the default: none)."""

    @abstractmethod
    def translate(self, entry_points: list[func.FuncOp], state: CompilationState) -> bytes:
        """One executable's payload holding all of its entry points, in order."""

    def start(self, entry_points: list[func.FuncOp], state: CompilationState) -> Translation:
        """`translate`, split so that its heavy, self-contained part can run in parallel with
        other executables' (`--weir-hal-executable-jobs`). By default all done here."""
        payload = self.translate(entry_points, state)
        return Translation([], lambda _results: payload)

    def workgroup_grids(self, payload: bytes) -> tuple[WorkgroupGrid, ...] | None:
        """How each entry point of `payload` splits into workgroups, in order; None when the
        target runs a dispatch's whole iteration space at once, whatever the count."""
        return None
