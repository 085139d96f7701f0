"""The compiler's front door: source text in, module bytes (or a phase's IR text) out. Tools and
the Python API are built on these three functions."""

from __future__ import annotations

import errno
import os
import tempfile
from dataclasses import replace
from pathlib import Path

from weir.compiler.devices import HOST_MEMORY_KINDS
from weir.compiler.options import CompilerOptions, Phase, TargetDevice
from weir.compiler.pipeline import run_phases
from weir.compiler.state import CompilationState
from weir.compiler.targets.registry import canonical_target_name, get_target
from weir.compiler.vm.serialize import build_image
from weir.dialects import vm
from weir.errors import UsageError
from weir.format.module_file import serialize
from weir.ir import parse_module, print_module
from weir.ir.nesting import deep_nesting
from weir.ir.upstream import ModuleOp


def _module_name(module: ModuleOp, filename: str) -> str:
    name = module.sym_name.data if module.sym_name is not None else None
    if name:
        return name
    stem = Path(filename).stem if filename not in ("-", "<stdin>") else "module"
    return stem.replace("-", "_").replace(".", "_") or "module"


def _normalise(options: CompilerOptions) -> CompilerOptions:
    backends = [canonical_target_name(b) for b in options.target_backends]
    if not backends:
        raise UsageError("no target backend given (use --iree-hal-target-backends=vmvx)")
    for backend in dict.fromkeys(backends):
        get_target(backend).check_options(options)
    devices = tuple(options.target_devices)
    names: set[str] = set()
    for d in devices:
        if not isinstance(d, TargetDevice):
            raise UsageError(f"target_devices: expected TargetDevice entries, got "
                             f"{type(d).__name__}")
        if d.kind not in HOST_MEMORY_KINDS:
            raise UsageError(f"target_devices: device '{d.name}' has kind '{d.kind}', which is "
                             f"not supported (supported: {', '.join(sorted(HOST_MEMORY_KINDS))})")
        if d.name in names:
            raise UsageError(f"target_devices: device '{d.name}' is named twice")
        names.add(d.name)
    cache = options.kernel_cache_dir or None  # "" (the CLI's spelling of none) too
    if cache is not None and not isinstance(cache, (str, os.PathLike)):
        raise UsageError(f"kernel_cache_dir: expected a directory path or None, got "
                         f"{type(cache).__name__}")
    return replace(options, target_backends=tuple(dict.fromkeys(backends)),
                   target_devices=devices, kernel_cache_dir=None if cache is None else Path(cache))


def _compile(source: str | bytes, filename: str, options: CompilerOptions,
             stop_at: Phase | None) -> tuple[ModuleOp, CompilationState]:
    if not isinstance(source, (str, bytes)):
        raise UsageError(f"source: expected MLIR text (str or bytes), got {type(source).__name__}")
    if not isinstance(filename, str):
        raise UsageError(f"filename: expected a str, got {type(filename).__name__} (pass "
                         "options as options=CompilerOptions(...))")
    if not isinstance(options, CompilerOptions):
        raise UsageError(f"options: expected CompilerOptions, got {type(options).__name__}")
    options = replace(_normalise(options), compile_to=stop_at)
    module = parse_module(source, filename)
    state = CompilationState(options, filename, _module_name(module, filename))
    dump_dir = options.dump_phases_to

    def dump(phase: Phase, m: ModuleOp) -> None:
        # Each phase's file is whole or absent, even if the compile fails in a later phase.
        if dump_dir is not None:
            if dump_dir.exists() and not dump_dir.is_dir():
                raise UsageError(f"--dump-compilation-phases-to: '{dump_dir}' is not a directory")
            dump_dir.mkdir(parents=True, exist_ok=True)
            write_atomically(dump_dir / f"{state.module_name}.{phase}.mlir",
                             print_module(m).encode())

    run_phases(module, state, dump)
    return module, state


def compile_to_phase(source: str | bytes, filename: str, options: CompilerOptions,
                     phase: Phase) -> str:
    with deep_nesting():  # the stack that deeply nested regions need, printing included
        module, _ = _compile(source, filename, options, phase)
        return print_module(module)


def compile_string(source: str | bytes, filename: str = "<stdin>",
                   options: CompilerOptions | None = None) -> bytes:
    with deep_nesting():  # the stack that deeply nested regions need, in every phase
        module, state = _compile(source, filename, options or CompilerOptions(), None)
        vm_module = next(op for op in module.body.block.ops if isinstance(op, vm.ModuleOp))
        return serialize(build_image(vm_module, state))


def write_atomically(path: Path, data: bytes) -> None:
    """Writes via a temporary file so a failed compile never leaves a partial output behind,
    and an existing file is replaced only by a complete one. Errors name `path`, never the
    temporary file."""
    if path.is_dir():
        raise OSError(errno.EISDIR, "Is a directory (expected a file name)", str(path))
    directory = path.parent if str(path.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as e:
        raise OSError(e.errno, f"cannot create a file in '{directory}': {e.strerror}",
                      str(path)) from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def compile_file(path: str | Path, output_path: str | Path,
                 options: CompilerOptions | None = None) -> None:
    source = Path(path).read_bytes()
    write_atomically(Path(output_path), compile_string(source, str(path), options))
