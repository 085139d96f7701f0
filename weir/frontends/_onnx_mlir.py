"""The one place that imports onnx and torch-mlir's ONNX importer: an ONNX model read (with its
external weights), upgraded to an opset torch-mlir lowers well, shape-inferred, imported as torch
IR, then lowered to linalg-on-tensors MLIR text. Each failure becomes one line naming the file,
or the ONNX op (and node) torch-mlir could not lower. Needs no torch: torch-mlir's
`compiler_utils` (which imports torch) is not used here."""

from __future__ import annotations

import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import onnx
from google.protobuf.message import DecodeError
from onnx import checker, shape_inference, version_converter
from torch_mlir import ir
from torch_mlir.dialects import torch as torch_d
from torch_mlir.extras import onnx_importer
from torch_mlir.passmanager import PassManager

from weir.errors import ExportError
from weir.frontends._diagnostics import collected

# Models older than this are upgraded before import: torch-mlir matches ONNX ops by their
# definitions since opset 7 or so, and not all of the old ones (MaxPool of opset 9, for one).
DEFAULT_OPSET = 17
# Above this size a model cannot go through protobuf in memory: shape inference goes by files.
_PROTOBUF_LIMIT = 2**31 - 1

ONNX_TO_TORCH = "builtin.module(torch-onnx-to-torch-backend-pipeline)"
TORCH_TO_LINALG = "builtin.module(torch-backend-to-linalg-on-tensors-backend-pipeline)"

_LOC_NAME = re.compile(r'loc\("([^"]*)"')
_ONNX_OP = re.compile(r'"onnx\.(\w+)"')


@dataclass(frozen=True)
class ImportOptions:
    """What `iree-import-onnx` lets a user choose, as far as it means something to weir."""

    opset_version: int | None = None  # None: upgrade to DEFAULT_OPSET only models older than it
    data_prop: bool = True  # let shape inference propagate constant values (Shape -> Reshape)
    data_dir: Path | None = None  # where external data lives (default: next to the model)
    temp_dir: Path | None = None  # where file-based shape inference of >2 GB models writes
    keep_temps: bool = False
    clear_domain: bool = False  # drop each node's domain (exporters that mislabel standard ops)
    verify: bool = True


def load(source: str | Path | onnx.ModelProto, options: ImportOptions) -> onnx.ModelProto:
    """The model ready for torch-mlir: external data in, opset upgraded, shapes inferred."""
    where = (source.graph.name or "model") if isinstance(source, onnx.ModelProto) else str(source)
    if isinstance(source, onnx.ModelProto):
        model = source
    else:
        model = _read(Path(source), options.data_dir)
    model = _upgraded(model, where, options.opset_version)
    if options.clear_domain:
        model = _copy(model)
        for node in model.graph.node:
            node.ClearField("domain")
    return _with_shapes(model, where, options)


def _read(path: Path, data_dir: Path | None) -> onnx.ModelProto:
    if not path.is_file():
        raise ExportError(f"{path}: no such ONNX file")
    try:
        model = onnx.load(str(path), load_external_data=False)
        onnx.load_external_data_for_model(model, str(data_dir or path.parent))
    except DecodeError as error:
        raise ExportError(f"{path}: not an ONNX model ({error})") from None
    except (FileNotFoundError, onnx.checker.ValidationError) as error:
        raise ExportError(f"{path}: cannot read its external data ({error})") from None
    if not model.HasField("graph"):
        raise ExportError(f"{path}: not an ONNX model (no graph)")
    return model


def _copy(model: onnx.ModelProto) -> onnx.ModelProto:
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    return copy


def opset(model: onnx.ModelProto) -> int:
    """The version of the default (ai.onnx) domain the model imports."""
    return max((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), default=0)


def _upgraded(model: onnx.ModelProto, where: str, target: int | None) -> onnx.ModelProto:
    current = opset(model)
    if target is None:
        if current >= DEFAULT_OPSET:
            return model
        target = DEFAULT_OPSET
    if current == target:
        return model
    try:
        return version_converter.convert_version(model, target)
    except (RuntimeError, ValueError) as error:
        raise ExportError(f"{where}: cannot convert from opset {current} to opset {target} "
                          f"({_first_line(error)})") from None


def _with_shapes(model: onnx.ModelProto, where: str,
                 options: ImportOptions) -> onnx.ModelProto:
    if model.ByteSize() >= _PROTOBUF_LIMIT:
        return _with_shapes_by_file(model, where, options)
    try:
        if options.verify:
            checker.check_model(model)
        return shape_inference.infer_shapes(model, data_prop=options.data_prop)
    except (checker.ValidationError, shape_inference.InferenceError) as error:
        raise ExportError(f"{where}: invalid ONNX model ({_first_line(error)})") from None


def _with_shapes_by_file(model: onnx.ModelProto, where: str,
                         options: ImportOptions) -> onnx.ModelProto:
    """Shape inference through files, for models past protobuf's 2 GB: weights go out as external
    data next to a temporary copy of the model, and come back in after."""
    temp = Path(tempfile.mkdtemp(prefix="weir-onnx-", dir=options.temp_dir))
    try:
        raw, inferred = temp / "raw.onnx", temp / "inferred.onnx"
        onnx.save(model, str(raw), save_as_external_data=True, location="raw.onnx.data")
        try:
            shape_inference.infer_shapes_path(str(raw), str(inferred),
                                              data_prop=options.data_prop)
        except shape_inference.InferenceError as error:
            raise ExportError(f"{where}: invalid ONNX model ({_first_line(error)})") from None
        result = onnx.load(str(inferred), load_external_data=False)
        onnx.load_external_data_for_model(result, str(temp))
        return result
    finally:
        if not options.keep_temps:
            shutil.rmtree(temp, ignore_errors=True)


def _first_line(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return lines[0] if lines else type(error).__name__


def to_linalg(model: onnx.ModelProto, name: str, *, verify: bool = True) -> str:
    """`model` (from `load`) as MLIR text at the linalg-on-tensors level, its function named
    `main`. Nodes get names where they have none, so that a lowering failure, located at the
    node's name, can name the ONNX op behind it."""
    model = _named_nodes(model)
    ops = {node.name: node.op_type for node in model.graph.node}
    context = ir.Context()
    torch_d.register_dialect(context)
    with collected(context) as diagnostics:
        info = onnx_importer.ModelInfo(model, config=onnx_importer.Config())
        module = info.create_module(context=context)
        try:
            importer = onnx_importer.NodeImporter.define_function(info.main_graph,
                                                                   module.operation)
            importer.import_all()
        except onnx_importer.OnnxImportError as error:
            raise ExportError(f"{name}: torch-mlir cannot import the model "
                              f"({_first_line(error)})") from None
        if verify:
            try:
                module.operation.verify()
            except ir.MLIRError as error:
                raise _cannot_lower(name, diagnostics + _reported(error), ops, "import") from None
        _rename_main(module)
        for pipeline in (ONNX_TO_TORCH, TORCH_TO_LINALG):
            try:
                with context:
                    context.emit_error_diagnostics = True
                    PassManager.parse(pipeline).run(module.operation)
            except ir.MLIRError as error:
                raise _cannot_lower(name, diagnostics + _reported(error), ops, "lower") from None
        return str(module)


def _reported(error: Any) -> list[tuple[str, str]]:
    """The diagnostics an MLIRError carries (those the handler did not already see)."""
    return [(str(d.location), str(d.message)) for d in error.error_diagnostics]


def _named_nodes(model: onnx.ModelProto) -> onnx.ModelProto:
    if all(node.name for node in model.graph.node):
        return model
    model = _copy(model)
    taken = {node.name for node in model.graph.node}
    for i, node in enumerate(model.graph.node):
        if not node.name:
            candidate = f"{node.op_type}_{i}"
            while candidate in taken:
                candidate += "_"
            node.name = candidate
            taken.add(candidate)
    return model


def _rename_main(module: Any) -> None:
    """The graph's function is called as the graph is named; weir's callers look up `main`."""
    for op in module.body.operations:
        if op.operation.name == "func.func":
            op.attributes["sym_name"] = ir.StringAttr.get("main", module.context)
            return


def _cannot_lower(name: str, diagnostics: list[tuple[str, str]], ops: dict[str, str],
                  stage: str) -> ExportError:
    """The ONNX op at the first failing location: the node named in the location, else the
    `onnx.X` named in the message; torch-mlir's reason follows, without the IR it prints."""
    location, message = diagnostics[0] if diagnostics else ("", "no diagnostic")
    reason = _first_line(message).split(": %")[0].split(": \"")[0]
    what = "the model"
    for node in _LOC_NAME.findall(location):
        if node in ops:
            what = f"ONNX op '{ops[node]}' (node '{node}')"
            break
    else:
        if named := _ONNX_OP.search(message):
            what = f"ONNX op '{named[1]}'"
    target = " to linalg-on-tensors" if stage == "lower" else ""
    return ExportError(f"{name}: torch-mlir cannot {stage} {what}{target} ({reason})")
