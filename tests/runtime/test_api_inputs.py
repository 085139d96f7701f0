"""Arrays passed to `Function.__call__` (issue 17): a big-endian or strided array is taken in
the host's order by its one copy into a device buffer, and an array of the wrong shape or
element type is refused before anything is copied, with the message the program's own check
(`hal.buffer_view.assert`) gives."""

from __future__ import annotations

import dataclasses
import tracemalloc

import numpy as np
import pytest
from runtime_builders import mul_module

from weir.errors import InputError
from weir.runtime.abi_tensors import TensorType, declared_tensor_types
from weir.runtime.api import (
    BufferView,
    BytecodeModule,
    Context,
    Function,
    Instance,
    NativeModule,
    export,
)

DECLARATION = ("sync func @mul(%input0: tensor<4xf32>, %input1: tensor<4xf32>) -> "
               "(%output0: tensor<4xf32>)")
ONES = np.ones(4, np.float32)


def _mul(declared: bool = True) -> Function:
    image = mul_module()
    if declared:
        export = dataclasses.replace(image.exports[0], reflection=(
            ("iree.abi.declaration", DECLARATION),))
        image = dataclasses.replace(image, exports=(export,))
    instance = Instance()
    context = Context(instance, devices=[instance.create_device("local-sync")],
                      modules=[BytecodeModule(image)])
    return context.lookup("module.mul")


@pytest.mark.parametrize("array", [
    np.arange(4, dtype=">f4"),                         # big-endian (a `>f4` npy file)
    np.arange(8, dtype=">f4")[::2] / 2,               # big-endian and strided
    np.arange(8, dtype="<f4")[::2] / 2,               # strided
    np.asfortranarray(np.arange(4, dtype=">f4").reshape(4, 1)).reshape(4),
])
@pytest.mark.parametrize("declared", [True, False])
def test_big_endian_and_strided_arrays_are_copied_in_host_order(array: np.ndarray,
                                                                declared: bool) -> None:
    out = _mul(declared)(array, ONES * 2)
    assert out.dtype == np.float32 and out.dtype.isnative
    np.testing.assert_array_equal(out, np.asarray(array, np.float32) * 2)


@pytest.mark.parametrize("declared", [True, False])
def test_a_wrong_input_gives_the_programs_own_message(declared: bool) -> None:
    """With the declaration the API says it before copying; without, the program's assert
    says the same after."""
    mul = _mul(declared)
    with pytest.raises(InputError, match=r"^function 'mul': argument 1 \(%input1\) expects "
                                         r"4xf32, got 3xf32$"):
        mul(ONES, np.ones(3, np.float32))
    with pytest.raises(InputError, match=r"^function 'mul': argument 0 \(%input0\) expects "
                                         r"4xf32, got 4xf64$"):
        mul(np.ones(4, ">f8"), ONES)


def test_a_wrong_input_is_refused_before_anything_is_copied() -> None:
    """A 4 TiB (read-only, zero-stride) view of one float would need 4 TiB to copy; a wrong
    64 MiB array is refused without allocating anything like its size."""
    mul = _mul()
    huge = np.broadcast_to(np.float32(1), (1 << 40,))
    with pytest.raises(InputError, match=r"expects 4xf32, got 1099511627776xf32$"):
        mul(huge, ONES)
    big = np.ones(1 << 24, np.float32)
    tracemalloc.start()
    try:
        with pytest.raises(InputError, match="got 16777216xf32"):
            mul(ONES, big)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < big.nbytes // 16


def test_declared_tensor_types_read_the_declaration() -> None:
    text = ("sync func @f(%input0: tensor<4x?xf32>, %input1: i8, %input2: tensor<i1> "
            "{iree.abi.affinity = #hal.device.promise<@a>}, %input3: tensor<2xcomplex<f32>>, "
            "%input4: tensor<2xindex>, %input5: tensor<8xbf16>) -> (%output0: tensor<4xf32>)")
    assert declared_tensor_types({"iree.abi.declaration": text}, 6) == (
        TensorType("f32", (4, -1)), None, TensorType("i1", ()), None, None,
        TensorType("bf16", (8,)))
    assert declared_tensor_types({}, 2) == (None, None)
    assert str(TensorType("f32", (4, -1))) == "4x?xf32"
    assert TensorType("f32", (4, -1)).matches("f32", (4, 7))
    assert not TensorType("f32", (4, -1)).matches("f32", (4,))


class Echo(NativeModule):
    module_name = "echo"

    @export("0r_r")
    def echo(self, state: None, view: BufferView) -> BufferView:
        return view


def test_a_module_written_in_python_gets_big_endian_arrays_in_host_order() -> None:
    instance = Instance()
    echo = Context(instance, modules=[Echo()]).lookup("echo.echo")
    out = echo(np.array([1.5, -2], ">f8"))
    assert out.dtype == np.float64 and out.tolist() == [1.5, -2.0]
