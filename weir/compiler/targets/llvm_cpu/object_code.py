"""LLVM IR -> optimised object code for a CPU: the one step of the llvm-cpu target that needs
neither xDSL nor the rest of the compiler, so that worker processes compiling executables in
parallel (`--weir-hal-executable-jobs`) import only this and llvmlite."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import llvmlite
import llvmlite.binding as llvm
import llvmlite.ir as ir

from weir.compiler.targets.llvm_cpu.machine import CpuTarget


def optimize(module: ir.Module | str, cpu: CpuTarget) -> llvm.ModuleRef:
    """Parsed, verified and run through LLVM's O3 pipeline for `cpu`."""
    parsed = llvm.parse_assembly(str(module))
    parsed.verify()
    tm = cpu.target_machine()
    tuning = llvm.create_pipeline_tuning_options(speed_level=3)
    # A short static inner loop (an embedding row of 16) is unrolled whole before the loop
    # vectoriser sees it; the SLP vectoriser (off in llvmlite's defaults) packs the copies.
    tuning.slp_vectorization = True
    pb = llvm.create_pass_builder(tm, tuning)
    pb.getModulePassManager().run(parsed, pb)
    return parsed


def compile_module(module: ir.Module | str, cpu: CpuTarget) -> bytes:
    """LLVM IR -> optimised object code."""
    return cpu.target_machine().emit_object(optimize(module, cpu))  # type: ignore[no-any-return]


def object_key(ir_text: str, cpu: CpuTarget) -> tuple[str, ...]:
    """Everything `compile_module(ir_text, cpu)` depends on, for a cache of its objects: the IR,
    the CPU, LLVM's and llvmlite's versions, and this file (the pipeline and its tuning)."""
    pipeline = Path(__file__).read_text()
    return (ir_text, cpu.triple, cpu.cpu, cpu.features, repr(llvm.llvm_version_info),
            llvmlite.__version__, pipeline)


# Old and new name of each symbol a copy of a module is emitted under (see `compile_copies`).
Renaming = tuple[tuple[str, str], ...]


@cache
def _keep_use_list_order_in_bitcode() -> None:
    """LLVM's code generation depends on the order of each value's uses, which bitcode drops
    unless told to keep it: a copy read back from bitcode then gives other (equivalent) code
    than the module it was written from. Only bitcode writing reads this option."""
    llvm.set_option("weir", "-preserve-bc-uselistorder")


def compile_copies(module: str, cpu: CpuTarget, renamings: list[Renaming]) -> list[bytes]:
    """Object code of `module` once per renaming, optimised once and emitted once per distinct
    renaming: executables that lower to the same LLVM IR but for their entry points' names
    share LLVM's optimisation, most of their compile time, and those with the same names share
    their object code too. A renaming gives each of the module's symbols `old` (and `old.<suffix>`, the
    internal functions named after it, LLVM's clones of them included) the name `new`; what is
    emitted is what `compile_module` gives for the module written with the new names, since
    LLVM's optimisation does not look at names."""
    _keep_use_list_order_in_bitcode()
    optimized = optimize(module, cpu)
    distinct = list(dict.fromkeys(renamings))  # equal renamings: the same object, emitted once
    bitcode = optimized.as_bitcode() if len(distinct) > 1 else b""
    machine = cpu.target_machine()
    emitted: dict[Renaming, bytes] = {}
    for n, renaming in enumerate(distinct):
        # Code generation changes the module it runs on: each copy after the first is a fresh
        # one, read back from the bitcode of the optimised module.
        copy = optimized if n == 0 else llvm.parse_bitcode(bitcode)
        _rename(copy, renaming)
        emitted[renaming] = machine.emit_object(copy)
    return [emitted[renaming] for renaming in renamings]


def _rename(module: llvm.ModuleRef, renaming: Renaming) -> None:
    for value in [*module.functions, *module.global_variables]:
        name = value.name
        for old, new in renaming:
            if name == old or name.startswith(old + "."):
                value.name = new + name[len(old):]
                break
