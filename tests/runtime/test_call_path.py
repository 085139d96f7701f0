"""The per-call path through the API, the VM and the HAL, which is built to be cheap: arrays are
copied in (whatever their layout), results are copies the caller owns, waits on semaphores wake
every sleeper, and the shortcuts taken for speed report the same errors as the full checks."""

from __future__ import annotations

import threading
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from runtime_builders import mul_module

from weir.errors import InputError, RuntimeFault
from weir.format.module_file import serialize
from weir.runtime.api import BufferView, Context, Instance, NativeModule, export, load_module_bytes
from weir.runtime.hal.buffer import Allocator, Buffer
from weir.runtime.hal.fence import Fence
from weir.runtime.hal.semaphore import Semaphore

DEADLINE_S = 10.0

ARRAYS = {
    "contiguous": np.arange(6, dtype=np.float32),
    "scalar": np.array(2.5, np.float64),
    "numpy scalar": np.int16(-3),
    "empty": np.zeros((0, 3), np.float32),
    "strided": np.arange(12, dtype=np.int32).reshape(3, 4)[:, ::2],
    "fortran order": np.asfortranarray(np.arange(6.0).reshape(2, 3)),
    "read-only": np.frombuffer(np.arange(4, dtype=np.int64).tobytes(), np.int64),
    "bool": np.array([True, False, True]),
    "bfloat16": np.array([1, 2, 3], ml_dtypes.bfloat16),
}


@pytest.mark.parametrize("name", ARRAYS)
def test_from_numpy_copies_any_layout_into_a_buffer_of_its_own(name: str) -> None:
    source = ARRAYS[name]
    array = np.asarray(source)
    view = BufferView.from_numpy(source, Allocator())
    assert view.shape == array.shape and view.byte_length == array.nbytes
    assert view.to_numpy().dtype == array.dtype
    assert bytes(view.buffer.data) == np.ascontiguousarray(array).tobytes()
    assert not view.buffer.read_only and view.buffer.data.flags.writeable
    assert not np.shares_memory(view.buffer.data, array)
    assert view.buffer.address == view.buffer.data.ctypes.data or view.byte_length == 0
    np.testing.assert_array_equal(view.to_numpy_copy(), array)


def test_results_are_the_callers_own_and_inputs_are_left_alone() -> None:
    instance = Instance()
    ctx = Context(instance, devices=[instance.create_device("local-sync")],
                  modules=[load_module_bytes(serialize(mul_module()))])
    mul = ctx.lookup("module.mul")
    a, b = np.array([1, 2, 3, 4], np.float32), np.array([5, 6, 7, 8], np.float32)
    first = mul(a, b)
    second = mul(b, b)
    np.testing.assert_array_equal(first, [5, 12, 21, 32])  # not overwritten by the next call
    np.testing.assert_array_equal(second, [25, 36, 49, 64])
    np.testing.assert_array_equal(a, [1, 2, 3, 4])
    # The caller's own: writable, and no other result, argument or later call shares it (a
    # result buffer only its call made is handed over rather than copied).
    assert first.flags.writeable and not np.shares_memory(first, second)
    first[:] = 0
    np.testing.assert_array_equal(mul(a, b), [5, 12, 21, 32])
    np.testing.assert_array_equal(second, [25, 36, 49, 64])
    with pytest.raises(InputError, match=r"function 'mul' expects 2 argument\(s\), got 3"):
        mul(a, b, b)


def test_views_check_their_layout_whatever_form_the_shape_takes() -> None:
    buffer = Buffer(np.zeros(16, np.uint8))
    assert BufferView(buffer, 0, "f32", [2, np.int64(2)]).shape == (2, 2)
    assert BufferView(buffer, 4, "f32", (3,)).to_numpy().shape == (3,)
    with pytest.raises(InputError, match=r"negative dimension in shape \(2, -1\)"):
        BufferView(buffer, 0, "f32", (2, -1))
    with pytest.raises(InputError, match="unknown element type 'f99'"):
        BufferView(buffer, 0, "f99", (1,))
    with pytest.raises(InputError, match="a 5xf32 view at offset 0 needs 20 bytes"):
        BufferView(buffer, 0, "f32", (5,))
    with pytest.raises(TypeError, match="int"):
        BufferView(buffer, 0, "f32", ([1],))  # type: ignore[list-item]


def test_a_signal_wakes_every_sleeping_waiter() -> None:
    sem = Semaphore(0)
    woke: list[bool] = []
    waiters = [threading.Thread(target=lambda: woke.append(sem.wait(2, DEADLINE_S)))
               for _ in range(3)]
    for t in waiters:
        t.start()
    sem.signal(1)  # below what they wait for: they go back to sleep
    sem.signal(2)
    for t in waiters:
        t.join(DEADLINE_S)
    assert woke == [True, True, True]


def test_a_failure_wakes_sleepers_with_the_original_message() -> None:
    sem = Semaphore(0)
    seen: list[str] = []

    def waiter() -> None:
        try:
            sem.wait(1, DEADLINE_S)
        except RuntimeFault as e:
            seen.append(str(e))

    thread = threading.Thread(target=waiter)
    thread.start()
    sem.fail("device lost")
    thread.join(DEADLINE_S)
    assert seen == ["device lost"]


def test_a_wait_that_times_out_leaves_the_semaphore_usable() -> None:
    sem = Semaphore(0)
    assert not sem.wait(1, 0) and not sem.wait(1, 0.001)
    assert not Fence.create(sem, 1).wait(0)
    sem.signal(1)
    sem.signal(2)
    assert sem.wait(2, 0) and Fence.create(sem, 2).wait(None)


class Arities(NativeModule):
    """Exports of several arities, with and without the caller: each gets a wrapper of its own
    arity."""

    module_name = "arities"

    @export("0_i")
    def none(self, state: Any) -> int:
        return 0

    @export("0iii_i")
    def three(self, state: Any, a: int, b: int, c: int) -> int:
        return a * 100 + b * 10 + c

    @export("0ii_i", pass_caller=True)
    def with_caller(self, state: Any, caller: Any, a: int, b: int) -> int:
        assert caller.module is self
        return a - b

    @export("0i_i")
    def fails(self, state: Any, a: int) -> int:
        return {}[a]  # type: ignore[no-any-return]


def test_native_exports_of_every_arity_are_called_and_report_faults() -> None:
    instance = Instance()
    ctx = Context(instance, devices=[instance.create_device("local-sync")], modules=[Arities()])
    assert ctx.lookup("arities.none")() == 0
    assert ctx.lookup("arities.three")(1, 2, 3) == 123
    assert ctx.lookup("arities.with_caller")(5, 2) == 3
    with pytest.raises(RuntimeFault, match="^arities.fails: KeyError: 7$"):
        ctx.lookup("arities.fails")(7)


def test_a_call_tells_its_devices_to_expect_work_before_converting_arguments() -> None:
    """Devices whose threads sleep when idle wake them while the call's host part runs: the
    API tells each device first, before the arguments (even ones it rejects), on every kind
    of call."""
    from weir.runtime.hal.drivers.local_sync import LocalSyncDevice

    class Expecting(LocalSyncDevice):
        told = 0

        def expect_work(self) -> None:
            self.told += 1

    device = Expecting()
    ctx = Context(Instance(), devices=[device],
                  modules=[load_module_bytes(serialize(mul_module()))])
    mul = ctx.lookup("module.mul")
    a = np.array([1, 2, 3, 4], np.float32)
    np.testing.assert_array_equal(mul(a, a), a * a)
    assert device.told == 1
    with pytest.raises(InputError):
        mul(a, "not an array")
    assert device.told == 2
    view = BufferView.from_numpy(a, device.allocator)
    (result,) = mul.invoke_views([view, view])  # as weir-benchmark-module calls
    np.testing.assert_array_equal(result.to_numpy(), a * a)
    assert device.told == 3
