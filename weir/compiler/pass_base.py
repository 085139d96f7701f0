"""The pass interface: one pass = one file = one flag. Passes rewrite the module in place."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

from weir.compiler.state import CompilationState
from weir.ir.upstream import ModuleOp


class Pass(ABC):
    # The flag that names this pass in weir-opt (`--<flag>`) and in `disabled_passes`.
    flag: ClassVar[str]

    @abstractmethod
    def run(self, module: ModuleOp, state: CompilationState) -> None: ...
