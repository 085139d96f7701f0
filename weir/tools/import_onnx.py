"""`weir-import-onnx`: an ONNX model in, linalg-on-tensors MLIR out, with the flags of IREE's
`iree-import-onnx` that mean something here, so that

    weir-import-onnx model.onnx --opset-version=17 -o model.mlir
    weir-compile --iree-hal-target-backends=llvm-cpu model.mlir -o model.wvm

works as IREE's pair of tools does. Unlike `iree-import-onnx`, whose output is torch IR that
`iree-compile` lowers, the output is already linalg on tensors: weir's compiler takes no torch
IR. Needs the `onnx` extra (`pip install weir[onnx]`).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from weir.errors import UsageError
from weir.tools.cli import run_tool
from weir.tools.io.flags import Flag, FlagParser

TOOL = "weir-import-onnx"

PARSER = FlagParser(TOOL, "[flags] MODEL.onnx", [
    Flag("o", "string", "Output file ('-' for stdout, the default).", metavar="FILE"),
    Flag("opset-version", "int", "Convert the model to this opset before importing (default: "
         "models older than opset 17 are upgraded to 17).", metavar="N"),
    Flag("data-prop", "bool", "Let ONNX shape inference propagate constant values (shapes "
         "computed by Shape/Gather/Concat become static).", default=True),
    Flag("no-data-prop", "bool", "Turn --data-prop off."),
    Flag("data-dir", "string", "Directory the external data locations are relative to "
         "(default: the model's directory).", metavar="DIR"),
    Flag("temp-dir", "string", "Existing directory for the temporary files of models over 2 GB "
         "(default: the system's).", metavar="DIR"),
    Flag("keep-temps", "bool", "Keep those temporary files."),
    Flag("clear-domain", "bool", "Clear the domain of every node before shape inference (for "
         "exporters that label standard ops with their own domain)."),
    Flag("no-verify", "bool", "Skip the ONNX checker and the verification of the imported IR."),
], positionals=(1, 1), description="Imports an ONNX model as linalg-on-tensors MLIR for "
                                    "weir-compile.")


def _body(argv: Sequence[str]) -> int:
    flags = PARSER.parse(argv)
    if flags.help_requested:
        sys.stdout.write(PARSER.help_text())
        return 0
    output = flags.string("o")
    if output == "":
        raise UsageError("-o needs a file name ('-' for stdout)")
    opset = flags.get("opset-version")
    if opset is not None and opset < 1:  # type: ignore[operator]
        raise UsageError(f"--opset-version: expected an opset number >= 1, got {opset}")
    # Imported only now: a missing extra is then one line, and --help stays fast.
    try:
        from weir.frontends._onnx_mlir import ImportOptions, load, to_linalg
    except ImportError as error:
        if (error.name or "").split(".")[0] not in ("onnx", "torch_mlir", "google"):
            raise
        raise UsageError(f"needs onnx and torch-mlir ({error.name} is missing): "
                         "pip install weir[onnx]") from None
    from weir.compiler.api import write_atomically

    data_dir, temp_dir = flags.string("data-dir"), flags.string("temp-dir")
    options = ImportOptions(
        opset_version=opset,  # type: ignore[arg-type]
        data_prop=flags.boolean("data-prop") and not flags.boolean("no-data-prop"),
        data_dir=Path(data_dir) if data_dir else None,
        temp_dir=Path(temp_dir) if temp_dir else None,
        keep_temps=flags.boolean("keep-temps"),
        clear_domain=flags.boolean("clear-domain"),
        verify=not flags.boolean("no-verify"),
    )
    source = Path(flags.positionals[0])
    text = to_linalg(load(source, options), source.name, verify=options.verify)
    if output in (None, "-"):
        sys.stdout.write(text)
    else:
        write_atomically(Path(output), text.encode())
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return run_tool(TOOL, lambda: _body(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    sys.exit(main())
