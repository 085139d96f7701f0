"""Translates every executable for every requested target and keeps the payloads in the
compilation's blob store; the IR keeps one `hal.executable.binary` per target naming its blob.
A module can thus carry executables for several targets and the runtime picks the one its
device can load. Each binary also records how its entry points split into workgroups, which the
host lowering turns into each dispatch's workgroup count."""

from __future__ import annotations

from weir.compiler.pass_base import Pass
from weir.compiler.state import CompilationState
from weir.compiler.targets.registry import get_target
from weir.dialects import hal, stream
from weir.ir.upstream import ArrayAttr, Attribute, Block, func, ModuleOp, Region, StringAttr


class TranslateExecutables(Pass):
    flag = "translate-executables"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        targets = [get_target(name) for name in state.options.target_backends]
        for op in list(module.body.block.ops):
            if not isinstance(op, stream.ExecutableOp):
                continue
            name = op.sym_name.data
            entry_names = [e.sym_name.data for e in op.body.block.ops
                           if isinstance(e, stream.ExecutableExportOp)]
            inner = next(o for o in op.body.block.ops if isinstance(o, ModuleOp))
            functions = {f.sym_name.data: f for f in inner.body.block.ops
                         if isinstance(f, func.FuncOp)}
            entries = [functions[n] for n in entry_names]
            binaries = []
            for target in targets:
                payload = target.translate(entries, state)
                key = state.blobs.add(f"{name}_{target.name}", payload)
                properties: dict[str, Attribute] = {
                    "sym_name": StringAttr(target.name),
                    "target": StringAttr(target.name),
                    "format": StringAttr(target.format),
                    "entry_points": ArrayAttr([StringAttr(n) for n in entry_names]),
                    "data": StringAttr(key),
                }
                grids = target.workgroup_grids(payload)
                if grids is not None:
                    properties["workgroup_grids"] = ArrayAttr([hal.grid_attr(g) for g in grids])
                binaries.append(hal.ExecutableBinaryOp.build(properties=properties))
            new = hal.ExecutableOp.build(properties={"sym_name": StringAttr(name)},
                                          regions=[Region(Block(binaries))])
            module.body.block.insert_op_before(new, op)
            op.detach()
            op.erase()
