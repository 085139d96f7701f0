"""Translates every executable for every requested target and keeps the payloads in the
compilation's blob store; the IR keeps one `hal.executable.binary` per target naming its blob.
A module can thus carry executables for several targets and the runtime picks the one its
device can load. Each binary also records how its entry points split into workgroups, which the
host lowering turns into each dispatch's workgroup count.

Each target first does the part of a translation that needs the IR (here, in order), then the
self-contained rest (llvm-cpu: LLVM's optimisation and code generation, most of the time) runs
as jobs, in worker processes when there are several (`--weir-hal-executable-jobs`). Payloads
are finished and stored in the executables' order, so the module is the same however many
processes ran the jobs."""

from __future__ import annotations

from weir.compiler.jobs import run_jobs
from weir.compiler.pass_base import Pass
from weir.compiler.state import CompilationState
from weir.compiler.targets.interface import Target, Translation
from weir.compiler.targets.registry import get_target
from weir.dialects import hal, stream
from weir.ir.upstream import ArrayAttr, Attribute, Block, func, ModuleOp, Region, StringAttr

# What a worker imports before its first job: the llvm-cpu jobs' module (llvmlite with it).
_PRELOAD = ("weir.compiler.targets.llvm_cpu.object_code",)
# Less LLVM IR than this (characters, all executables) compiles in the compiling process:
# starting workers (0.1-0.5 s here) costs more than LLVM takes for a few small kernels, while
# one convolution's kernel is 80-300 thousand characters and 1-2 s of LLVM.
PARALLEL_FROM_CHARS = 200_000


class TranslateExecutables(Pass):
    flag = "translate-executables"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        targets = [get_target(name) for name in state.options.target_backends]
        started: list[tuple[stream.ExecutableOp, list[str], list[tuple[Target, Translation]]]] = []
        for op in list(module.body.block.ops):
            if not isinstance(op, stream.ExecutableOp):
                continue
            entry_names = [e.sym_name.data for e in op.body.block.ops
                           if isinstance(e, stream.ExecutableExportOp)]
            inner = next(o for o in op.body.block.ops if isinstance(o, ModuleOp))
            functions = {f.sym_name.data: f for f in inner.body.block.ops
                         if isinstance(f, func.FuncOp)}
            entries = [functions[n] for n in entry_names]
            started.append((op, entry_names, [(t, t.start(entries, state)) for t in targets]))
        results = iter(run_jobs([job for _, _, ts in started for _, t in ts for job in t.jobs],
                                state.options.executable_jobs, state.filename, _PRELOAD,
                                PARALLEL_FROM_CHARS))
        for op, entry_names, translations in started:
            name = op.sym_name.data
            binaries = []
            for target, translation in translations:
                payload = translation.finish([next(results) for _ in translation.jobs])
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
