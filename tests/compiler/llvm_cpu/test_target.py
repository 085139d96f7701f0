"""The llvm-cpu target's CPU choice: `host` records this CPU's features in the module, a generic
x86-64 module runs anywhere, and a module needing features the CPU lacks fails to load with one
clear line instead of an illegal instruction."""

from __future__ import annotations

from pathlib import Path

import llvmlite.binding as llvm
import numpy as np
import pytest

import weir.api as weir
from weir.compiler.targets.llvm_cpu.machine import resolve_cpu
from weir.errors import UsageError
from weir.format.module_file import deserialize
from weir.format.native_executable import decode_native_executable
from weir.tools import compile as compile_tool
from weir.tools import run_module

SRC = """
func.func @mul(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.mulf %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}"""


def _features(module: bytes) -> tuple[str, ...]:
    image = deserialize(module)
    variant = image.executables[0].variants[0]
    return decode_native_executable(image.segments[variant.segment]).features


def _compile(cpu: str, features: str = "") -> bytes:
    options = weir.CompilerOptions(target_backends=("llvm-cpu",), llvmcpu_target_cpu=cpu,
                                   llvmcpu_target_cpu_features=features)
    return weir.compile_string(SRC, "mul.mlir", options)


def test_host_module_records_this_cpus_features() -> None:
    host = set(resolve_cpu("host").required_features)
    assert set(_features(_compile("host"))) == host


def test_generic_x86_64_module_needs_only_baseline_features_and_runs_here() -> None:
    module = _compile("x86-64")
    assert "avx" not in _features(module) and "sse2" in _features(module)
    ctx = weir.load([module], device="local-sync")
    a = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(ctx.lookup_function("mul")(a, a), a * a)


def test_f16_runs_on_a_cpu_without_f16c() -> None:
    """Half conversions are integer code, so nothing calls `__extendhfsf2`/`__truncsfhf2`."""
    src = """
    func.func @h(%a: tensor<5xf16>, %b: tensor<5xf16>) -> tensor<5xf16> {
      %0 = arith.mulf %a, %b : tensor<5xf16>
      return %0 : tensor<5xf16>
    }"""
    options = weir.CompilerOptions(target_backends=("llvm-cpu",), llvmcpu_target_cpu="x86-64")
    ctx = weir.load([weir.compile_string(src, "h.mlir", options)], device="local-sync")
    a = np.array([1, 2.5, -3, 6e-5, 300], np.float16)
    b = np.array([2, 0.5, 7, 0.5, 300], np.float16)
    with np.errstate(over="ignore"):
        expected = (a.astype(np.float32) * b.astype(np.float32)).astype(np.float16)
    np.testing.assert_array_equal(ctx.lookup_function("h")(a, b), expected)


def test_unknown_cpu_and_malformed_features_are_usage_errors() -> None:
    with pytest.raises(UsageError, match="unknown CPU 'pentium9'"):
        _compile("pentium9")
    with pytest.raises(UsageError, match="'avx2' must be \\+FEATURE or -FEATURE"):
        _compile("host", "avx2")


def test_module_needing_a_missing_feature_fails_to_load_with_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    llvm.initialize_native_target()
    lacking = [f[1:] for f in llvm.get_host_cpu_features().flatten().split(",")
               if f.startswith("-") and f[1:].startswith(("avx", "amx", "sse"))]
    if not lacking:
        pytest.skip("this CPU has every x86 vector feature LLVM knows")
    source = tmp_path / "mul.mlir"
    source.write_text(SRC)
    out = tmp_path / "mul.wvm"
    assert compile_tool.main(["--iree-hal-target-backends=llvm-cpu",
                              f"--iree-llvmcpu-target-cpu-features=+{lacking[0]}",
                              str(source), f"-o={out}"]) == 0
    capsys.readouterr()
    code = run_module.main([f"--module={out}", "--function=mul", "--input=4xf32=1,2,3,4",
                            "--input=4xf32=1,2,3,4"])
    err = capsys.readouterr().err
    assert code == 1
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"needs CPU feature(s) {lacking[0]}" in err
