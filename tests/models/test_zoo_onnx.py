"""The zoo's ONNX exports (benchmarks/models/onnx_export.py, at the registry's test sizes): each
model exported by torch.onnx at opset 17, imported by `weir-import-onnx` in a child process,
compiled by weir for llvm-cpu (run on local-task) and, for the models quick to compile, the
reference target (run on local-sync), and compared with eager PyTorch under the registry's
tolerances; integer outputs (token ids) compare exactly."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")  # the `torch` extra; `make test` installs it
pytest.importorskip("transformers")
pytest.importorskip("onnx")  # the `onnx` extra
import weir.api as weir  # noqa: E402
import weir.frontends.onnx as wo  # noqa: E402
from benchmarks.models import onnx_export  # noqa: E402
from benchmarks.models.registry import BY_NAME  # noqa: E402

# Every model on llvm-cpu (local-task); the ones quick to compile on the reference target too
# (local-sync). ResNet-18, MobileNetV2 and BERT skip the reference target to keep this file
# short: tests/models/test_zoo.py runs them there through the torch path.
REFERENCE_TOO = ("mlp", "lstm", "sampling_head")
CASES = [(name, "llvm-cpu", "local-task") for name in onnx_export.MODELS] + [
    (name, "reference", "local-sync") for name in REFERENCE_TOO]


@dataclass(frozen=True)
class Imported:
    mlir: str
    inputs: tuple[torch.Tensor, ...]
    expected: object


@pytest.fixture(scope="module")
def imports(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Imported]:
    """Each model exported and imported once per module, with its inputs and eager outputs."""
    done: dict[str, Imported] = {}

    def get(name: str) -> Imported:
        if name not in done:
            work: Path = tmp_path_factory.mktemp(name)
            model, inputs = onnx_export.export(name, work / "model.onnx")
            with torch.no_grad():
                expected = model(*inputs)
            mlir = onnx_export.import_with_cli(work / "model.onnx", work / "model.mlir")
            done[name] = Imported(mlir, inputs, expected)
        return done[name]

    return get


@pytest.mark.parametrize(("name", "target", "device"), CASES,
                         ids=[f"{n}-{t}" for n, t, _ in CASES])
def test_onnx_export_matches_eager(imports: Callable[[str], Imported], name: str, target: str,
                                   device: str) -> None:
    case = imports(name)
    options = weir.CompilerOptions(target_backends=(target,), strip_assertions=True)
    module = weir.compile_string(case.mlir, "model.mlir", options)
    with wo.CompiledModel(module, device, case.mlir) as compiled:
        got = compiled(*(t.numpy() for t in case.inputs))
    got_leaves = [torch.from_numpy(a) for a in (got if isinstance(got, tuple) else (got,))]
    expected_leaves = torch.utils._pytree.tree_leaves(case.expected)
    assert len(got_leaves) == len(expected_leaves)
    entry = BY_NAME[name]
    for g, e in zip(got_leaves, expected_leaves, strict=True):
        torch.testing.assert_close(g, e, rtol=entry.rtol, atol=entry.atol)


def test_model_without_onnx_export_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="'gpt2_step' has no ONNX export; those that do: mlp,"):
        onnx_export.export("gpt2_step", tmp_path / "model.onnx")
