"""llvm-cpu's microkernel objects kept on disk between compilations (kernel_cache.py): an entry is
built once and read back byte for byte; a damaged entry is rebuilt, never used; a directory that
cannot be written (a file in its place, a full disk) leaves the compile as it is; any input of the object names another entry; and a
module compiled from a cache entry is the one compiled without a cache."""

from __future__ import annotations

from pathlib import Path

import pytest

import weir.api as weir
from weir.compiler.options import default_kernel_cache_dir
from weir.compiler.targets.llvm_cpu.gemm_calls import gemm_object
from weir.compiler.targets.llvm_cpu import kernel_cache
from weir.compiler.targets.llvm_cpu.kernel_cache import cached_object, entry_name
from weir.compiler.targets.llvm_cpu.machine import resolve_cpu
from weir.compiler.targets.llvm_cpu.object_code import object_key
from weir.errors import UsageError
from weir.tools import compile as compile_tool


class _Builds:
    """A build that counts its calls."""

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.calls = 0

    def __call__(self) -> bytes:
        self.calls += 1
        return self.body


def test_an_entry_is_built_once_and_read_back(tmp_path: Path) -> None:
    build = _Builds(b"\x7fELF object")
    assert cached_object(tmp_path, ("ir", "cpu"), build) == b"\x7fELF object"
    assert cached_object(tmp_path, ("ir", "cpu"), build) == b"\x7fELF object"
    assert build.calls == 1
    assert [p.name for p in tmp_path.iterdir()] == [entry_name(("ir", "cpu"))]


@pytest.mark.parametrize("damage", ["truncated", "flipped", "empty", "foreign"])
def test_a_damaged_entry_is_rebuilt_and_replaced(tmp_path: Path, damage: str) -> None:
    cached_object(tmp_path, ("ir",), _Builds(b"object bytes"))
    path = tmp_path / entry_name(("ir",))
    data = path.read_bytes()
    path.write_bytes({"truncated": data[:-3], "flipped": data[:-1] + b"X", "empty": b"",
                      "foreign": b"\x7fELF" + data[4:]}[damage])
    build = _Builds(b"object bytes")
    assert cached_object(tmp_path, ("ir",), build) == b"object bytes"
    assert build.calls == 1
    assert path.read_bytes() == data  # written again, whole


def test_no_directory_builds_every_time() -> None:
    build = _Builds(b"object")
    assert cached_object(None, ("ir",), build) == cached_object(None, ("ir",), build)
    assert build.calls == 2


def test_a_failed_write_leaves_no_entry_and_no_temporary_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def full_disk(*_: object) -> None:
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(kernel_cache.os, "replace", full_disk)
    build = _Builds(b"object")
    assert cached_object(tmp_path, ("ir",), build) == b"object"
    assert build.calls == 1 and list(tmp_path.iterdir()) == []


def test_a_file_where_the_directory_should_be_only_costs_the_build(tmp_path: Path) -> None:
    (tmp_path / "kernels").write_text("not a directory")
    build = _Builds(b"object")
    assert cached_object(tmp_path / "kernels", ("ir",), build) == b"object"
    assert build.calls == 1 and (tmp_path / "kernels").read_text() == "not a directory"


def test_every_input_of_the_object_names_another_entry() -> None:
    host = resolve_cpu("host")
    base = object_key("define void @f() { ret void }", host)
    other_ir = object_key("define void @g() { ret void }", host)
    other_cpu = object_key("define void @f() { ret void }", resolve_cpu("x86-64-v2"))
    names = {entry_name(base), entry_name(other_ir), entry_name(other_cpu)}
    assert len(names) == 3
    # Parts are length-prefixed: moving a boundary between two parts changes the name.
    assert entry_name(("ab", "c")) != entry_name(("a", "bc"))


SRC = """
func.func @mm(%a: tensor<16x64xf32>, %b: tensor<64x32xf32>) -> tensor<16x32xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x32xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<16x32xf32>) -> tensor<16x32xf32>
  %r = linalg.matmul ins(%a, %b : tensor<16x64xf32>, tensor<64x32xf32>)
                     outs(%c : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %r : tensor<16x32xf32>
}"""


def _compile(cache: Path | None) -> bytes:
    gemm_object.cache_clear()  # this process's own cache: make the compile use the disk
    options = weir.CompilerOptions(target_backends=("llvm-cpu",), kernel_cache_dir=cache)
    return weir.compile_string(SRC, "mm.mlir", options)


def test_a_module_from_a_cache_entry_is_the_one_compiled_without_a_cache(tmp_path: Path) -> None:
    without = _compile(None)
    assert not any(tmp_path.iterdir())
    first = _compile(tmp_path)
    entries = list(tmp_path.iterdir())
    assert len(entries) == 1 and entries[0].suffix == ".o"
    assert _compile(tmp_path) == first == without


def test_the_api_takes_a_path_string_or_none_and_rejects_anything_else(tmp_path: Path) -> None:
    gemm_object.cache_clear()
    options = weir.CompilerOptions(target_backends=("llvm-cpu",), kernel_cache_dir=str(tmp_path))
    weir.compile_string(SRC, "mm.mlir", options)
    assert len(list(tmp_path.iterdir())) == 1
    with pytest.raises(UsageError, match="^kernel_cache_dir: expected a directory path or None, "
                                         "got int$"):
        weir.compile_string(SRC, "mm.mlir", weir.CompilerOptions(
            target_backends=("llvm-cpu",), kernel_cache_dir=5))  # type: ignore[arg-type]


def test_the_flag_names_the_directory_or_turns_the_cache_off() -> None:
    parse = compile_tool.PARSER.parse
    options = compile_tool.options_from_flags(parse(["x.mlir"]))
    assert options.kernel_cache_dir == default_kernel_cache_dir()
    options = compile_tool.options_from_flags(
        parse(["--weir-llvmcpu-kernel-cache-dir=/tmp/k", "x.mlir"]))
    assert options.kernel_cache_dir == Path("/tmp/k")
    options = compile_tool.options_from_flags(parse(["--weir-llvmcpu-kernel-cache-dir=", "x.mlir"]))
    assert options.kernel_cache_dir is None
