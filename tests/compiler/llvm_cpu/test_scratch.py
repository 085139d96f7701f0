"""The scratch blocks (llvm_cpu/scratch.py): a block given back is the next one taken, blocks held
at once are distinct, a block grows to the largest request, and blocks above the kept size and
requests past the last slot are malloc'd and freed. Then end to end: a padded convolution, whose
input rows live in scratch, is right on every call and on both drivers, and two executables
take their scratch from the one set of blocks the process links once."""

from __future__ import annotations

import ctypes
import hashlib
import threading

import llvmlite.ir as ir
import numpy as np
import pytest

import weir.api as weir
from weir.compiler.targets.llvm_cpu.loops import I64
from weir.compiler.targets.llvm_cpu.machine import resolve_cpu
from weir.compiler.targets.llvm_cpu.scratch import (
    define_scratch,
    GIVE,
    HOME_SLOTS,
    KEEP_BYTES,
    scratch_object,
    SLOTS,
    SLOTS_SYMBOL,
    TAKE,
)
from weir.compiler.targets.llvm_cpu.target import Jit
from weir.runtime.executables import llvm_cpu

_I8P = ir.IntType(8).as_pointer()
TAKE_TYPE = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_int64)
GIVE_TYPE = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class Scratch:
    """A private copy of the scratch library: its take, give and slots' words."""

    def __init__(self) -> None:
        cpu = resolve_cpu()
        module = ir.Module(name="scratch")
        module.triple = cpu.triple
        define_scratch(module)
        self.jit = Jit(module, cpu)
        self.take = TAKE_TYPE(self.jit.address(TAKE))
        self.give = GIVE_TYPE(self.jit.address(GIVE))
        words = self.jit.engine.get_global_value_address(SLOTS_SYMBOL)
        self.slots = (ctypes.c_int64 * (SLOTS * 8)).from_address(words)

    def slot_of(self, memory: int) -> int:
        return ctypes.c_int64.from_address(memory - 64).value

    def busy(self) -> list[int]:
        return [self.slots[8 * i] for i in range(SLOTS)]


@pytest.fixture
def scratch() -> Scratch:
    return Scratch()


def test_a_block_given_back_is_taken_again(scratch: Scratch) -> None:
    first = scratch.take(1000)
    ctypes.memset(first, 7, 1000)  # usable memory
    home = scratch.slot_of(first)  # this thread's home: where its search starts
    assert home % HOME_SLOTS == 0 and scratch.busy()[home] == 1
    scratch.give(first)
    assert scratch.busy() == [0] * SLOTS
    again = scratch.take(500)
    assert again == first  # the same block, already mapped: no fresh pages
    scratch.give(again)


def test_blocks_held_at_once_are_distinct_and_grow(scratch: Scratch) -> None:
    a, b = scratch.take(4096), scratch.take(4096)
    home = scratch.slot_of(a)
    assert a != b and scratch.slot_of(b) == home + 1
    scratch.give(a)
    bigger = scratch.take(1 << 20)  # the home slot again, grown
    assert scratch.slot_of(bigger) == home
    assert scratch.slots[8 * home + 1] >= (1 << 20)  # its capacity, header included
    ctypes.memset(bigger, 1, 1 << 20)
    scratch.give(bigger)
    scratch.give(b)
    assert scratch.busy() == [0] * SLOTS


def test_large_blocks_and_full_slots_are_malloced(scratch: Scratch) -> None:
    large = scratch.take(KEEP_BYTES)
    assert scratch.slot_of(large) == SLOTS and scratch.busy() == [0] * SLOTS
    scratch.give(large)
    held = [scratch.take(64) for _ in range(SLOTS)]
    assert sorted(scratch.slot_of(p) for p in held) == list(range(SLOTS))
    extra = scratch.take(64)
    assert scratch.slot_of(extra) == SLOTS  # every slot taken
    scratch.give(extra)
    for p in held:
        scratch.give(p)
    assert scratch.busy() == [0] * SLOTS
    scratch.give(None)  # like free(NULL)


def test_each_thread_starts_its_search_at_a_home(scratch: Scratch) -> None:
    """Whatever thread asks, a first block with every slot free is a home's first slot; held
    blocks push the next request along from there, wrapping past the last slot."""
    homes: list[int] = []

    def first_slot() -> None:
        p = scratch.take(64)
        homes.append(scratch.slot_of(p))
        scratch.give(p)
    threads = [threading.Thread(target=first_slot) for _ in range(4)]
    for t in threads:
        t.start()
        t.join()
    assert all(h % HOME_SLOTS == 0 for h in homes)
    held = [scratch.take(64) for _ in range(SLOTS - 1)]
    last = scratch.take(64)  # the one slot left: before this thread's home, reached by wrapping
    assert scratch.slot_of(last) == (scratch.slot_of(held[0]) - 1) % SLOTS
    for p in held + [last]:
        scratch.give(p)


PADDED_CONV = """
func.func @main(%x: tensor<1x20x20x16xf32>, %w: tensor<3x3x16x32xf32>) -> tensor<1x20x20x32xf32> {
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %z : f32
  } : tensor<1x20x20x16xf32> to tensor<1x22x22x16xf32>
  %e = tensor.empty() : tensor<1x20x20x32xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x20x20x32xf32>) -> tensor<1x20x20x32xf32>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%p, %w : tensor<1x22x22x16xf32>, tensor<3x3x16x32xf32>)
      outs(%f : tensor<1x20x20x32xf32>) -> tensor<1x20x20x32xf32>
  return %c : tensor<1x20x20x32xf32>
}
"""


def _expected(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    padded = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    windows = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(1, 2))
    return np.tensordot(windows, w, axes=([4, 5, 3], [0, 1, 2]))


@pytest.mark.parametrize("device", ["local-sync", "local-task"])
def test_padded_convolution_right_on_every_call(device: str) -> None:
    module = weir.compile_string(PADDED_CONV, "padded.mlir",
                                 weir.CompilerOptions(target_backends=("llvm-cpu",)))
    rng = np.random.default_rng(5)
    fn = weir.load([module], device=device).lookup_function("main")
    for _ in range(3):  # the first call grows the blocks, the others reuse them
        x = rng.standard_normal((1, 20, 20, 16), dtype=np.float32)
        w = rng.standard_normal((3, 3, 16, 32), dtype=np.float32)
        np.testing.assert_allclose(np.asarray(fn(x, w)), _expected(x, w), rtol=1e-4, atol=1e-4)


def test_executables_share_one_set_of_blocks() -> None:
    """Two programs' executables carry the same scratch library, linked once: after one has
    run, the other takes the very block it gave back."""
    library = llvm_cpu._LIBRARIES  # pyright: ignore[reportPrivateUsage]
    options = weir.CompilerOptions(target_backends=("llvm-cpu",))
    first = weir.compile_string(PADDED_CONV, "first.mlir", options)
    second = weir.compile_string(PADDED_CONV.replace("@main", "@other"), "second.mlir", options)
    key = hashlib.sha256(scratch_object(resolve_cpu())).digest()
    x = np.ones((1, 20, 20, 16), np.float32)
    w = np.ones((3, 3, 16, 32), np.float32)
    weir.load([first], device="local-sync").lookup_function("main")(x, w)
    words = (ctypes.c_int64 * (SLOTS * 8)).from_address(
        library[key].engine.get_global_value_address(SLOTS_SYMBOL))
    kept = [words[8 * i + 2] for i in range(SLOTS)]  # each slot's block
    assert any(kept) and not any(words[8 * i] for i in range(SLOTS))  # kept, given back
    count = len(library)
    weir.load([second], device="local-sync").lookup_function("other")(x, w)
    assert [words[8 * i + 2] for i in range(SLOTS)] == kept  # the same blocks, reused
    assert len(library) == count
