"""weir-compile's device flags (`--iree-hal-target-device`, `--iree-hal-local-target-device-backends`)
and the runtime's in-order binding of `--device` to the devices a module was compiled for."""

from __future__ import annotations

from pathlib import Path

import pytest

from weir.compiler.options import TargetDevice
from weir.errors import UsageError
from weir.tools import compile as compile_tool
from weir.tools import run_module

PROGRAM = """
func.func @double(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %x, %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""


def options(*argv: str):  # type: ignore[no-untyped-def]
    return compile_tool.options_from_flags(compile_tool.PARSER.parse([*argv, "x.mlir"]))


def test_named_and_unnamed_devices_in_order() -> None:
    opts = options("--iree-hal-target-device=device_a=local[0]",
                   "--iree-hal-target-device=device_b=local[1]", "--iree-hal-target-device=local",
                   "--iree-hal-local-target-device-backends=vmvx")
    assert opts.target_devices == (TargetDevice("device_a", "local", 0),
                                   TargetDevice("device_b", "local", 1),
                                   TargetDevice("__device_2", "local", 0))
    assert opts.target_backends == ("vmvx",)


@pytest.mark.parametrize("argv, message", [
    (["--iree-hal-target-device=cuda"], "device kind 'cuda' is not supported"),
    (["--iree-hal-target-device=a=local[x]"], r"expected NAME=local\[N\], local\[N\] or local"),
    (["--iree-hal-target-device=a=local", "--iree-hal-target-device=a=local[1]"],
     "device 'a' is named twice"),
    (["--iree-hal-local-target-device-backends=vmvx"], "needs --iree-hal-target-device"),
])
def test_bad_device_flags_name_the_flag(argv: list[str], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        options(*argv)


def test_devices_bind_in_order_and_a_missing_one_is_named(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    source = tmp_path / "two.mlir"
    source.write_text(PROGRAM)
    module = tmp_path / "two.wvm"
    assert compile_tool.main([str(source), "--iree-hal-target-device=device_a=local[0]",
                              "--iree-hal-target-device=device_b=local[1]",
                              "--iree-hal-local-target-device-backends=vmvx",
                              f"-o={module}"]) == 0
    run = [f"--module={module}", "--function=double", "--input=4xf32=1,2,3,4"]
    assert run_module.main([*run, "--device=local-task", "--device=local-sync"]) == 0
    assert capsys.readouterr().out.endswith("4xf32=2 4 6 8\n")
    assert run_module.main([*run, "--device=local-task"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "device 'device_b' has none bound" in err
    assert "compiled for 2 device(s) (device_a, device_b) but 1 was given" in err
