"""Bad run inputs, through `weir-run-module` (in process) and through the Python API: a wrong
shape, type or count of arguments, a malformed `--input`, a missing file, an unknown function, a
missing dependency module, an unknown driver, too few or too many devices. Each is one line that
names what is wrong and where (the function and argument, the flag value, the file, the module),
expected against actual, and exit code 1; never a traceback and never a silently wrong run."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import weir.api as weir
from weir.compiler.options import CompilerOptions, TargetDevice
from weir.errors import InputError, LoadError, ModuleFormatError, UsageError, WeirError
from weir.tools.run_module import main

ROOT = Path(__file__).resolve().parents[2]
MUL = """func.func @simple_mul(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.mulf %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""
SCALARS = "func.func @scale(%n: i32, %x: f32) -> i32 {\n  return %n : i32\n}\n"
TWO_DEVICES = CompilerOptions(target_devices=(TargetDevice("device_a", "local", 0),
                                              TargetDevice("device_b", "local", 1)))


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Module files (one device, scalars, two devices, a program with dependencies) and input
    files (a good .npy, a text file named .npy, a truncated .npy)."""
    d = tmp_path_factory.mktemp("run_inputs")
    (d / "mul.wvm").write_bytes(weir.compile_string(MUL, "mul.mlir"))
    (d / "scalars.wvm").write_bytes(weir.compile_string(SCALARS, "scalars.mlir"))
    two = (ROOT / "samples" / "multi_device" / "multi_device_mul.mlir").read_text()
    (d / "two.wvm").write_bytes(weir.compile_string(two, "two.mlir", TWO_DEVICES))
    for name in ("module_a", "module_b", "pipeline_sync"):
        text = (ROOT / "samples" / "multiple_modules" / f"{name}.mlir").read_text()
        (d / f"{name}.wvm").write_bytes(weir.compile_string(text, f"{name}.mlir"))
    np.save(d / "a.npy", np.ones(4, np.float32))
    (d / "text.npy").write_text("not numpy")
    (d / "trunc.npy").write_bytes((d / "a.npy").read_bytes()[:-3])
    return d


def _run(files: Path, argv: list[str], capsys: pytest.CaptureFixture[str],
         monkeypatch: pytest.MonkeyPatch) -> tuple[int, str, str]:
    monkeypatch.chdir(files)
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


E = "weir-run-module: error: "
TOO_BIG = "holds 3999999992000000004 bytes; a value given as text may hold at most 4294967296 " \
    "(give larger ones as @file.npy)"

# (argv, the error line, whether `EXEC @fn` was printed first: errors found by the call itself)
TOOL_CASES: list[tuple[str, list[str], str, bool]] = [
    # -- shape, type and count of arguments --
    ("wrong shape", ["--module=mul.wvm", "--input=3xf32=1", "--input=4xf32=1"],
     "function 'simple_mul': argument 0 (%input0) expects 4xf32, got 3xf32", True),
    ("wrong rank", ["--module=mul.wvm", "--input=4xf32=1", "--input=2x2xf32=1"],
     "function 'simple_mul': argument 1 (%input1) expects 4xf32, got 2x2xf32", True),
    ("wrong element type", ["--module=mul.wvm", "--input=4xi32=1", "--input=4xf32=1"],
     "function 'simple_mul': argument 0 (%input0) expects 4xf32, got 4xi32", True),
    ("null for a tensor", ["--module=mul.wvm", "--input=(null)", "--input=4xf32=1"],
     "function 'simple_mul': argument 0 (%input0) expects 4xf32, got null", True),
    ("too few arguments", ["--module=mul.wvm", "--input=4xf32=1"],
     "function 'simple_mul' expects 2 argument(s), got 1", True),
    ("too many arguments", ["--module=mul.wvm", "--input=4xf32=1", "--input=4xf32=1",
                            "--input=4xf32=1"],
     "function 'simple_mul' expects 2 argument(s), got 3", True),
    ("number for a tensor", ["--module=mul.wvm", "--input=5", "--input=4xf32=1"],
     "--input '5': argument 0 is a tensor; give a shape and element type (`4x2xf32=...`, or "
     "`f32=2.5` for a 0-d tensor)", False),
    ("float for an i32", ["--module=scalars.wvm", "--input=2.5", "--input=1"],
     "--input '2.5': argument 0 is i32: '2.5' is not an integer", False),
    ("i32 out of range", ["--module=scalars.wvm", "--input=99999999999", "--input=1"],
     "--input '99999999999': argument 0 is i32: 99999999999 is out of range for i32 "
     "[-2147483648, 4294967295]", False),
    ("tensor for a scalar", ["--module=scalars.wvm", "--input=4xf32=1", "--input=1"],
     "--input '4xf32=1': argument 0 is a i32 scalar, not a 4xf32 tensor", False),
    # -- malformed --input values --
    ("too few values", ["--module=mul.wvm", "--input=4xf32=1,2", "--input=4xf32=1"],
     "--input '4xf32=1,2': 2 values given for 4xf32 (4 elements); give 4 values, or one to "
     "fill the shape", False),
    ("unclosed bracket", ["--module=mul.wvm", "--input=4xf32=[1 2", "--input=4xf32=1"],
     "--input '4xf32=[1 2': 2 values given for 4xf32 (4 elements); give 4 values, or one to "
     "fill the shape", False),
    ("unknown element type", ["--module=mul.wvm", "--input=4xq32=1", "--input=4xf32=1"],
     "--input '4xq32=1': unknown element type 'q32' (expected one of i1, i2, i4, i8, i16, "
     "i32, i64, ui8, ui16, ui32, ui64, f16, bf16, f32, f64, f8E5M2, f8E4M3, f8E3M4, f8E4M3FN, "
     "f8E4M3FNUZ, f8E5M2FNUZ, f8E4M3B11FNUZ, f6E2M3FN, f6E3M2FN, f4E2M1FN, f8E8M0FNU)", False),
    ("word for a value", ["--module=mul.wvm", "--input=4xf32=abc", "--input=4xf32=1"],
     "--input '4xf32=abc': 'abc' is not a number", False),
    ("bad dimension", ["--module=mul.wvm", "--input=x4xf32=1", "--input=4xf32=1"],
     "--input 'x4xf32=1': shape dimension 0 '' of 'x4xf32' is not a non-negative integer", False),
    ("no shape", ["--module=mul.wvm", "--input==1", "--input=4xf32=1"],
     "--input '=1': missing shape and element type before '='", False),
    ("empty value", ["--module=mul.wvm", "--input=", "--input=4xf32=1"],
     "--input '': no value given", False),
    ("a word", ["--module=mul.wvm", "--input=hello", "--input=4xf32=1"],
     "--input 'hello': 'hello' is neither a number nor a tensor with a shape and element type "
     "(`4x2xf32=...`, `f32=2.5` for a 0-d tensor)", False),
    ("output storage", ["--module=mul.wvm", "--input=&4xf32", "--input=4xf32=1"],
     "--input '&4xf32': output storage arguments ('&') are not supported by weir", False),
    ("shape too big for memory", ["--module=mul.wvm", "--input=999999999x999999999xf32=1",
                                  "--input=4xf32=1"],
     f"--input '999999999x999999999xf32=1': 999999999x999999999xf32 {TOO_BIG}", False),
    # -- files --
    ("missing .npy", ["--module=mul.wvm", "--input=@missing.npy", "--input=4xf32=1"],
     "--input '@missing.npy': cannot read 'missing.npy': No such file or directory", False),
    ("text named .npy", ["--module=mul.wvm", "--input=@text.npy", "--input=4xf32=1"],
     "--input '@text.npy': 'text.npy' is not a numpy .npy array (bad magic)", False),
    ("truncated .npy", ["--module=mul.wvm", "--input=@trunc.npy", "--input=4xf32=1"],
     "--input '@trunc.npy': 'trunc.npy' is not a readable .npy array: its header promises 16 "
     "bytes of data, the file has 13", False),
    ("no arrays left", ["--module=mul.wvm", "--input=@a.npy", "--input=+a.npy"],
     "--input '+a.npy': 'a.npy' has no more arrays (read 1)", False),
    (".npy read as raw data", ["--module=mul.wvm", "--input=4xf32=@a.npy", "--input=4xf32=1"],
     "--input '4xf32=@a.npy': 'a.npy' is a numpy .npy file, not raw data: give it without a "
     "shape and type (`@a.npy`)", False),
    ("missing raw file", ["--module=mul.wvm", "--input=4xf32=@missing.bin", "--input=4xf32=1"],
     "--input '4xf32=@missing.bin': cannot read 'missing.bin': No such file or directory", False),
    ("missing module", ["--module=missing.wvm"],
     "missing.wvm: cannot read module file: No such file or directory", False),
    ("missing Python module", ["--module=python:missing.py:X"],
     "python module 'python:missing.py:X': no such file 'missing.py'", False),
    ("module given as a positional", ["mul.wvm"],
     "unexpected argument 'mul.wvm'; give modules as --module=mul.wvm", False),
    ("no module", [], "no module given; use --module=file.wvm (or --module=- for stdin)", False),
    # -- functions and modules --
    ("unknown function", ["--module=mul.wvm", "--function=nope"],
     "module 'mul' has no function 'nope'; it exports: simple_mul", False),
    ("function of an unknown module", ["--module=mul.wvm", "--function=other.simple_mul"],
     "function 'other.simple_mul': no module 'other' is loaded (loaded: mul)", False),
    ("empty function name", ["--module=mul.wvm", "--function="],
     "--function needs a function name", False),
    ("missing dependency", ["--module=pipeline_sync.wvm", "--input=4096xf32=1"],
     "module 'pipeline_sync' depends on module 'module_a', which is not loaded: pass it with "
     "--module before 'pipeline_sync'", False),
    ("second dependency missing", ["--module=module_a.wvm", "--module=pipeline_sync.wvm",
                                   "--input=4096xf32=1"],
     "module 'pipeline_sync' depends on module 'module_b', which is not loaded: pass it with "
     "--module before 'pipeline_sync'", False),
    # -- devices --
    ("unknown driver", ["--module=mul.wvm", "--device=nope"],
     "unknown device driver 'nope' (available: local-sync, local-task)", False),
    ("too few devices", ["--module=two.wvm", "--device=local-sync", "--input=4xf32=1"],
     "module 'two' was compiled for 2 device(s) (device_a, device_b) but 1 was given: device "
     "'device_b' has none bound (pass --device once per device, in order)", False),
    ("too many devices", ["--module=mul.wvm", "--device=local-sync", "--device=local-task",
                          "--input=4xf32=1", "--input=4xf32=1"],
     "2 devices were given but the modules were compiled for 1 (__device_0): pass one --device "
     "per device the modules use, in order", False),
]


@pytest.mark.parametrize("argv, message, executed", [c[1:] for c in TOOL_CASES],
                         ids=[c[0] for c in TOOL_CASES])
def test_run_module_reports_one_line_and_exits_1(
        files: Path, argv: list[str], message: str, executed: bool,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, err = _run(files, argv, capsys, monkeypatch)
    assert code == 1
    assert err == E + message + "\n"
    assert out == ("EXEC @simple_mul\n" if executed else "")


def test_the_same_flags_run_when_they_are_right(
        files: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The cases above fail for the reason they name: corrected, each command runs."""
    code, out, err = _run(files, ["--module=mul.wvm", "--input=@a.npy", "--input=4xf32=3"],
                          capsys, monkeypatch)
    assert (code, err) == (0, "") and out.endswith("4xf32=3 3 3 3\n")
    code, out, err = _run(files, ["--module=two.wvm", "--device=local-sync",
                                  "--device=local-sync", "--input=4xf32=1"], capsys, monkeypatch)
    assert (code, err) == (0, "")
    code, out, err = _run(files, ["--module=module_a.wvm", "--module=module_b.wvm",
                                  "--module=pipeline_sync.wvm", "--input=4096xf32=-2"],
                          capsys, monkeypatch)
    assert (code, err) == (0, "")


# -- the Python API ------------------------------------------------------------------------------

A = np.ones(4, np.float32)


def _mul(files: Path) -> weir.Function:
    return weir.load([files / "mul.wvm"]).lookup_function("simple_mul")


def _scale(files: Path) -> weir.Function:
    return weir.load([files / "scalars.wvm"]).lookup_function("scale")


API_CASES: list[tuple[str, Callable[[Path], Any], type[WeirError], str]] = [
    ("wrong shape", lambda f: _mul(f)(np.ones(3, np.float32), A), InputError,
     "function 'simple_mul': argument 0 (%input0) expects 4xf32, got 3xf32"),
    ("wrong element type", lambda f: _mul(f)(A, np.ones(4)), InputError,
     "function 'simple_mul': argument 1 (%input1) expects 4xf32, got 4xf64"),
    ("a list for a tensor", lambda f: _mul(f)([1, 2, 3, 4], A), InputError,
     "function 'simple_mul': argument 0 (%input0) expects 4xf32, got a list"),
    ("None for a tensor", lambda f: _mul(f)(None, A), InputError,
     "function 'simple_mul': argument 0 (%input0) expects 4xf32, got null"),
    ("too few arguments", lambda f: _mul(f)(A), InputError,
     "function 'simple_mul' expects 2 argument(s), got 1"),
    ("too many arguments", lambda f: _mul(f)(A, A, A), InputError,
     "function 'simple_mul' expects 2 argument(s), got 3"),
    ("float for an i32", lambda f: _scale(f)(2.5, 1.0), InputError,
     "function 'scale': argument 0 (%input0) expects i32, got float 2.5"),
    ("string for an f32", lambda f: _scale(f)(1, "x"), InputError,
     "function 'scale': argument 1 (%input1) expects f32, got str 'x'"),
    ("unknown function", lambda f: weir.load([f / "mul.wvm"]).lookup_function("nope"), LoadError,
     "module 'mul' has no function 'nope' (exports: simple_mul)"),
    ("unknown module", lambda f: weir.load([f / "mul.wvm"]).lookup("other.simple_mul"), LoadError,
     "no module 'other' in the context (loaded: hal, mul)"),
    ("missing module file", lambda f: weir.load([f / "missing.wvm"]), ModuleFormatError,
     "{files}/missing.wvm: cannot read module file: No such file or directory"),
    ("missing dependency", lambda f: weir.load([f / "module_a.wvm", f / "pipeline_sync.wvm"]),
     LoadError, "module 'pipeline_sync' depends on module 'module_b', which is not loaded: pass "
     "it with --module before 'pipeline_sync'"),
    ("unknown driver", lambda f: weir.load([f / "mul.wvm"], device="nope"), LoadError,
     "unknown device driver 'nope' (available: local-sync, local-task)"),
    ("too few devices", lambda f: weir.load([f / "two.wvm"], device="local-sync"), LoadError,
     "module 'two' was compiled for 2 device(s) (device_a, device_b) but 1 was given: device "
     "'device_b' has none bound (pass --device once per device, in order)"),
    ("too many devices", lambda f: weir.load([f / "mul.wvm"], device=["local-sync"] * 3),
     LoadError, "3 devices were given but the modules were compiled for 1 (__device_0): pass one "
     "--device per device the modules use, in order"),
    ("not a module", lambda f: weir.load([42]), UsageError,
     "modules[0]: expected module bytes, a module file path or a loaded or native module, got int"),
    ("not a driver name", lambda f: weir.load([f / "mul.wvm"], device=3), UsageError,
     "device: expected a driver name or a list of them, got 3"),
]


@pytest.mark.parametrize("call, error, message", [c[1:] for c in API_CASES],
                         ids=[c[0] for c in API_CASES])
def test_api_raises_one_line_weir_errors(files: Path, call: Callable[[Path], Any],
                                         error: type[WeirError], message: str) -> None:
    with pytest.raises(WeirError) as info:
        call(files)
    assert type(info.value) is error
    assert str(info.value) == message.replace("{files}", str(files))


def test_a_rejected_call_leaves_the_function_usable(files: Path) -> None:
    run = _mul(files)
    with pytest.raises(InputError):
        run(np.ones(3, np.float32), A)
    np.testing.assert_array_equal(run(A, np.full(4, 2, np.float32)), np.full(4, 2, np.float32))
