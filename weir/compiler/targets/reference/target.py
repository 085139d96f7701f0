"""The `reference` target (alias `vmvx`): dispatches as kernel descriptions the runtime runs
with numpy over whole arrays."""

from __future__ import annotations

from weir.compiler.state import CompilationState
from weir.compiler.targets.interface import Target
from weir.compiler.codegen.translate import EntryTranslator
from weir.format.reference_codec import encode_reference_executable
from weir.format.reference_kernel import ReferenceExecutable
from weir.ir.upstream import func


class ReferenceTarget(Target):
    name = "reference"
    format = "reference"

    def translate(self, entry_points: list[func.FuncOp], state: CompilationState) -> bytes:
        entries = tuple(EntryTranslator(fn).translate() for fn in entry_points)
        return encode_reference_executable(ReferenceExecutable(entries))
