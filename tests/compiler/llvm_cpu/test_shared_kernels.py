"""Executables whose kernels are the same share one compile: an entry point's symbol is named by
its place in its executable, so they lower to the same LLVM IR, and each gets exactly the object
code that IR compiled on its own gives, optimised and emitted once for all of them."""

from __future__ import annotations

from typing import Any

import llvmlite.binding as llvm
import numpy as np
import pytest

import weir.api as weir
from weir.format.module_file import deserialize
from weir.format.native_executable import decode_native_executable
from weir.compiler.targets.llvm_cpu import target
from weir.compiler.targets.llvm_cpu.machine import CpuTarget
from weir.compiler.targets.llvm_cpu.object_code import compile_module, compile_shared

# Three convolutions of one shape and one multiply: two distinct kernels.
CONV = ("linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = "
        "dense<1> : tensor<2xi64>} ins(%x, %wN : tensor<1x16x16x32xf32>, tensor<3x3x32x32xf32>) "
        "outs(%z : tensor<1x14x14x32xf32>) -> tensor<1x14x14x32xf32>")
SRC = f"""
func.func @f(%x: tensor<1x16x16x32xf32>, %w0: tensor<3x3x32x32xf32>, %w1: tensor<3x3x32x32xf32>,
             %w2: tensor<3x3x32x32xf32>, %v: tensor<64xf32>)
    -> (tensor<1x14x14x32xf32>, tensor<1x14x14x32xf32>, tensor<1x14x14x32xf32>, tensor<64xf32>) {{
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x14x14x32xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<1x14x14x32xf32>) -> tensor<1x14x14x32xf32>
  %0 = {CONV.replace("%wN", "%w0")}
  %1 = {CONV.replace("%wN", "%w1")}
  %2 = {CONV.replace("%wN", "%w2")}
  %3 = arith.mulf %v, %v : tensor<64xf32>
  return %0, %1, %2, %3 : tensor<1x14x14x32xf32>, tensor<1x14x14x32xf32>, tensor<1x14x14x32xf32>,
                          tensor<64xf32>
}}"""


def test_each_copy_is_what_compiling_it_alone_gives(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, CpuTarget, list[object], list[bytes]]] = []

    def recorded(module: str, cpu: CpuTarget, owners: list[object]) -> list[bytes]:
        objects = compile_shared(module, cpu, owners)
        calls.append((module, cpu, list(owners), objects))
        return objects

    monkeypatch.setattr(target, "compile_shared", recorded)
    weir.compile_string(SRC, "shared.mlir", weir.CompilerOptions(target_backends=("llvm-cpu",)))
    assert sorted(len(owners) for _, _, owners, _ in calls) == [1, 3]
    for module, cpu, owners, objects in calls:
        for obj in objects:
            assert obj == compile_module(module, cpu)


def test_shared_kernels_compute_what_the_reference_target_does() -> None:
    rng = np.random.default_rng(0)
    args: list[Any] = [rng.standard_normal(s).astype(np.float32) for s in
                       [(1, 16, 16, 32), (3, 3, 32, 32), (3, 3, 32, 32), (3, 3, 32, 32), (64,)]]
    results = []
    for backend in ("llvm-cpu", "reference"):
        module = weir.compile_string(SRC, "shared.mlir",
                                     weir.CompilerOptions(target_backends=(backend,)))
        results.append(weir.load([module], device="local-sync").lookup_function("f")(*args))
    for ours, reference in zip(*results, strict=True):
        np.testing.assert_allclose(ours, reference, rtol=1e-4, atol=1e-4)


def test_executables_of_one_kernel_share_its_object_code(monkeypatch: pytest.MonkeyPatch) -> None:
    """An entry point's symbol is named by its place in its executable, so the three
    convolutions' executables have the same object code, emitted once, not three times."""
    emitted: list[int] = []
    emit = llvm.TargetMachine.emit_object

    def counted(self: llvm.TargetMachine, module: llvm.ModuleRef) -> bytes:
        emitted.append(1)
        return emit(self, module)

    monkeypatch.setattr(llvm.TargetMachine, "emit_object", counted)
    module = weir.compile_string(SRC, "shared.mlir",
                                 weir.CompilerOptions(target_backends=("llvm-cpu",)))
    assert len(emitted) == 2  # the convolution's kernel and the multiply's
    image = deserialize(module)
    objects = [decode_native_executable(image.segments[e.variants[0].segment]).objects[0]
               for e in image.executables]
    assert len(objects) == 4 and len(set(objects)) == 2
