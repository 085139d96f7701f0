"""The skeleton to copy for a new target: it produces an empty payload that no runtime loader
accepts, so a module compiled for it fails clearly at load time rather than running wrongly."""

from __future__ import annotations

from weir.compiler.state import CompilationState
from weir.compiler.targets.interface import Target
from weir.ir.upstream import func


class NullTarget(Target):
    name = "null"
    format = "null"

    def translate(self, entry_points: list[func.FuncOp], state: CompilationState) -> bytes:
        return b""
