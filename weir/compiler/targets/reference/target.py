"""The `reference` target (alias `vmvx`): dispatches as kernel descriptions the runtime runs
with numpy over whole arrays."""

from __future__ import annotations

from weir.compiler.state import CompilationState
from weir.compiler.targets.interface import Target
from weir.compiler.codegen.translate import EntryTranslator
from weir.format.kernel_codec import encode_reference_executable
from weir.format.kernel_description import ReferenceExecutable
from weir.ir.upstream import func


class ReferenceTarget(Target):
    name = "reference"
    format = "reference"

    def translate(self, entry_points: list[func.FuncOp], state: CompilationState) -> bytes:
        # With reassociation off, the reference target sums in loop order as llvm-cpu does, so
        # the two agree bit for bit (IREE's associative_reordering.mlir).
        in_order = not state.options.llvmcpu_reassociate_fp_reductions
        entries = tuple(EntryTranslator(fn, self.name, in_order).translate()
                        for fn in entry_points)
        return encode_reference_executable(ReferenceExecutable(entries))
