"""Modules written in Python (`NativeModule` subclasses) loaded by weir-run-module with
`--module=python:path/to/file.py:ClassName`, and `load_python_module`'s one-line errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import weir.api as weir
from weir.errors import LoadError, RuntimeFault
from weir.format.image import Block, ExportDef, FunctionDef, ImportDef, ModuleImage, Signature
from weir.format.module_file import serialize
from weir.format.vm_isa import Call, Return
from weir.runtime.api import Context, Instance
from weir.runtime.vm.native_module import NativeModule
from weir.runtime.vm.python_module_loader import load_python_module
from weir.tools.run_module import main

CUSTOM_OPS = Path(__file__).parent / "Inputs" / "python_modules" / "custom_ops.py"
PREFIX = "weir-run-module: error: "


def spec(class_name: str, path: Path | str = CUSTOM_OPS) -> str:
    return f"python:{path}:{class_name}"


def run(capsys, argv: list[str]) -> tuple[int, str, str]:  # type: ignore[no-untyped-def]
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def run_error(capsys, argv: list[str]) -> str:  # type: ignore[no-untyped-def]
    """Runs a command that must fail with one error line (no traceback); returns the message."""
    code, _, err = run(capsys, argv)
    assert code == 1
    assert err.startswith(PREFIX) and err.count("\n") == 1, err
    assert "Traceback" not in err
    return err[len(PREFIX):-1]


# --- running Python modules -----------------------------------------------------------------


def test_sync_export_prints_like_iree(capsys) -> None:  # type: ignore[no-untyped-def]
    code, out, err = run(capsys, [f"--module={spec('Doubler')}", "--function=double",
                                  "--input=4xf32=1,2,3,4"])
    assert (code, err) == (0, "")
    assert out == "EXEC @double\nresult[0]: hal.buffer_view\n4xf32=2 4 6 8\n"


def test_exported_name_and_scalar_argument(capsys) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = run(capsys, [f"--module={spec('Doubler')}", "--function=doubler.scale",
                                "--input=4xf32=1,2,3,4", "--input=0.5"])
    assert code == 0
    assert out == "EXEC @doubler.scale\nresult[0]: hal.buffer_view\n4xf32=0.5 1 1.5 2\n"


def test_expected_output(capsys) -> None:  # type: ignore[no-untyped-def]
    argv = [f"--module={spec('Doubler')}", "--function=double", "--input=4xf32=1,2,3,4"]
    code, out, _ = run(capsys, argv + ["--expected_output=4xf32=2,4,6,8"])
    assert code == 0
    assert out == "EXEC @double\n[SUCCESS] all function outputs matched their expected values.\n"
    code, out, _ = run(capsys, argv + ["--expected_output=4xf32=2,4,6,9"])
    assert code == 1 and "[FAILED] result[0]: element at index 3 (8)" in out


def test_single_export_needs_no_function_flag(capsys) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = run(capsys, [f"--module={spec('Counter')}"])
    assert code == 0 and out == "EXEC @count\nresult[0]: i32=1\n"


def test_state_is_per_context(capsys) -> None:  # type: ignore[no-untyped-def]
    # Every run of the tool is a new context: the counter starts again.
    for _ in range(2):
        assert run(capsys, [f"--module={spec('Counter')}", "--expected_output=1"])[0] == 0
    # One module object, two contexts: each context has its own state.
    module = load_python_module(spec("Counter"))
    instance = Instance()
    first = Context(instance, devices=[instance.create_device("local-sync")], modules=[module])
    second = Context(instance, devices=[instance.create_device("local-sync")], modules=[module])
    assert [first.lookup("counter.count")() for _ in range(3)] == [1, 2, 3]
    assert second.lookup("counter.count")() == 1
    assert first.lookup("count")() == 4


def test_python_module_goes_in_module_order(capsys, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A module file importing `doubler.double` links against the Python module loaded before
    it, exactly as it would against a module file."""
    run_fn = FunctionDef("run", Signature.parse("0r_r"), 2,
                         (Block((0,), (Call((1,), "doubler.double", (0,)), Return((1,)))),))
    pipeline = ModuleImage(name="pipeline", dependencies=("doubler",),
                           imports=(ImportDef("doubler.double", Signature.parse("0r_r")),),
                           exports=(ExportDef("run", 0),), functions=(run_fn,))
    wvm = tmp_path / "pipeline.wvm"
    wvm.write_bytes(serialize(pipeline))
    code, out, _ = run(capsys, [f"--module={spec('Doubler')}", f"--module={wvm}",
                                "--input=3xi32=1,2,3"])
    assert code == 0 and out == "EXEC @run\nresult[0]: hal.buffer_view\n3xi32=2 4 6\n"
    message = run_error(capsys, [f"--module={wvm}", f"--module={spec('Doubler')}",
                                 "--input=3xi32=1,2,3"])
    assert "depends on module 'doubler', which is not loaded" in message


def test_exceptions_in_exports_are_one_line_runtime_faults(capsys) -> None:  # type: ignore[no-untyped-def]
    message = run_error(capsys, [f"--module={spec('Faulty')}", "--input=2xf32=1"])
    assert message == "faulty.explode: ValueError: no such luck"


def test_a_result_that_is_not_what_the_signature_declares_names_the_export(
        capsys, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Called by the tool, or by a compiled program importing it: one line naming the export
    (not `hal.buffer_view.dim`, the program's next use of the value, nor an internal error)."""
    expected = ("custom.foo: returned numpy.ndarray where its signature 0r_r declares a "
                "reference ('r': a BufferView, Buffer, Fence or None) (result 0); wrap a numpy "
                "array with BufferView.from_numpy")
    assert run_error(capsys, [f"--module={spec('ReturnsArray')}", "--function=foo",
                              "--input=2xf32=1"]) == expected
    source = """
    func.func private @custom.foo(tensor<?xf32>) -> tensor<?xf32>
    func.func @main(%a: tensor<?xf32>) -> tensor<?xf32> {
      %0 = call @custom.foo(%a) : (tensor<?xf32>) -> tensor<?xf32>
      return %0 : tensor<?xf32>
    }"""
    program = tmp_path / "program.wvm"
    program.write_bytes(weir.compile_string(source, "program.mlir"))
    assert run_error(capsys, [f"--module={spec('ReturnsArray')}", f"--module={program}",
                              "--input=2xf32=1"]) == expected


def test_coarse_fences_export_through_the_api() -> None:
    module = load_python_module(spec("AsyncTripler"))
    instance = Instance()
    context = Context(instance, devices=[instance.create_device("local-sync")], modules=[module])
    triple = context.lookup("async_tripler.triple")
    assert triple.model == "coarse-fences" and triple.num_user_args == 1
    assert triple(np.array([1, 2], np.int32)).tolist() == [3, 6]
    with pytest.raises(RuntimeFault, match="the device caught fire"):
        context.lookup("async_tripler.fail")(np.array([1], np.int32))


def test_coarse_fences_export_through_the_tool(capsys) -> None:  # type: ignore[no-untyped-def]
    """The tool gives the export a reached wait fence and a fresh signal fence (through
    `Function`) and waits on the signal fence before printing."""
    code, out, err = run(capsys, [f"--module={spec('AsyncTripler')}", "--function=triple",
                                  "--input=2xi32=1,2"])
    assert (code, err) == (0, "")
    assert out == "EXEC @triple\nresult[0]: hal.buffer_view\n2xi32=3 6\n"


def test_coarse_fences_failed_signal_fence_through_the_tool(capsys) -> None:  # type: ignore[no-untyped-def]
    message = run_error(capsys, [f"--module={spec('AsyncTripler')}", "--function=fail",
                                 "--input=2xi32=1,2"])
    assert message == "async_tripler.fail: the device caught fire"


# --- loading errors: one line naming the spec, exit code 1 -----------------------------------


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_load_python_module_returns_an_instance() -> None:
    module = load_python_module(spec("Doubler"))
    assert isinstance(module, NativeModule) and module.name == "doubler"
    assert sorted(module.exports) == ["double", "scale"]
    # The `python:` prefix is optional for the Python API.
    assert load_python_module(f"{CUSTOM_OPS}:Counter").name == "counter"


@pytest.mark.parametrize("module_spec,expected", [
    ("python:custom_ops.py", "expected python:path/to/file.py:ClassName (':ClassName' is missing)"),
    ("python:custom_ops.py:", "expected python:path/to/file.py:ClassName (':ClassName' is missing)"),
    ("python::Doubler", "expected python:path/to/file.py:ClassName (the file path is missing)"),
    ("python:custom_ops.py:not-a-name", "'not-a-name' is not a Python class name"),
])
def test_malformed_spec(capsys, module_spec: str, expected: str) -> None:  # type: ignore[no-untyped-def]
    message = run_error(capsys, [f"--module={module_spec}"])
    assert message.startswith(f"python module '{module_spec}': ") and expected in message


def test_missing_file(capsys, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    missing = tmp_path / "missing.py"
    message = run_error(capsys, [f"--module={spec('Doubler', missing)}"])
    assert message == f"python module '{spec('Doubler', missing)}': no such file '{missing}'"


def test_not_a_py_file(capsys, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    text = write(tmp_path, "ops.txt", "class Doubler: pass\n")
    message = run_error(capsys, [f"--module={spec('Doubler', text)}"])
    assert message == (f"python module '{spec('Doubler', text)}': '{text}' is not a .py file "
                       "(expected python:path/to/file.py:ClassName)")
    directory = tmp_path / "package.py"
    directory.mkdir()
    assert run_error(capsys, [f"--module={spec('X', directory)}"]).endswith(
        f"'{directory}' is not a file")


@pytest.mark.parametrize("source,expected", [
    ("import math\n\nvalue = 1 / 0\n", "raised ZeroDivisionError: division by zero (at {}:3)"),
    ("def helper():\n    raise KeyError('k')\n\nhelper()\n", "raised KeyError: 'k' (at {}:2)"),
    ("import no_such_module_for_weir_tests\n",
     "raised ModuleNotFoundError: No module named 'no_such_module_for_weir_tests' (at {}:1)"),
    ("x = 1\ndef f(:\n    pass\n", "raised SyntaxError: invalid syntax (at {}:2)"),
    ("raise ValueError('first\\nsecond')\n", "raised ValueError: first second (at {}:1)"),
    ("import sys\nsys.exit(3)\n", "raised SystemExit: 3 (at {}:2)"),
])
def test_file_raising_on_import(capsys, tmp_path: Path, source: str, expected: str) -> None:  # type: ignore[no-untyped-def]
    path = write(tmp_path, "broken_ops.py", source)
    message = run_error(capsys, [f"--module={spec('Doubler', path)}"])
    assert message == (f"python module '{spec('Doubler', path)}': importing '{path}' "
                       + expected.format(path))


def test_missing_class_lists_the_native_modules_defined(capsys, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    message = run_error(capsys, [f"--module={spec('Tripler')}"])
    assert message == (
        f"python module '{spec('Tripler')}': '{CUSTOM_OPS}' has no class 'Tripler'; the "
        "NativeModule subclasses it defines: Doubler, Counter, AsyncTripler, Faulty, "
        "ReturnsArray, BrokenInit, NoSuperInit, NeedsArgument, NoName")
    empty = write(tmp_path, "empty.py", "from weir.runtime.vm.native_module import NativeModule\n")
    message = run_error(capsys, [f"--module={spec('NativeModul', empty)}"])
    assert message.endswith("has no class 'NativeModul'; it defines no NativeModule subclass")


@pytest.mark.parametrize("name,expected", [
    ("Plain", "'Plain' is not a subclass of weir.runtime.vm.native_module.NativeModule"),
    ("helper", "'helper' is a function, not a subclass of "
               "weir.runtime.vm.native_module.NativeModule"),
    ("LIMIT", "'LIMIT' is an int value, not a subclass of "
              "weir.runtime.vm.native_module.NativeModule"),
])
def test_not_a_native_module(capsys, name: str, expected: str) -> None:  # type: ignore[no-untyped-def]
    assert run_error(capsys, [f"--module={spec(name)}"]) == \
        f"python module '{spec(name)}': {expected}"


@pytest.mark.parametrize("name,expected", [
    ("BrokenInit", "BrokenInit() raised RuntimeError: cannot open the device (at {}:{})"),
    ("NeedsArgument", "NeedsArgument() raised TypeError: NeedsArgument.__init__() missing 1 "
                      "required positional argument: 'path'; the class is constructed with no "
                      "arguments"),
    ("NoName", "NoName() raised TypeError: NoName.module_name must be a non-empty name without "
               "'.'"),
    ("NoSuperInit", "NoSuperInit.__init__ must call super().__init__()"),
])
def test_constructor_errors(capsys, name: str, expected: str) -> None:  # type: ignore[no-untyped-def]
    assert run_error(capsys, [f"--module={spec(name)}"]) == \
        f"python module '{spec(name)}': {expected.format(CUSTOM_OPS, _line_of(RAISE_LINE))}"


RAISE_LINE = 'raise RuntimeError("cannot open the device")'


def _line_of(text: str) -> int:
    lines = CUSTOM_OPS.read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


def test_loader_raises_load_error_chained_to_the_cause(tmp_path: Path) -> None:
    path = write(tmp_path, "ops.py", "raise OSError('disk on fire')\n")
    with pytest.raises(LoadError) as info:
        load_python_module(f"python:{path}:X")
    assert isinstance(info.value.__cause__, OSError)


def test_each_load_imports_the_file_afresh(tmp_path: Path) -> None:
    path = write(tmp_path, "versioned.py", (
        "from weir.runtime.vm.native_module import NativeModule\n"
        "class Versioned(NativeModule):\n    module_name = 'v1'\n"))
    assert load_python_module(f"python:{path}:Versioned").name == "v1"
    # (a different length, so a cached .pyc from the same second cannot be mistaken for it)
    path.write_text(path.read_text().replace("v1", "second"))
    assert load_python_module(f"python:{path}:Versioned").name == "second"
