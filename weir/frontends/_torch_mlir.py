"""The one place that imports torch-mlir: an exported program lowered to linalg-on-tensors MLIR
text, with torch-mlir's failures turned into one line naming the aten op it could not lower."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import torch
from torch.export.graph_signature import ExportGraphSignature, InputKind
from torch_mlir import ir
from torch_mlir.compiler_utils import (
    OutputType,
    TorchMlirCompilerError,
    lower_mlir_module,
    run_pipeline_with_repro_report,
)
from torch_mlir.dialects import torch as torch_d
from torch_mlir.extras.fx_importer import FxImporter
from torch_mlir.fx import export_and_import

from weir.errors import CompileError, ExportError
from weir.frontends._diagnostics import collected

# What torch_mlir.fx.export_and_import runs between its raw import and the torch backend IR.
TO_TORCH_BACKEND = ("builtin.module(func.func(torch-match-quantized-custom-ops), "
                    "torchdynamo-export-to-torch-backend-pipeline)")
# The op a diagnostic names: an op torch-mlir does not know is a `torch.operator` carrying its
# name; a known one is named in quotes.
_UNKNOWN_OP_NAME = re.compile(r'name = "(torch\.[\w.]+)"')
_OP_NAME = re.compile(r"'(torch\.[\w.]+)'")
_LOC = re.compile(r'loc\("(?P<file>[^"]*)":(?P<line>\d+):(?P<col>\d+)\)')


def to_linalg(program: torch.export.ExportedProgram, name: str) -> str:
    """`program` as MLIR text at the linalg-on-tensors level, its function named `main`.
    Imported raw first, so that a failure of either lowering (to torch backend IR, then to
    linalg) can be traced back to the aten op at the failing location."""
    context = ir.Context()
    torch_d.register_dialect(context)
    with collected(context) as diagnostics:
        module = export_and_import(_buffers_in_state_dict(program), output_type="raw",
                                   func_name="main", fx_importer=FxImporter(context=context))
        aten_ops = _aten_ops_by_location(module)
        try:
            run_pipeline_with_repro_report(module, TO_TORCH_BACKEND, "torch-mlir: to torch IR")
            lower_mlir_module(False, OutputType.LINALG_ON_TENSORS, module)
        except TorchMlirCompilerError:
            raise _cannot_lower(name, diagnostics, aten_ops) from None
        return str(module)


def _buffers_in_state_dict(
        program: torch.export.ExportedProgram) -> torch.export.ExportedProgram:
    """torch-mlir's importer looks every buffer up in the state dict, but torch.export keeps the
    non-persistent ones (BERT's position ids) among the constants: the same program with them
    made persistent, so in its state dict."""
    signature = program.graph_signature
    missing = {spec.target for spec in signature.input_specs
               if spec.kind == InputKind.BUFFER and spec.persistent is False}
    if not missing:
        return program
    inputs = [dataclasses.replace(spec, persistent=True) if spec.target in missing else spec
              for spec in signature.input_specs]
    return torch.export.ExportedProgram(
        root=program.graph_module, graph=program.graph,
        graph_signature=ExportGraphSignature(inputs, signature.output_specs),
        state_dict={**program.state_dict, **{n: program.constants[n] for n in missing}},
        range_constraints=program.range_constraints,
        module_call_graph=program.module_call_graph, example_inputs=program.example_inputs,
        constants={n: c for n, c in program.constants.items() if n not in missing},
        verifiers=program.verifiers)


def _aten_ops_by_location(module: Any) -> dict[str, list[str]]:
    ops: dict[str, list[str]] = {}

    def visit(op: Any) -> Any:
        name = op.operation.name
        if name.startswith("torch.aten."):
            ops.setdefault(str(op.location), []).append(name)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return ops


def _cannot_lower(name: str, diagnostics: list[tuple[str, str]],
                  aten_ops: dict[str, list[str]]) -> CompileError | ExportError:
    """The aten op at the first failing location (torch-mlir's own message often names a
    constant feeding it), located at the model's Python source line when torch-mlir knows it."""
    location, message = diagnostics[0] if diagnostics else ("", "no diagnostic")
    named = _UNKNOWN_OP_NAME.search(message) or _OP_NAME.search(message)
    ops = aten_ops.get(location) or ([named[1]] if named else [])
    what = ops[0].removeprefix("torch.") if ops else message.splitlines()[0]
    where = _LOC.search(location)
    text = f"torch-mlir cannot lower '{what}' to linalg-on-tensors"
    if where is None:
        return ExportError(f"{name}: {text}")
    return CompileError(text, where["file"], int(where["line"]), int(where["col"]))
