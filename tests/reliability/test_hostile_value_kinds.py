"""Module files with a valid checksum whose VM code uses a value as another kind (issue 17): a
function returning a string constant, a command buffer or a device where its signature promises
a value, a `hal.*` call given a string for a device or a command buffer for a buffer, a tuple
operand given as one register. Each is refused when the module is loaded, with one line naming
the function, the instruction, the operand and what its register holds; a value whose kind only
the run can tell (an executable loaded from a global) is refused when it is returned."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest
from fuzz_corpus import SAMPLES
from fuzz_layout import body_with_metadata, compact, parse_layout, reseal

import weir.api as weir
from weir.errors import ModuleFormatError, RuntimeFault
from weir.runtime.api import Context, Instance, NativeModule, export, load_module_bytes
from weir.runtime.hal.buffer_view import BufferView
from weir.tools.run_module import main as run_module

SIMPLE_MUL = (SAMPLES / "simple_mul" / "simple_mul.mlir").read_text()
A = np.array([1, 2, 3, 4], np.float32)
VALUE = r"a value \(a buffer view, a buffer, a fence, a number or null\)"

_compiled: dict[str, bytes] = {}


def compiled(source: str = SIMPLE_MUL, memoized: bool = False) -> bytes:
    """Without memoization by default: the mutations below edit the per-call recording (command
    buffer creation, dispatch, queue execute), which a memoized module does in its `__init`."""
    key = f"{memoized}:{source}"
    if key not in _compiled:
        _compiled[key] = weir.compile_string(
            source, "m.mlir", weir.CompilerOptions(hal_memoization=memoized))
    return _compiled[key]


Instructions = list[list[Any]]


def with_code(data: bytes, change: Callable[[Instructions], None]) -> bytes:
    """The file with the first function's one block of instructions changed, resealed."""
    layout = parse_layout(data)
    meta = json.loads(compact(layout.metadata))
    change(meta["functions"][0]["blocks"][0]["instructions"])
    return reseal(body_with_metadata(data, layout, compact(meta)))


def dst_of(code: Instructions, callee: str) -> int:
    """The register the first call of `callee` writes."""
    return next(ins[1][0] for ins in code if ins[0] == "call" and ins[2] == callee)


def call_of(code: Instructions, callee: str) -> list[Any]:
    return next(ins for ins in code if ins[0] == "call" and ins[2] == callee)


def string_register(code: Instructions) -> int:
    return next(ins[1] for ins in code if ins[0] == "const" and isinstance(ins[2], str))


def returning(register: Callable[[Instructions], int]) -> Callable[[Instructions], None]:
    def change(code: Instructions) -> None:
        assert code[-1][0] == "return"
        code[-1] = ["return", [register(code)]]
    return change


def run(data: bytes, function: str = "simple_mul", modules: tuple[Any, ...] = ()) -> Any:
    instance = Instance()
    context = Context(instance, devices=[instance.create_device("local-sync")],
                      modules=[*modules, load_module_bytes(data)])
    return context.lookup_function(function)(A, A)


@pytest.mark.parametrize("register, holds", [
    (string_register, "a string constant"),
    (lambda code: dst_of(code, "hal.command_buffer.create"), "a command buffer"),
    (lambda code: dst_of(code, "hal.device.get"), "a device"),
    (lambda code: dst_of(code, "hal.buffer_view.buffer"), None),  # a buffer: a value
])
def test_a_returned_register_must_hold_a_value(register: Callable[[Instructions], int],
                                               holds: str | None) -> None:
    data = with_code(compiled(), returning(register))
    if holds is None:
        assert type(load_module_bytes(data)).__name__ == "BytecodeModule"
        return
    with pytest.raises(ModuleFormatError, match=rf"^function 'simple_mul' block 0 instruction "
                                                rf"\d+: result 0 must be {VALUE}, register \d+ "
                                                rf"holds {holds}$"):
        load_module_bytes(data)


def test_a_returned_executable_is_refused_when_it_is_returned() -> None:
    """What a global holds is known only at run time: the return checks it."""
    global_load = lambda code: next(ins[1] for ins in code if ins[0] == "global_load")  # noqa: E731
    data = with_code(compiled(), returning(global_load))
    with pytest.raises(RuntimeFault, match=rf"^function 'simple_mul' of module 'm': "
                                           rf"result 0 must be {VALUE}, got \w+$"):
        run(data)


def test_the_tool_prints_one_line_instead_of_an_internal_error(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "m.wvm"
    path.write_bytes(with_code(compiled(), returning(string_register)))
    assert run_module([f"--module={path}", "--input=4xf32=1", "--input=4xf32=2"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "internal error" not in err
    assert "result 0 must be a value" in err and "holds a string constant" in err


def _replace_arg(callee: str, n: int, register: Callable[[Instructions], Any]) -> Callable[
        [Instructions], None]:
    def change(code: Instructions) -> None:
        call_of(code, callee)[3][n] = register(code)
    return change


def test_a_memoized_command_buffer_is_submitted_with_buffers() -> None:
    """The memoized form's submission is checked as strictly: its binding table holds buffers."""
    def change(code: Instructions) -> None:
        call_of(code, "hal.device.queue.execute.indirect")[3][4] = [string_register(code)]
    data = with_code(compiled(memoized=True), change)
    with pytest.raises(ModuleFormatError, match=r"each element of argument 4 of "
                                                r"'hal.device.queue.execute.indirect' must be a "
                                                r"buffer, register \d+ holds a string constant"):
        load_module_bytes(data)
    np.testing.assert_array_equal(run(compiled(memoized=True)), A * A)


@pytest.mark.parametrize("change, message", [
    (_replace_arg("hal.allocator.allocate", 0, string_register),
     r"argument 0 of 'hal.allocator.allocate' must be a device, register \d+ holds a string "
     r"constant"),
    (_replace_arg("hal.fence.await", 0, lambda c: dst_of(c, "hal.device.get")),
     r"argument 0 of 'hal.fence.await' must be an integer, register \d+ holds a device"),
    (_replace_arg("hal.command_buffer.dispatch", 5,
                  lambda c: [call_of(c, "hal.command_buffer.dispatch")[3][0]]),
     r"each element of argument 5 of 'hal.command_buffer.dispatch' must be an integer or a "
     r"buffer, register \d+ holds a command buffer"),
    (_replace_arg("hal.fence.await", 1, lambda c: dst_of(c, "hal.fence.create")),
     r"argument 1 of 'hal.fence.await' must be a tuple of a fence, got register \d+"),
    (_replace_arg("hal.buffer_view.create", 0, lambda c: dst_of(c, "hal.fence.create")),
     r"argument 0 of 'hal.buffer_view.create' must be a buffer, register \d+ holds a fence"),
    (_replace_arg("hal.device.queue.execute", 1, string_register),
     r"argument 1 of 'hal.device.queue.execute' must be a fence, register \d+ holds a string "
     r"constant"),
    (_replace_arg("hal.allocator.allocate", 1, lambda c: [string_register(c)]),
     r"argument 1 of 'hal.allocator.allocate' must be an integer, not a tuple"),
])
def test_hal_operands_must_be_of_the_kind_the_hal_module_takes(
        change: Callable[[Instructions], None], message: str) -> None:
    with pytest.raises(ModuleFormatError, match=rf"^function 'simple_mul' block 0 instruction "
                                                rf"\d+: {message}$"):
        load_module_bytes(with_code(compiled(), change))


def test_a_null_wait_fence_is_a_fence() -> None:
    """The compiler passes null for "no wait": null is a value of every reference kind."""
    def null_wait(code: Instructions) -> None:
        assert any(ins[0] == "const" and ins[2] is None for ins in code)
    np.testing.assert_array_equal(run(with_code(compiled(), null_wait)), A * A)


CUSTOM_CALL = """
func.func private @custom.double(tensor<4xf32>) -> tensor<4xf32>
func.func @simple_mul(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = call @custom.double(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""


class Custom(NativeModule):
    module_name = "custom"

    @export("0r_r")
    def double(self, state: None, view: BufferView) -> BufferView:
        return BufferView.from_numpy(view.to_numpy() * 2)


def test_an_argument_of_another_modules_function_must_be_a_value() -> None:
    data = compiled(CUSTOM_CALL)
    np.testing.assert_array_equal(run(data, modules=(Custom(),)), A * 2)
    with pytest.raises(ModuleFormatError, match=rf"argument 0 of 'custom.double' must be "
                                                rf"{VALUE}, register \d+ holds a string "
                                                rf"constant$"):
        load_module_bytes(with_code(data, _replace_arg("custom.double", 0, string_register)))
    # A buffer is a value: it passes, and the callee's own checks judge it.
    buffer = with_code(data, _replace_arg("custom.double", 0,
                                          lambda c: dst_of(c, "hal.buffer_view.buffer")))
    assert type(load_module_bytes(buffer)).__name__ == "BytecodeModule"
