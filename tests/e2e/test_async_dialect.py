"""Programs written with MLIR's async dialect, end to end: results on every target, driver and
execution model; independent regions really in flight at once on local-task and dependent ones
never (read from the device's own record of the queue operations it ran together, never from
timing); dependencies honoured where breaking them would change the result; regions placed on
their devices."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

import weir.api as weir
from weir.runtime.api import BufferView, Context, Fence, Instance, NativeModule, export

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "async_dialect"
TWO_BRANCHES = (SAMPLES / "two_branches.mlir").read_text()
TWO_DEVICES = (SAMPLES / "two_devices.mlir").read_text()
DONE_S = 10.0  # bound for work the test has released; reached in milliseconds in practice
X = np.array([1, 2, 3, 4], dtype=np.float32)
Y = np.array([5, 6, 7, 8], dtype=np.float32)

# Scalars and tensors, a nested region, a loop inside a region, a chain by token and by value.
MIXED = """
func.func @mixed(%a: tensor<4xf32>, %b: tensor<4xf32>, %f: f32) -> (tensor<4xf32>, f32) {
  %ts, %s = async.execute -> !async.value<f32> {
    %m = arith.mulf %f, %f : f32
    async.yield %m : f32
  }
  %t0, %r0 = async.execute [%ts] (%s as %sv: !async.value<f32>) -> !async.value<tensor<4xf32>> {
    %splat = tensor.splat %sv : tensor<4xf32>
    %x = arith.mulf %a, %splat : tensor<4xf32>
    %ti, %ri = async.execute (%s as %sv2: !async.value<f32>) -> !async.value<tensor<4xf32>> {
      %e = tensor.splat %sv2 : tensor<4xf32>
      %q = arith.addf %x, %e : tensor<4xf32>
      async.yield %q : tensor<4xf32>
    }
    %inner = async.await %ri : !async.value<tensor<4xf32>>
    async.yield %inner : tensor<4xf32>
  }
  %t1, %r1 = async.execute [%t0] -> !async.value<tensor<4xf32>> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %l = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %b) -> (tensor<4xf32>) {
      %n = arith.addf %acc, %b : tensor<4xf32>
      scf.yield %n : tensor<4xf32>
    }
    async.yield %l : tensor<4xf32>
  }
  async.await %t1 : !async.token
  %v0 = async.await %r0 : !async.value<tensor<4xf32>>
  %v1 = async.await %r1 : !async.value<tensor<4xf32>>
  %sum = arith.addf %v0, %v1 : tensor<4xf32>
  %k = async.await %s : !async.value<f32>
  return %sum, %k : tensor<4xf32>, f32
}
"""


def _mixed_expected(a: np.ndarray, b: np.ndarray, f: float) -> tuple[np.ndarray, float]:
    s = np.float32(f) * np.float32(f)
    return a * s + s + b * 4, float(s)


def _compile(source: str, target: str = "reference", model: str = "async-internal",
             devices: tuple[weir.TargetDevice, ...] = ()) -> bytes:
    options = weir.CompilerOptions(target_backends=(target,), execution_model=model,  # type: ignore[arg-type]
                                   target_devices=devices)
    return weir.compile_string(source, "async_program.mlir", options)


_compiled: dict[tuple[str, str, str], bytes] = {}


def _cached(source: str, target: str, model: str) -> bytes:
    key = (source, target, model)
    if key not in _compiled:
        _compiled[key] = _compile(source, target, model)
    return _compiled[key]


@pytest.mark.parametrize("target", ["reference", "llvm-cpu"])
@pytest.mark.parametrize("driver", ["local-sync", "local-task"])
@pytest.mark.parametrize("model", ["async-internal", "async-external"])
def test_results_on_every_target_driver_and_model(target: str, driver: str, model: str) -> None:
    with weir.load([_cached(TWO_BRANCHES, target, model)], device=driver) as ctx:
        np.testing.assert_array_equal(ctx.lookup_function("two_branches")(X, Y), X * X + Y + Y)
    with weir.load([_cached(MIXED, target, model)], device=driver) as ctx:
        tensor, scalar = ctx.lookup_function("mixed")(X, Y, 3.0)
        expected_tensor, expected_scalar = _mixed_expected(X, Y, 3.0)
        np.testing.assert_array_equal(tensor, expected_tensor)
        assert scalar == expected_scalar


def test_async_external_regions_wait_for_the_callers_fence() -> None:
    """With coarse fences every region waits behind the caller's wait fence: nothing runs
    before it is signalled, everything after, and the call itself returned at once."""
    with weir.load([_cached(TWO_BRANCHES, "reference", "async-external")],
                   device="local-task") as ctx:
        fn = ctx.lookup_function("two_branches")
        wait, signal = Fence.create(), Fence.create()
        (result,) = fn.invoke_async([BufferView.from_numpy(X), BufferView.from_numpy(Y)],
                                    wait=wait, signal=signal)
        stats = ctx.devices[0].statistics
        assert signal.wait(0) is False and stats.dispatches_executed == 0
        wait.signal()
        assert signal.wait(DONE_S)
        assert stats.dispatches_executed == 3
        np.testing.assert_array_equal(result.to_numpy(), X * X + Y + Y)


# Two branches heavy enough that each dispatch runs for milliseconds, joined at the end; and the
# same two computations chained by a token only (the second reads nothing the first writes).
_HEAVY_BRANCH = """
  %t{n}, %r{n} = async.execute {deps} -> !async.value<tensor<1048576xf32>> {{
    %e{n} = math.exp %{arg} : tensor<1048576xf32>
    %s{n} = math.sin %e{n} : tensor<1048576xf32>
    %c{n} = math.cos %s{n} : tensor<1048576xf32>
    %l{n} = math.tanh %c{n} : tensor<1048576xf32>
    async.yield %l{n} : tensor<1048576xf32>
  }}"""


def _heavy_program(chained: bool) -> str:
    first = _HEAVY_BRANCH.format(n=1, arg="x", deps="")
    second = _HEAVY_BRANCH.format(n=2, arg="y", deps="[%t1]" if chained else "")
    return f"""
func.func @heavy(%x: tensor<1048576xf32>, %y: tensor<1048576xf32>) -> tensor<1048576xf32> {{
{first}
{second}
  %v1 = async.await %r1 : !async.value<tensor<1048576xf32>>
  %v2 = async.await %r2 : !async.value<tensor<1048576xf32>>
  %sum = arith.addf %v1, %v2 : tensor<1048576xf32>
  return %sum : tensor<1048576xf32>
}}"""


BIG_X = np.linspace(-1, 1, 1 << 20, dtype=np.float32)
BIG_Y = np.linspace(1, -1, 1 << 20, dtype=np.float32)
BRANCH_1 = "heavy_dispatch_0::heavy_dispatch_0"
BRANCH_2 = "heavy_dispatch_1::heavy_dispatch_1"


def test_independent_regions_are_in_flight_at_once_on_local_task() -> None:
    """The device's record of operations executing together shows both branches at once. The
    operating system may still run two ready workers one after the other, so the record is read
    over a few calls; the chained test below shows the record tells the two cases apart."""
    with weir.load([_cached(_heavy_program(chained=False), "llvm-cpu", "async-internal")],
                   device="local-task") as ctx:
        fn = ctx.lookup_function("heavy")
        stats = ctx.devices[0].statistics
        for _ in range(20):
            fn(BIG_X, BIG_Y)
            if stats.snapshot()["in_flight_peak"] >= 2:
                break
        snapshot = stats.snapshot()
        assert snapshot["in_flight_peak"] == 2, snapshot
        together = " ".join(snapshot["in_flight_peak_ops"])
        assert BRANCH_1 in together and BRANCH_2 in together, together
        assert snapshot["in_flight"] == 0


def test_a_token_dependency_keeps_regions_apart_on_local_task() -> None:
    """Chained by a token only, the second branch never starts before the first has finished:
    the record never shows them in flight together, over as many calls as the test above."""
    with weir.load([_cached(_heavy_program(chained=True), "llvm-cpu", "async-internal")],
                   device="local-task") as ctx:
        fn = ctx.lookup_function("heavy")
        for _ in range(5):
            np.testing.assert_allclose(fn(BIG_X, BIG_Y), _heavy_expected(), rtol=1e-5,
                                       atol=1e-6)
        snapshot = ctx.devices[0].statistics.snapshot()
        assert snapshot["in_flight_peak"] == 1, snapshot
        assert snapshot["dispatches_by_entry_point"][BRANCH_2] == 5


def _heavy_expected() -> np.ndarray:
    def branch(v: np.ndarray) -> np.ndarray:
        return np.tanh(np.cos(np.sin(np.exp(v))))
    return branch(BIG_X) + branch(BIG_Y)


class _JournalState:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.appended = 0
        self.consumer_called = threading.Event()
        self.threads: list[threading.Thread] = []


class Journal(NativeModule):
    """A slow producer and a fast consumer. `append` returns at once and completes on its own
    thread only once `count` has been called or 0.2 s have passed, so if `count` could run
    before `append`'s work was done, it would run first and see 0."""

    module_name = "journal"

    def create_state(self, context: Context) -> _JournalState:
        return _JournalState()

    @export("0rrr_r", name="append", model="coarse-fences")
    def append(self, state: _JournalState, value: BufferView, wait: Fence,
               signal: Fence) -> BufferView:
        def work() -> None:
            if not wait.wait(DONE_S):
                signal.fail("journal.append: the input never became ready")
                return
            state.consumer_called.wait(0.2)
            with state.lock:
                state.appended += 1
            signal.signal()
        thread = threading.Thread(target=work, name="journal-append", daemon=True)
        state.threads.append(thread)
        thread.start()
        return value

    @export("0_i", name="count")
    def count(self, state: _JournalState) -> int:
        state.consumer_called.set()
        with state.lock:
            return state.appended


JOURNAL = """
func.func private @journal.append(tensor<4xf32>) -> tensor<4xf32> attributes {
  iree.abi.model = "coarse-fences", nosideeffects}
func.func private @journal.count() -> i32

func.func @produce_then_count(%x: tensor<4xf32>) -> (tensor<4xf32>, i32) {
  %t1, %r1 = async.execute -> !async.value<tensor<4xf32>> {
    %y = func.call @journal.append(%x) : (tensor<4xf32>) -> tensor<4xf32>
    async.yield %y : tensor<4xf32>
  }
  %t2, %n = async.execute [%t1] -> !async.value<i32> {
    %c = func.call @journal.count() : () -> i32
    async.yield %c : i32
  }
  %v = async.await %r1 : !async.value<tensor<4xf32>>
  %k = async.await %n : !async.value<i32>
  return %v, %k : tensor<4xf32>, i32
}
"""


@pytest.mark.parametrize("driver", ["local-sync", "local-task"])
@pytest.mark.parametrize("model", ["async-internal", "async-external"])
def test_a_region_starts_only_after_its_token_dependency(driver: str, model: str) -> None:
    program = _cached(JOURNAL, "reference", model)
    instance = Instance()
    journal = Journal()
    ctx = weir.Context(instance, devices=[instance.create_device(driver)],
                       modules=[journal, weir.load_module_bytes(program)], owns_devices=True)
    with ctx:
        tensor, count = ctx.lookup_function("produce_then_count")(X)
        np.testing.assert_array_equal(tensor, X)
        assert count == 1
        for thread in ctx.module_state("journal").threads:  # type: ignore[attr-defined]
            thread.join(DONE_S)


def test_regions_run_on_the_devices_they_name() -> None:
    devices = tuple(weir.TargetDevice(n, "local", i) for i, n in enumerate(["device_a",
                                                                             "device_b"]))
    for model in ("async-internal", "async-external"):
        program = _compile(TWO_DEVICES, model=model, devices=devices)
        with weir.load([program], device=["local-task", "local-task"]) as ctx:
            np.testing.assert_array_equal(ctx.lookup_function("two_devices")(X, Y),
                                          X * X + Y + Y)
            placed = [d.statistics.snapshot()["dispatches_by_entry_point"] for d in ctx.devices]
            assert placed == [{"two_devices_dispatch_0::two_devices_dispatch_0": 1,
                               "two_devices_dispatch_2::two_devices_dispatch_2": 1},
                              {"two_devices_dispatch_1::two_devices_dispatch_1": 1}], placed
