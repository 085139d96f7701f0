"""LLVM IR -> optimised object code for a CPU: the one step of the llvm-cpu target that needs
neither xDSL nor the rest of the compiler, so that worker processes compiling executables in
parallel (`--weir-hal-executable-jobs`) import only this and llvmlite."""

from __future__ import annotations

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


def compile_shared(module: str, cpu: CpuTarget, owners: list[object]) -> list[bytes]:
    """The object code of `module` for each of `owners`, the executables that lowered to it:
    compiled once (jobs.py's SharedJob), since the same IR is the same object."""
    return [compile_module(module, cpu)] * len(owners)
