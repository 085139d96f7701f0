"""`weir-compile`: MLIR in, a module file (or one phase's IR) out, with IREE's flag spellings so
the seeds' command lines work with `iree-` replaced by `weir-`:

    weir-compile --iree-hal-target-backends=vmvx module_a.mlir -o=module_a.wvm
    weir-compile --compile-to=flow simple_mul.mlir
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from pathlib import Path

from weir.compiler.options import (
    EXECUTION_MODELS,
    PHASES,
    CompilerOptions,
    ExecutionModel,
    TargetDevice,
    default_kernel_cache_dir,
)
from weir.errors import UsageError
from weir.tools.cli import run_tool
from weir.tools.io.flags import Flag, FlagParser, ParsedFlags

TOOL = "weir-compile"

EXECUTION_MODEL_FLAG = Flag(
    "iree-execution-model", "string", "async-internal (default: functions wait for their own "
    "work) or async-external (every export takes a wait and a signal fence).",
    default="async-internal", metavar="MODEL")


def execution_model_from_flags(flags: ParsedFlags) -> ExecutionModel:
    model = flags.string("iree-execution-model") or "async-internal"
    for known in EXECUTION_MODELS:
        if model == known:
            return known
    raise UsageError(f"--iree-execution-model: '{model}' is not one of "
                     f"{', '.join(EXECUTION_MODELS)}")


MEMOIZATION_FLAG = Flag(
    "iree-hal-memoization", "bool", "Record command buffers that are the same on every call once, "
    "when the module is initialised, and replay them with each call's buffers (false: record "
    "every command buffer on every call).", default=True)

TARGET_DEVICE_FLAG = Flag(
    "iree-hal-target-device", "string", "A device the program runs on, in the order devices are "
    "bound at run time: NAME=local[N], local[N] or local.", repeated=True, metavar="DEVICE")

# Shared with weir-opt, whose target-dependent passes read them.
BACKENDS_FLAG = Flag("iree-hal-target-backends", "string", "Target backend(s), comma separated: "
                     "llvm-cpu (native code), vmvx (alias of reference), reference.",
                     repeated=True, metavar="NAMES")
TARGET_CPU_FLAG = Flag("iree-llvmcpu-target-cpu", "string", "CPU llvm-cpu generates code for: "
                       "host (this machine's, the default) or x86-64, x86-64-v2, x86-64-v3, "
                       "x86-64-v4.", default="host", metavar="CPU")
TARGET_CPU_FEATURES_FLAG = Flag("iree-llvmcpu-target-cpu-features", "string", "Extra LLVM CPU "
                                "features for llvm-cpu, e.g. +avx2,-avx512f.", default="",
                                metavar="FEATURES")

PARSER = FlagParser(TOOL, "[flags] INPUT.mlir (or - for stdin)", [
    Flag("o", "string", "Output file ('-' for stdout).", metavar="FILE"),
    BACKENDS_FLAG,
    TARGET_DEVICE_FLAG,
    Flag("iree-hal-local-target-device-backends", "string", "Backend(s) of the local target "
         "devices, comma separated (llvm-cpu, vmvx, reference).", repeated=True, metavar="NAMES"),
    TARGET_CPU_FLAG,
    TARGET_CPU_FEATURES_FLAG,
    Flag("iree-llvmcpu-reassociate-fp-reductions", "bool", "Let llvm-cpu combine float "
         "reductions in a reassociated order (vector lanes within blocks); false: in "
         "iteration order (the reference target too).", default=True),
    Flag("weir-accumulate-f16-in-f32", "bool", "Accumulate f16/bf16 matmuls in f32 and round "
         "once (faster on llvm-cpu, more accurate); default: round after each step of k, as "
         "IREE does.", default=False),
    Flag("weir-llvmcpu-kernel-cache-dir", "string", "Where llvm-cpu keeps its microkernels' "
         "object code between compilations (default ~/.cache/weir/kernels); empty: nowhere.",
         metavar="DIR"),
    Flag("weir-hal-executable-jobs", "int", "Processes that compile executables in parallel "
         "(llvm-cpu: LLVM's optimisation and code generation) when there are several; 0 "
         "(default): one per available CPU, as iree-compile's threads; 1: all in the compiling "
         "process.", default=0, metavar="N"),
    EXECUTION_MODEL_FLAG,
    MEMOIZATION_FLAG,
    Flag("weir-stream-elide-transfers", "bool", "Use one allocation on devices that share memory "
         "instead of copying between them (false: every transfer is a queue copy).",
         default=True),
    Flag("iree-opt-strip-assertions", "bool", "Remove cf.assert ops from linalg op bodies "
         "(default false: each is a run-time check that fails its dispatch with the assert's "
         "message).", default=False),
    Flag("compile-to", "string", f"Stop after this phase and print its IR: {', '.join(PHASES)}.",
         metavar="PHASE"),
    Flag("dump-compilation-phases-to", "string", "Write the IR after every phase into DIR.",
         metavar="DIR"),
], positionals=(1, 1), description="Compiles an MLIR program into a weir module file.")


_TARGET_DEVICE = re.compile(r"(?:(?P<name>[A-Za-z_][\w$.-]*)=)?(?P<kind>[a-z][\w-]*)"
                            r"(?:\[(?P<ordinal>\d+)\])?")


def target_devices_from_flags(flags: ParsedFlags) -> tuple[TargetDevice, ...]:
    """IREE's `--iree-hal-target-device` spellings; unnamed devices are named `__device_<i>`."""
    devices: list[TargetDevice] = []
    for i, spec in enumerate(flags.strings("iree-hal-target-device")):
        m = _TARGET_DEVICE.fullmatch(spec.strip())
        if m is None:
            raise UsageError(f"--iree-hal-target-device='{spec}': expected NAME=local[N], "
                             "local[N] or local")
        if m["kind"] != "local":
            raise UsageError(f"--iree-hal-target-device='{spec}': device kind '{m['kind']}' "
                             "is not supported (supported: local)")
        name = m["name"] or f"__device_{i}"
        if any(d.name == name for d in devices):
            raise UsageError(f"--iree-hal-target-device='{spec}': device '{name}' is named twice")
        devices.append(TargetDevice(name, m["kind"], int(m["ordinal"] or 0)))
    return tuple(devices)


def flag_names(flags: ParsedFlags, flag: str) -> list[str]:
    """A repeated, comma-separated flag's names (`--iree-hal-target-backends=a,b`)."""
    return [b.strip() for value in flags.strings(flag) for b in value.split(",") if b.strip()]


def options_from_flags(flags: ParsedFlags) -> CompilerOptions:
    devices = target_devices_from_flags(flags)
    backends = flag_names(flags, "iree-hal-target-backends")
    local_backends = flag_names(flags, "iree-hal-local-target-device-backends")
    if local_backends and not devices:
        raise UsageError("--iree-hal-local-target-device-backends needs "
                         "--iree-hal-target-device=NAME=local[N]")
    backends += [b for b in local_backends if b not in backends]
    model = execution_model_from_flags(flags)
    phase = flags.string("compile-to")
    if phase is not None and phase not in PHASES:
        raise UsageError(f"--compile-to: '{phase}' is not a phase (phases: {', '.join(PHASES)})")
    jobs = flags.integer("weir-hal-executable-jobs")
    if jobs < 0:
        raise UsageError(f"--weir-hal-executable-jobs: expected a count >= 0, got {jobs}")
    dump = flags.string("dump-compilation-phases-to")
    cache = flags.string("weir-llvmcpu-kernel-cache-dir")
    disabled = frozenset() if flags.boolean("weir-stream-elide-transfers") else \
        frozenset({"elide-transfers"})
    return CompilerOptions(
        target_backends=tuple(backends) or ("reference",),
        execution_model=model,
        target_devices=devices,
        hal_memoization=flags.boolean("iree-hal-memoization"),
        llvmcpu_target_cpu=flags.string("iree-llvmcpu-target-cpu") or "host",
        llvmcpu_target_cpu_features=flags.string("iree-llvmcpu-target-cpu-features") or "",
        llvmcpu_reassociate_fp_reductions=flags.boolean("iree-llvmcpu-reassociate-fp-reductions"),
        accumulate_f16_in_f32=flags.boolean("weir-accumulate-f16-in-f32"),
        executable_jobs=jobs,
        compile_to=phase,  # type: ignore[arg-type]
        dump_phases_to=Path(dump) if dump else None,
        disabled_passes=disabled,
        strip_assertions=flags.boolean("iree-opt-strip-assertions"),
        kernel_cache_dir=default_kernel_cache_dir() if cache is None else
        Path(cache) if cache else None,
    )


def _body(argv: Sequence[str]) -> int:
    flags = PARSER.parse(argv)
    if flags.help_requested:
        sys.stdout.write(PARSER.help_text())
        return 0
    options = options_from_flags(flags)
    # Imported only now (it loads xDSL and every pass) so --help and flag errors stay fast.
    from weir.compiler.api import compile_string, compile_to_phase, write_atomically

    source_path = flags.positionals[0]
    if source_path == "-":
        source: bytes = sys.stdin.buffer.read()
        filename = "<stdin>"
    else:
        source = Path(source_path).read_bytes()
        filename = source_path
    output = flags.string("o")
    if output == "":
        raise UsageError("-o needs a file name ('-' for stdout)")
    if options.compile_to is not None:
        text = compile_to_phase(source, filename, options, options.compile_to)
        if output in (None, "-"):
            sys.stdout.write(text)
        else:
            write_atomically(Path(output), text.encode())
        return 0
    data = compile_string(source, filename, options)
    if output in (None, "-"):
        if sys.stdout.isatty():
            raise UsageError("refusing to write a binary module to a terminal; use -o FILE")
        sys.stdout.buffer.write(data)
    else:
        write_atomically(Path(output), data)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return run_tool(TOOL, lambda: _body(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    sys.exit(main())
