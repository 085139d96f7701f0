"""`weir-opt`: runs named passes on MLIR and prints the result, one pass per flag
(`--form-dispatch-regions`), in the order given. The tool that the compiler's lit tests use to
check one pass at a time."""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from pathlib import Path

from weir.compiler.options import CompilerOptions
from weir.compiler.registry import PASSES
from weir.compiler.state import CompilationState
from weir.ir import parse_module, print_module
from weir.ir.nesting import deep_nesting
from weir.errors import CompileError
from weir.tools.cli import error_line, run_tool
from weir.tools.compile import (
    BACKENDS_FLAG,
    EXECUTION_MODEL_FLAG,
    execution_model_from_flags,
    flag_names,
    MEMOIZATION_FLAG,
    TARGET_CPU_FEATURES_FLAG,
    TARGET_CPU_FLAG,
    TARGET_DEVICE_FLAG,
    target_devices_from_flags,
)
from weir.tools.io.flags import Flag, FlagParser

TOOL = "weir-opt"
SPLIT_MARKER = re.compile(r"^// -----[ \t]*$", re.MULTILINE)

PARSER = FlagParser(TOOL, "[--PASS ...] INPUT.mlir (or - for stdin)", [
    *(Flag(name, "bool", f"Run the {name} pass.", default=False) for name in PASSES),
    BACKENDS_FLAG,
    TARGET_CPU_FLAG,
    TARGET_CPU_FEATURES_FLAG,
    EXECUTION_MODEL_FLAG,
    MEMOIZATION_FLAG,
    TARGET_DEVICE_FLAG,
    Flag("split-input-file", "bool", "Treat '// -----' as separating independent inputs.",
         default=False),
], positionals=(1, 1), description="Runs weir compiler passes on MLIR text.")


def _body(argv: Sequence[str]) -> int:
    flags = PARSER.parse(argv)
    if flags.help_requested:
        sys.stdout.write(PARSER.help_text())
        return 0
    # Pass flags are bool flags named after their pass; `--PASS=false` runs nothing.
    passes = [PASSES[name] for name, on in flags.given if name in PASSES and on]
    backends = tuple(flag_names(flags, "iree-hal-target-backends"))
    options = CompilerOptions(execution_model=execution_model_from_flags(flags),
                              target_devices=target_devices_from_flags(flags),
                              hal_memoization=flags.boolean("iree-hal-memoization"),
                              **({"target_backends": backends} if backends else {}),
                              llvmcpu_target_cpu=flags.string("iree-llvmcpu-target-cpu") or "host",
                              llvmcpu_target_cpu_features=flags.string(
                                  "iree-llvmcpu-target-cpu-features") or "")
    path = flags.positionals[0]
    source = sys.stdin.read() if path == "-" else Path(path).read_text(errors="replace")
    filename = "<stdin>" if path == "-" else path
    # As mlir-opt: the marker splits only as a line of its own, not inside a comment.
    chunks = SPLIT_MARKER.split(source) if flags.boolean("split-input-file") else [source]
    outputs = []
    failed = 0
    line = 1
    for chunk in chunks:
        # Keep line numbers true to the whole file in diagnostics.
        text = "\n" * (line - 1) + chunk
        line += chunk.count("\n")
        try:
            module = parse_module(text, filename)
            state = CompilationState(options, filename, "module")
            for p in passes:
                p.run(module, state)
        except CompileError as error:
            if len(chunks) == 1:
                raise
            # As mlir-opt does with split inputs: report each failing chunk, go on to the next.
            sys.stderr.write(error_line(TOOL, str(error)) + "\n")
            failed += 1
            continue
        outputs.append(print_module(module))
    sys.stdout.write("// -----\n".join(outputs))
    return 1 if failed else 0


def main(argv: Sequence[str] | None = None) -> int:
    def body() -> int:
        with deep_nesting():  # the stack that deeply nested regions need, passes included
            return _body(sys.argv[1:] if argv is None else argv)
    return run_tool(TOOL, body)


if __name__ == "__main__":
    sys.exit(main())
