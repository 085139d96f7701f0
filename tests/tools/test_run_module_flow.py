"""weir-run-module end to end over a stand-in for `weir.runtime.api` (the flags, EXEC line,
result printing, --output and --expected_output), so the tool's
behaviour is pinned independently of the runtime it drives."""

from __future__ import annotations

import types
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest

from weir.errors import InputError
from weir.format.image import Signature
from weir.tools.run_module import main


@dataclass
class FakeFunction:
    signature: Signature
    body: Callable[..., object]
    model: str = "sync"

    @property
    def num_user_args(self) -> int:
        return len(self.signature.args)

    def __call__(self, *args: object) -> object:
        return self.body(*args)


@dataclass
class FakeModule:
    """Like `weir.runtime.vm.module.Module`: `exports` maps names to signature and model."""

    name: str
    functions: dict[str, FakeFunction]

    @property
    def exports(self) -> dict[str, FakeFunction]:
        return self.functions


class FakeContext:
    def __init__(self, instance: object, devices: list[str], modules: list[FakeModule]) -> None:
        self.devices = devices
        self.modules = modules

    def lookup(self, qualified: str) -> FakeFunction:
        module_name, name = qualified.split(".", 1)
        (module,) = [m for m in self.modules if m.name == module_name]
        return module.functions[name]


def make_api(functions: dict[str, FakeFunction], created: list[str] | None = None) -> types.ModuleType:
    api = types.ModuleType("fake_runtime_api")

    class Instance:
        def create_device(self, name: str) -> str:
            if created is not None:
                created.append(name)
            return name

    api.Instance = Instance  # type: ignore[attr-defined]
    api.Context = FakeContext  # type: ignore[attr-defined]
    api.load_module_file = lambda path: FakeModule("module", functions)  # type: ignore[attr-defined]
    api.load_module_bytes = lambda data: FakeModule("module", functions)  # type: ignore[attr-defined]
    api.check_device_count = lambda given, modules: None  # type: ignore[attr-defined]
    return api


def add_one() -> FakeFunction:
    def body(x: np.ndarray) -> np.ndarray:
        if not isinstance(x, np.ndarray) or x.dtype != np.float32:
            raise InputError("input 0: expected a f32 tensor")
        return x + 1
    return FakeFunction(Signature.parse("0r_r"), body)


def run(capsys, argv: list[str], functions: dict[str, FakeFunction] | None = None,  # type: ignore[no-untyped-def]
        created: list[str] | None = None) -> tuple[int, str, str]:
    api = make_api(functions if functions is not None else {"add_one": add_one()}, created)
    code = main(argv, api=api)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_prints_like_iree(capsys) -> None:  # type: ignore[no-untyped-def]
    code, out, err = run(capsys, ["--module=m.wvm", "--function=add_one", "--input=4xf32=1,2,3,4"])
    assert (code, err) == (0, "")
    assert out == "EXEC @add_one\nresult[0]: hal.buffer_view\n4xf32=2 3 4 5\n"


def test_devices_default_and_repeat(capsys) -> None:  # type: ignore[no-untyped-def]
    created: list[str] = []
    run(capsys, ["--module=m.wvm", "--input=4xf32=1"], created=created)
    assert created == ["local-sync"]
    created.clear()
    run(capsys, ["--module=m.wvm", "--device=local-task", "--device=local-task",
                 "--input=4xf32=1"], created=created)
    assert created == ["local-task", "local-task"]


def test_single_export_needs_no_function_flag(capsys) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = run(capsys, ["--module=m.wvm", "--input=2xf32=0"])
    assert code == 0 and out.startswith("EXEC @add_one\n")


def test_function_required_with_several_exports(capsys) -> None:  # type: ignore[no-untyped-def]
    functions = {"a": add_one(), "b": add_one()}
    code, out, err = run(capsys, ["--module=m.wvm"], functions)
    assert code == 1 and out == ""
    assert err == "weir-run-module: error: --function is required: module 'module' exports 2 " \
                  "functions (a, b)\n"


def test_unknown_function_lists_exports(capsys) -> None:  # type: ignore[no-untyped-def]
    code, _, err = run(capsys, ["--module=m.wvm", "--function=nope"])
    assert code == 1
    assert err == "weir-run-module: error: module 'module' has no function 'nope'; it " \
                  "exports: add_one\n"
    code, _, err = run(capsys, ["--module=m.wvm", "--function=other.f"])
    assert err == "weir-run-module: error: function 'other.f': no module 'other' is loaded " \
                  "(loaded: module)\n"


def test_qualified_function_name(capsys) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = run(capsys, ["--module=m.wvm", "--function=module.add_one", "--input=1xf32=1"])
    assert code == 0 and out.startswith("EXEC @module.add_one\n")


def test_runtime_input_errors_print_one_line(capsys) -> None:  # type: ignore[no-untyped-def]
    code, out, err = run(capsys, ["--module=m.wvm", "--input=4xi32=1"])
    assert code == 1 and out == "EXEC @add_one\n"
    assert err == "weir-run-module: error: input 0: expected a f32 tensor\n"


def test_scalars_are_typed_by_the_signature(capsys) -> None:  # type: ignore[no-untyped-def]
    seen: list[object] = []

    def body(a: object, b: object) -> tuple[object, object]:
        seen.extend([a, b])
        return 12, 2.5
    functions = {"f": FakeFunction(Signature.parse("0If_if"), body)}
    code, out, _ = run(capsys, ["--module=m.wvm", "--input=5", "--input=0.1"], functions)
    assert code == 0
    assert seen == [5, float(np.float32(0.1))]
    assert out == "EXEC @f\nresult[0]: i32=12\nresult[1]: f32=2.5\n"


def test_output_files_and_max_element_count(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "r.npy"
    code, out, _ = run(capsys, ["--module=m.wvm", "--input=8xf32=1", f"--output=@{path}"])
    assert code == 0 and out == "EXEC @add_one\n"
    np.testing.assert_array_equal(np.load(path), np.full(8, 2, np.float32))
    code, out, _ = run(capsys, ["--module=m.wvm", "--input=8xf32=1",
                                "--output_max_element_count=3"])
    assert out.endswith("8xf32=2 2 2...\n")
    code, out, _ = run(capsys, ["--module=m.wvm", "--input=2xf32=1", "--output=-"])
    assert out == "EXEC @add_one\nhal.buffer_view\n2xf32=2 2\n"


def test_expected_output_success(capsys) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = run(capsys, ["--module=m.wvm", "--input=4096xf32=3",
                                "--expected_output=4096xf32=4.0"])
    assert code == 0
    assert out == "EXEC @add_one\n[SUCCESS] all function outputs matched their expected values.\n"


def test_expected_output_failure_exits_1(capsys) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = run(capsys, ["--module=m.wvm", "--input=4xf32=1,2,3,4",
                                "--expected_output=4xf32=2,3,4,4"])
    assert code == 1
    assert out.splitlines()[1] == (
        "[FAILED] result[0]: element at index 3 (5) does not match the expected (4); expected "
        "that the view is equal to contents of a view of 4xf32")
    assert "[SUCCESS]" not in out


def test_expected_output_threshold_and_ignored(capsys) -> None:  # type: ignore[no-untyped-def]
    argv = ["--module=m.wvm", "--input=2xf32=1", "--expected_output=2xf32=2.01"]
    assert run(capsys, argv)[0] == 1
    assert run(capsys, argv + ["--expected_f32_threshold=0.1"])[0] == 0
    assert run(capsys, ["--module=m.wvm", "--input=2xf32=1", "--expected_output=(ignored)"])[0] == 0


def test_expected_scalar_results(capsys) -> None:  # type: ignore[no-untyped-def]
    functions = {"f": FakeFunction(Signature.parse("0_I"), lambda: 7)}
    assert run(capsys, ["--module=m.wvm", "--expected_output=7"], functions)[0] == 0
    assert run(capsys, ["--module=m.wvm", "--expected_output=i64=7"], functions)[0] == 0
    code, out, _ = run(capsys, ["--module=m.wvm", "--expected_output=8"], functions)
    assert code == 1 and "[FAILED] result[0]: i64 values differ" in out


@pytest.mark.parametrize("argv,message", [
    ([], "no module given"),
    (["--module=m.wvm", "--bogus"], "unknown flag '--bogus'"),
    (["--module=m.wvm", "--output=x.npy"], "--output 'x.npy'"),
    (["--module=m.wvm", "m2.wvm"], "unexpected argument 'm2.wvm'; give modules as --module=m2.wvm"),
    (["--module=m.wvm", "--output_max_element_count=-1"], "must not be negative"),
])
def test_usage_errors(capsys, argv: list[str], message: str) -> None:  # type: ignore[no-untyped-def]
    code, out, err = run(capsys, argv)
    assert code == 1 and out == ""
    assert err.startswith("weir-run-module: error: ") and message in err
    assert err.count("\n") == 1


def test_help(capsys) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = run(capsys, ["--help"])
    assert code == 0 and "--expected_output=VALUE" in out
