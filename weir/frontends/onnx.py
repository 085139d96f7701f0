"""ONNX models in, weir callables out. Two entry points, and a command-line tool:

    >>> import weir.frontends.onnx as wo                                         # doctest: +SKIP
    >>> text = wo.import_model("model.onnx")    # linalg-on-tensors MLIR, function `main`
    >>> fast = wo.compile("model.onnx")         # llvm-cpu on local-task; takes numpy arrays
    $ weir-import-onnx model.onnx -o model.mlir

torch-mlir's ONNX importer brings the model in as torch IR, its pipelines lower that to linalg on
tensors, weir compiles that. Needs the `onnx` extra (`pip install weir[onnx]`: onnx and
torch-mlir, no torch); weir's compiler and runtime never import onnx: this module is the only
bridge.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from weir.errors import UsageError

try:
    import numpy as np
    import onnx

    from weir.frontends._onnx_mlir import DEFAULT_OPSET, ImportOptions, load, to_linalg
except ImportError as error:
    if (error.name or "").split(".")[0] not in ("onnx", "torch_mlir", "google"):
        raise
    raise UsageError("weir.frontends.onnx needs onnx and torch-mlir: "
                     "pip install weir[onnx]") from None

from weir.frontends._compile import LoadedModel, check_target, compile_mlir

Model = str | Path | onnx.ModelProto


def _name(model: Model) -> str:
    if isinstance(model, onnx.ModelProto):
        return model.graph.name or "model"
    return Path(model).name


def _options(opset_version: int | None, data_prop: bool) -> ImportOptions:
    if opset_version is not None and (not isinstance(opset_version, int) or opset_version < 1):
        raise UsageError(f"opset_version: expected an opset number, got {opset_version!r}")
    return ImportOptions(opset_version=opset_version, data_prop=data_prop)


def import_model(model: Model, *, opset_version: int | None = None,
                 data_prop: bool = True) -> str:
    """`model` (a .onnx path, its external data next to it, or a ModelProto) as MLIR text at
    the linalg-on-tensors level, with one function, `main`, taking the graph's inputs (its
    initializers are constants in it). Models older than opset 17 are upgraded to it first
    (`opset_version` picks another). An op torch-mlir cannot lower is an ExportError naming the
    ONNX op and its node."""
    if not isinstance(model, str | Path | onnx.ModelProto):
        raise UsageError(f"model: expected a path or an onnx.ModelProto, got "
                         f"{type(model).__name__}")
    return to_linalg(load(model, _options(opset_version, data_prop)), _name(model))


class CompiledModel(LoadedModel):
    """A model compiled by weir and loaded on a device: called with numpy arrays, one per graph
    input in order, returns a numpy array (a tuple for several graph outputs)."""

    def on(self, device: str) -> CompiledModel:
        """The same compiled module loaded on another device (no recompilation)."""
        return CompiledModel(self.module, device, self.mlir)

    def __call__(self, *args: Any) -> Any:
        return self.function(*(np.asarray(a) for a in args))



def compile(model: Model, *, target: str = "llvm-cpu", device: str = "local-task",
            keep_mlir: str | Path | None = None, strip_assertions: bool = True,
            opset_version: int | None = None) -> CompiledModel:
    """`model` imported, compiled for `target` and loaded on `device`. Defaults to native code
    on every core (llvm-cpu, local-task). `keep_mlir` writes the imported MLIR there, so the
    file:line of a weir compile error points into it. `strip_assertions` removes the
    per-element asserts torch-mlir puts in linalg bodies (index bounds of Gather): kept, each is
    a run-time check; stripped, an index out of range is still caught by the gather itself."""
    check_target(target)
    mlir = import_model(model, opset_version=opset_version)
    module = compile_mlir(mlir, _name(model), target=target, strip_assertions=strip_assertions,
                          keep_mlir=keep_mlir, produced="imported")
    return CompiledModel(module, device, mlir)


__all__ = ["DEFAULT_OPSET", "CompiledModel", "compile", "import_model"]
