"""What a target must provide: translate one outlined dispatch module into a payload the
runtime's loader for `format` can execute. New targets start as a copy of `null/`."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

from weir.compiler.state import CompilationState
from weir.ir.upstream import func


class Target(ABC):
    name: ClassVar[str]
    format: ClassVar[str]

    @abstractmethod
    def translate(self, entry_points: list[func.FuncOp], state: CompilationState) -> bytes:
        """One executable's payload holding all of its entry points, in order."""
