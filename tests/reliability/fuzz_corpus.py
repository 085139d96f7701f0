"""The module files the fuzzer mutates: real programs compiled once per session for every target
and execution model, with the fixed inputs each is called with.

The programs cover what a module file can hold: one dispatch (simple_mul), several modules
calling each other (samples/multiple_modules), an import of a module written in Python, host
control flow (scf.for / scf.if as VM blocks and branches), dense constants (rodata segments) and
dynamic shapes (push constants, shape math on the host)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from weir.runtime.api import BufferView, NativeModule, export

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"
TARGETS = ("reference", "llvm-cpu")
MODELS = ("async-internal", "async-external")
DRIVERS = ("local-sync", "local-task")


class FuzzHost(NativeModule):
    """The Python module the import program calls: scales a tensor by a scalar."""

    module_name = "fuzzhost"

    @export("0rf_r")
    def scale(self, state: Any, view: BufferView, factor: float) -> BufferView:
        return BufferView.from_numpy(view.to_numpy() * np.float32(factor))


IMPORT_PROGRAM = """
func.func private @fuzzhost.scale(tensor<?xf32>, f32) -> tensor<?xf32>
func.func @main(%a: tensor<?xf32>) -> tensor<?xf32> {
  %s = arith.constant 3.0 : f32
  %0 = arith.addf %a, %a : tensor<?xf32>
  %1 = call @fuzzhost.scale(%0, %s) : (tensor<?xf32>, f32) -> tensor<?xf32>
  %2 = arith.mulf %1, %a : tensor<?xf32>
  return %2 : tensor<?xf32>
}
"""

CONTROL_FLOW_PROGRAM = """
func.func @loop(%a: tensor<8xf32>, %n: index) -> (tensor<8xf32>, index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %a, %k = %c0) -> (tensor<8xf32>, index) {
    %rem = arith.remui %i, %c2 : index
    %even = arith.cmpi eq, %rem, %c0 : index
    %next = scf.if %even -> (tensor<8xf32>) {
      %s = arith.addf %acc, %a : tensor<8xf32>
      scf.yield %s : tensor<8xf32>
    } else {
      %m = arith.mulf %acc, %a : tensor<8xf32>
      scf.yield %m : tensor<8xf32>
    }
    %k2 = arith.addi %k, %i : index
    scf.yield %next, %k2 : tensor<8xf32>, index
  }
  return %r#0, %r#1 : tensor<8xf32>, index
}
"""

CONSTANT_PROGRAM = """
func.func @affine(%x: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %w = arith.constant dense<[[1.0, -2.0, 0.5], [3.0, 0.25, -1.0], [2.0, 1.5, 4.0],
                             [-0.5, 2.5, 1.0]]> : tensor<4x3xf32>
  %b = arith.constant dense<[[0.5, -1.5, 2.0], [1.0, 3.0, -2.5]]> : tensor<2x3xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3xf32>
  %acc = linalg.fill ins(%z : f32) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  %m = linalg.matmul ins(%x, %w : tensor<2x4xf32>, tensor<4x3xf32>)
                     outs(%acc : tensor<2x3xf32>) -> tensor<2x3xf32>
  %r = arith.addf %m, %b : tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
"""

DYNAMIC_PROGRAM = """
func.func @dyn(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> (tensor<?x?xf32>, index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %0 = arith.mulf %a, %b : tensor<?x?xf32>
  %1 = arith.addf %0, %a : tensor<?x?xf32>
  %d0 = tensor.dim %a, %c0 : tensor<?x?xf32>
  %d1 = tensor.dim %a, %c1 : tensor<?x?xf32>
  %n = arith.muli %d0, %d1 : index
  return %1, %n : tensor<?x?xf32>, index
}
"""


def _f32(seed: int, *shape: int) -> np.ndarray:
    """Small integers as f32: every target computes them exactly."""
    return np.random.default_rng(seed).integers(-4, 5, shape).astype(np.float32)


@dataclass(frozen=True)
class Program:
    name: str
    # Per execution model: the modules in load order, as (file stem, MLIR text).
    sources: Callable[[str], tuple[tuple[str, str], ...]]
    function: str  # module.function
    inputs: Callable[[], tuple[Any, ...]]
    native: bool = False  # the fuzzhost module is loaded first


def _sample(*parts: str) -> str:
    return SAMPLES.joinpath(*parts).read_text()


def _multiple_modules(model: str) -> tuple[tuple[str, str], ...]:
    pipeline = "pipeline_sync" if model == "async-internal" else "pipeline_async"
    return (("module_a", _sample("multiple_modules", "module_a.mlir")),
            ("module_b", _sample("multiple_modules", "module_b.mlir")),
            ("pipeline", _sample("multiple_modules", f"{pipeline}.mlir")))


PROGRAMS: dict[str, Program] = {p.name: p for p in (
    Program("simple_mul", lambda m: (("simple_mul", _sample("simple_mul", "simple_mul.mlir")),),
            "simple_mul.simple_mul", lambda: (_f32(1, 4), _f32(2, 4))),
    Program("multiple_modules", _multiple_modules, "pipeline.run", lambda: (_f32(3, 4096),)),
    Program("import", lambda m: (("importer", IMPORT_PROGRAM),), "importer.main",
            lambda: (_f32(4, 6),), native=True),
    Program("control_flow", lambda m: (("control", CONTROL_FLOW_PROGRAM),), "control.loop",
            lambda: (_f32(5, 8), 5)),
    Program("constant", lambda m: (("constant", CONSTANT_PROGRAM),), "constant.affine",
            lambda: (_f32(6, 2, 4),)),
    Program("dynamic", lambda m: (("dynamic", DYNAMIC_PROGRAM),), "dynamic.dyn",
            lambda: (_f32(7, 3, 5), _f32(8, 3, 5))),
)}


@dataclass(frozen=True)
class CorpusEntry:
    """One compiled program: its module files in load order."""

    program: str
    target: str
    model: str
    files: tuple[str, ...]

    @property
    def label(self) -> str:
        return f"{self.program}/{self.target}/{self.model}"

    def to_json(self) -> dict[str, Any]:
        return {"program": self.program, "target": self.target, "model": self.model,
                "files": list(self.files)}

    @staticmethod
    def from_json(obj: dict[str, Any]) -> CorpusEntry:
        return CorpusEntry(obj["program"], obj["target"], obj["model"], tuple(obj["files"]))


def build_corpus(cache_dir: Path) -> list[CorpusEntry]:
    """Compiles every program for every target and model into `cache_dir` (files already there
    from an earlier call with the same sources are reused)."""
    import weir.api as weir  # the compiler: only the parent process needs it

    entries = []
    for program in PROGRAMS.values():
        for target in TARGETS:
            for model in MODELS:
                options = weir.CompilerOptions(target_backends=(target,), execution_model=model)
                files = []
                for stem, text in program.sources(model):
                    key = hashlib.sha256(json.dumps([text, target, model]).encode()).hexdigest()
                    path = cache_dir / f"{stem}-{target}-{model}-{key[:12]}.wvm"
                    if not path.exists():
                        data = weir.compile_string(text, f"{stem}.mlir", options)
                        tmp = path.with_suffix(".tmp")
                        tmp.write_bytes(data)
                        tmp.replace(path)
                    files.append(str(path))
                entries.append(CorpusEntry(program.name, target, model, tuple(files)))
    return entries
