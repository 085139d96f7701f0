"""Carries each `flow.executable` over as a `stream.executable`: same contents, now addressed by
`stream.cmd.dispatch`."""

from __future__ import annotations

from weir.compiler.pass_base import Pass
from weir.compiler.state import CompilationState
from weir.dialects import flow, stream
from weir.ir.upstream import ModuleOp


class ConvertExecutables(Pass):
    flag = "convert-executables-to-stream"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        for op in list(module.body.block.ops):
            if not isinstance(op, flow.ExecutableOp):
                continue
            region = op.detach_region(op.body)
            for inner in region.block.ops:
                if isinstance(inner, flow.ExecutableExportOp):
                    new_export = stream.ExecutableExportOp.build(
                        properties=dict(inner.properties))
                    region.block.insert_op_before(new_export, inner)
                    inner.detach()
                    inner.erase()
                    break
            new = stream.ExecutableOp.build(properties=dict(op.properties), regions=[region])
            module.body.block.insert_op_before(new, op)
            op.detach()
            op.erase()
