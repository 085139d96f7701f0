"""PyTorch models in, weir callables out. Three entry points:

    >>> import torch, weir.frontends.torch as wt                                 # doctest: +SKIP
    >>> text = wt.export(model, x)                 # linalg-on-tensors MLIR, function `main`
    >>> fast = wt.compile(model, x)                # llvm-cpu on local-task; takes torch tensors
    >>> y = torch.compile(model, backend="weir")(x)

torch.export captures the model, torch-mlir lowers it to linalg on tensors, weir compiles that.
Needs the `torch` extra (`pip install weir[torch]`); weir's compiler and runtime never import
torch: this module is the only bridge.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from weir.errors import UsageError

try:
    import numpy as np
    import torch
    from torch.utils import _pytree as pytree

    from weir.frontends._torch_mlir import to_linalg
except ImportError as error:
    if (error.name or "").split(".")[0] not in ("torch", "torch_mlir"):
        raise
    raise UsageError("weir.frontends.torch needs PyTorch and torch-mlir: "
                     "pip install weir[torch]") from None

from weir.frontends._compile import LoadedModel, check_target, compile_mlir



def _exported(model: Any, args: tuple[Any, ...],
              dynamic_shapes: Any = None) -> torch.export.ExportedProgram:
    if isinstance(model, torch.export.ExportedProgram):
        return model
    if not isinstance(model, torch.nn.Module):
        raise UsageError(f"model: expected a torch.nn.Module or an ExportedProgram, got "
                         f"{type(model).__name__}")
    return torch.export.export(model, args, dynamic_shapes=dynamic_shapes)


def _name(model: Any) -> str:
    return type(model).__name__


def export(model: Any, *example_args: Any, dynamic_shapes: Any = None) -> str:
    """`model` called on `example_args`, as MLIR text at the linalg-on-tensors level with one
    function, `main`, taking the tensors of `example_args` (weights are constants in it). A
    torch op torch-mlir cannot lower is a CompileError naming the aten op."""
    return to_linalg(_exported(model, example_args, dynamic_shapes), _name(model))


class CompiledModel(LoadedModel):
    """A model compiled by weir and loaded on a device: called with torch tensors shaped as the
    example arguments, returns torch tensors in the structure the model returns."""

    def __init__(self, module: bytes, device: str, out_spec: pytree.TreeSpec, mlir: str) -> None:
        super().__init__(module, device, mlir)
        self._out_spec = out_spec

    def on(self, device: str) -> CompiledModel:
        """The same compiled module loaded on another device (no recompilation)."""
        return CompiledModel(self.module, device, self._out_spec, self.mlir)

    def __call__(self, *args: Any) -> Any:
        leaves = [a for a in pytree.tree_leaves(args) if isinstance(a, torch.Tensor)]
        results = self.function(*map(_to_numpy, leaves))
        if not isinstance(results, tuple):
            results = (results,)
        return pytree.tree_unflatten([_to_torch(r) for r in results], self._out_spec)



def _to_numpy(t: torch.Tensor) -> np.ndarray:
    """The tensor's own memory when it can be shared (a CPU tensor with no autograd history);
    a copy only for tensors numpy cannot view."""
    t = t.detach()
    if t.device.type != "cpu":
        t = t.cpu()
    return t.numpy()


def _to_torch(value: Any) -> torch.Tensor:
    """Results come back as fresh numpy arrays: torch.from_numpy shares their memory."""
    return torch.from_numpy(np.ascontiguousarray(value))


def compile(model: Any, *example_args: Any, target: str = "llvm-cpu",
            device: str = "local-task", keep_mlir: str | Path | None = None,
            strip_assertions: bool = True, dynamic_shapes: Any = None) -> CompiledModel:
    """`model` exported on `example_args`, compiled for `target` and loaded on `device`.
    Defaults to native code on every core (llvm-cpu, local-task). `keep_mlir` writes the
    exported MLIR there, so the file:line of a weir compile error points into it.
    `strip_assertions` removes the per-element asserts torch-mlir puts in linalg bodies
    (batch-norm variances, index bounds): kept, each is a run-time check that costs a compare
    per element; stripped, an index out of range is still caught by the gather itself."""
    check_target(target)
    program = _exported(model, example_args, dynamic_shapes)
    mlir = to_linalg(program, _name(model))
    module = compile_mlir(mlir, _name(model), target=target, strip_assertions=strip_assertions,
                          keep_mlir=keep_mlir, produced="exported")
    return CompiledModel(module, device, program.call_spec.out_spec, mlir)


class DynamoGraph:
    """What `torch.compile(model, backend="weir")` runs for each graph dynamo captures: the graph
    compiled by weir on first call for each list of input shapes and dtypes, then reused."""

    def __init__(self, graph: torch.fx.GraphModule, target: str, device: str) -> None:
        self.graph = graph
        self.target = target
        self.device = device
        self.compiled: dict[tuple[tuple[Any, Any], ...], CompiledModel] = {}

    def __call__(self, *args: torch.Tensor) -> Any:
        key = tuple((tuple(a.shape), a.dtype) if isinstance(a, torch.Tensor) else (type(a), a)
                    for a in args)
        compiled = self.compiled.get(key)
        if compiled is None:
            compiled = compile(self.graph, *args, target=self.target, device=self.device)
            self.compiled[key] = compiled
        return compiled(*args)


def backend(graph: torch.fx.GraphModule, example_inputs: Sequence[torch.Tensor],
            target: str = "llvm-cpu", device: str = "local-task") -> Callable[..., Any]:
    """The torch.compile backend `weir` (registered through the `torch_dynamo_backends` entry
    points). Compiles lazily, on the real inputs of the first call of each shape."""
    del example_inputs  # may be fake tensors; the first call's real ones are exported instead
    return DynamoGraph(graph, target, device)


__all__ = ["CompiledModel", "backend", "compile", "export"]
