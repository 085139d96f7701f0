"""`weir-compile`: MLIR in, a module file (or one phase's IR) out, with IREE's flag spellings so
the seeds' command lines work with `iree-` replaced by `weir-`:

    weir-compile --iree-hal-target-backends=vmvx module_a.mlir -o=module_a.wvm
    weir-compile --compile-to=flow simple_mul.mlir
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from weir.compiler.api import compile_string, compile_to_phase, write_atomically
from weir.compiler.options import EXECUTION_MODELS, PHASES, CompilerOptions, ExecutionModel
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


PARSER = FlagParser(TOOL, "[flags] INPUT.mlir (or - for stdin)", [
    Flag("o", "string", "Output file ('-' for stdout).", metavar="FILE"),
    Flag("iree-hal-target-backends", "string", "Target backend(s), comma separated: vmvx "
         "(alias of reference), reference.", repeated=True, metavar="NAMES"),
    EXECUTION_MODEL_FLAG,
    Flag("compile-to", "string", f"Stop after this phase and print its IR: {', '.join(PHASES)}.",
         metavar="PHASE"),
    Flag("dump-compilation-phases-to", "string", "Write the IR after every phase into DIR.",
         metavar="DIR"),
], positionals=(1, 1), description="Compiles an MLIR program into a weir module file.")


def options_from_flags(flags: ParsedFlags) -> CompilerOptions:
    backends: list[str] = []
    for value in flags.strings("iree-hal-target-backends"):
        backends.extend(b.strip() for b in value.split(",") if b.strip())
    model = execution_model_from_flags(flags)
    phase = flags.string("compile-to")
    if phase is not None and phase not in PHASES:
        raise UsageError(f"--compile-to: '{phase}' is not a phase (phases: {', '.join(PHASES)})")
    dump = flags.string("dump-compilation-phases-to")
    return CompilerOptions(
        target_backends=tuple(backends) or ("reference",),
        execution_model=model,
        compile_to=phase,  # type: ignore[arg-type]
        dump_phases_to=Path(dump) if dump else None,
    )


def _body(argv: Sequence[str]) -> int:
    flags = PARSER.parse(argv)
    if flags.help_requested:
        sys.stdout.write(PARSER.help_text())
        return 0
    options = options_from_flags(flags)
    source_path = flags.positionals[0]
    if source_path == "-":
        source: bytes = sys.stdin.buffer.read()
        filename = "<stdin>"
    else:
        source = Path(source_path).read_bytes()
        filename = source_path
    output = flags.string("o")
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
