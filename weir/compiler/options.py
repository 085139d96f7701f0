"""Every compiler knob in one frozen dataclass; the CLI maps IREE's flag spellings onto it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

Phase = Literal["input", "abi", "global-optimization", "flow", "stream", "hal", "vm"]
PHASES: tuple[Phase, ...] = ("input", "abi", "global-optimization", "flow", "stream", "hal",
                             "vm")

ExecutionModel = Literal["async-internal", "async-external"]
EXECUTION_MODELS: tuple[ExecutionModel, ...] = ("async-internal", "async-external")


def default_kernel_cache_dir() -> Path | None:
    """Where llvm-cpu keeps its microkernels' object code unless told otherwise: in the
    user's cache directory, or nowhere when there is no home directory."""
    try:
        return Path.home() / ".cache" / "weir" / "kernels"
    except RuntimeError:
        return None


@dataclass(frozen=True)
class TargetDevice:
    """A device named in the program (`device_a=local[0]`): name, kind and ordinal."""

    name: str
    kind: str = "local"
    ordinal: int = 0


@dataclass(frozen=True)
class CompilerOptions:
    target_backends: tuple[str, ...] = ("reference",)
    execution_model: ExecutionModel = "async-internal"
    target_devices: tuple[TargetDevice, ...] = ()
    # The CPU llvm-cpu generates code for: `host` (this machine, AVX-512 when present) or a
    # generic level (`x86-64`, `x86-64-v2/v3/v4`); extra `+feat,-feat` LLVM features.
    llvmcpu_target_cpu: str = "host"
    llvmcpu_target_cpu_features: str = ""
    # Float reductions on llvm-cpu may combine in a reassociated order (vector lanes within
    # blocks of the reduced dimension, as IREE's vectorised code does); False: strictly in
    # iteration order (IREE's --iree-llvmcpu-reassociate-fp-reductions=false), on the reference
    # target too, so that both targets give the same sums.
    llvmcpu_reassociate_fp_reductions: bool = True
    # f16/bf16 matmuls accumulate in f32 and round once (--weir-accumulate-f16-in-f32); by
    # default they round to their type after each step of k, as IREE's do.
    accumulate_f16_in_f32: bool = False
    # Processes that run the self-contained part of translating executables (llvm-cpu: LLVM's
    # optimisation and code generation) in parallel, when there are several
    # (--weir-hal-executable-jobs); 0: one per available CPU (weir-compile's default), 1 (the
    # API's default: a program embedding the compiler may not want processes started for it):
    # all in the compiling process.
    executable_jobs: int = 1
    # Record command buffers whose contents do not change between calls once, at module
    # initialisation, and replay them with each call's buffers (IREE's --iree-hal-memoization).
    hal_memoization: bool = True
    # Stop after this phase and produce its IR as text instead of a module file.
    compile_to: Phase | None = None
    # Write the IR after every phase into this directory (`<name>.<phase>.mlir`).
    dump_phases_to: Path | None = None
    # Run the phase-exit verifiers (never off in tests; off only to debug a broken pass).
    verify_phases: bool = True
    # Passes not to run, by flag name (e.g. `fuse-elementwise` to see unfused dispatches).
    disabled_passes: frozenset[str] = field(default_factory=frozenset)
    # Remove `cf.assert` from linalg op bodies (`--iree-opt-strip-assertions`; off, as in IREE).
    strip_assertions: bool = False
    # Where llvm-cpu keeps its microkernels' object code between compilations
    # (--weir-llvmcpu-kernel-cache-dir; targets/llvm_cpu/kernel_cache.py); None: none kept.
    kernel_cache_dir: Path | None = field(default_factory=default_kernel_cache_dir)
