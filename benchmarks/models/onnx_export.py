"""The zoo's models as ONNX files, and those files through `weir-import-onnx`: the ONNX path
(tests/models/test_zoo_onnx.py, the `-onnx` rows of `python -m benchmarks.models`) with the same
builders, sizes and seeded weights as the torch path (benchmarks/models/registry.py). Exported
by torch's TorchScript-based exporter at opset 17: it needs nothing beyond torch (the
dynamo-based one needs onnxscript).

The GPT-2 models are left out: torch-mlir cannot lower the Reshape their exports hold (its
dynamic sequence dimension meets a static one: "failed to legalize unresolved target
materialization from ('tensor<1x8x32xf32>') to ('tensor<1x?x32xf32>')").
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import torch

from benchmarks.models.registry import BY_NAME, Built
from weir.errors import ExportError

OPSET = 17
MODELS: tuple[str, ...] = ("mlp", "resnet18", "mobilenet_v2", "bert", "lstm", "sampling_head")
SUFFIX = "-onnx"


def export(name: str, path: Path, size: str = "test") -> Built:
    """Writes registry model `name` at `size` to `path` as ONNX; returns the model and its
    example inputs (the graph's inputs, in order), so callers compare with the same weights."""
    if name not in MODELS:
        raise ValueError(f"{name!r} has no ONNX export; those that do: {', '.join(MODELS)}")
    model, inputs = BY_NAME[name].build(size)
    write(model, inputs, path)
    return model, inputs


def write(model: torch.nn.Module, inputs: tuple[torch.Tensor, ...], path: Path) -> None:
    """Any model as ONNX at `path` (for onnxruntime, which runs the exports weir's importer
    cannot take too)."""
    with torch.no_grad():
        torch.onnx.export(model, inputs, str(path), dynamo=False, opset_version=OPSET,
                          input_names=[f"input{i}" for i in range(len(inputs))])


def import_with_cli(onnx_path: Path, mlir_path: Path) -> str:
    """`weir-import-onnx ONNX -o MLIR` in a child process, as a user runs it (the running
    interpreter's, so this checkout's weir); returns the MLIR text. Its one-line error is an
    ExportError."""
    done = subprocess.run([sys.executable, "-m", "weir.tools.import_onnx", str(onnx_path),
                           "-o", str(mlir_path)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines()
        raise ExportError(lines[-1] if lines else f"weir-import-onnx exited {done.returncode}")
    return mlir_path.read_text()
