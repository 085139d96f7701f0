"""What a target must provide: translate one outlined dispatch module into a payload the
runtime's loader for `format` can execute. New targets start as a copy of `null/`."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

from weir.compiler.options import CompilerOptions
from weir.compiler.state import CompilationState
from weir.format.workgroups import WorkgroupGrid
from weir.ir.upstream import func


class Target(ABC):
    name: ClassVar[str]
    format: ClassVar[str]

    def check_options(self, options: CompilerOptions) -> None:
        """Raise UsageError for an option this target cannot honour. Called before parsing, so a
        bad flag is reported even for a program that needs no dispatch (the default: none)."""

    @abstractmethod
    def translate(self, entry_points: list[func.FuncOp], state: CompilationState) -> bytes:
        """One executable's payload holding all of its entry points, in order."""

    def workgroup_grids(self, payload: bytes) -> tuple[WorkgroupGrid, ...] | None:
        """How each entry point of `payload` splits into workgroups, in order; None when the
        target runs a dispatch's whole iteration space at once, whatever the count."""
        return None
