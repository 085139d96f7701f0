"""An executable's scratch blocks (llvm_cpu/scratch.py): a block given back is the next one taken,
blocks held at once are distinct, a block grows to the largest request, blocks above the kept
size and requests past the last slot are malloc'd and freed, and release frees every kept block.
Then end to end: a padded convolution, whose input rows live in scratch, is right on every call
and on both drivers, and the loader releases the blocks when the executable goes."""

from __future__ import annotations

import ctypes
import gc

import llvmlite.ir as ir
import numpy as np
import pytest

import weir.api as weir
from weir.compiler.targets.llvm_cpu.loops import I64
from weir.compiler.targets.llvm_cpu.machine import resolve_cpu
from weir.compiler.targets.llvm_cpu.scratch import KEEP_BYTES, scratch_functions, SLOTS
from weir.compiler.targets.llvm_cpu.target import Jit
from weir.format.native_executable import SCRATCH_RELEASE_SYMBOL
from weir.runtime.executables import llvm_cpu

_I8P = ir.IntType(8).as_pointer()
TAKE = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_int64)
GIVE = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
RELEASE = ctypes.CFUNCTYPE(None)


class Scratch:
    """The module's take and give behind exported wrappers, and its slots' words."""

    def __init__(self) -> None:
        cpu = resolve_cpu()
        module = ir.Module(name="scratch")
        module.triple = cpu.triple
        take, give = scratch_functions(module)
        for name, inner, ret, args in (("test_take", take, _I8P, [I64]),
                                       ("test_give", give, ir.VoidType(), [_I8P])):
            fn = ir.Function(module, ir.FunctionType(ret, args), name)
            b = ir.IRBuilder(fn.append_basic_block("entry"))
            result = b.call(inner, list(fn.args))
            b.ret(result) if ret is _I8P else b.ret_void()
        self.jit = Jit(module, cpu)
        self.take = TAKE(self.jit.address("test_take"))
        self.give = GIVE(self.jit.address("test_give"))
        self.release = RELEASE(self.jit.address(SCRATCH_RELEASE_SYMBOL))
        words = self.jit.engine.get_global_value_address("weir.scratch.slots")
        self.slots = (ctypes.c_int64 * (SLOTS * 8)).from_address(words)

    def slot_of(self, memory: int) -> int:
        return ctypes.c_int64.from_address(memory - 64).value

    def busy(self) -> list[int]:
        return [self.slots[8 * i] for i in range(SLOTS)]


@pytest.fixture
def scratch() -> Scratch:
    s = Scratch()
    yield s
    s.release()


def test_a_block_given_back_is_taken_again(scratch: Scratch) -> None:
    first = scratch.take(1000)
    ctypes.memset(first, 7, 1000)  # usable memory
    assert scratch.slot_of(first) == 0 and scratch.busy()[0] == 1
    scratch.give(first)
    assert scratch.busy() == [0] * SLOTS
    again = scratch.take(500)
    assert again == first  # the same block, already mapped: no fresh pages
    scratch.give(again)


def test_blocks_held_at_once_are_distinct_and_grow(scratch: Scratch) -> None:
    a, b = scratch.take(4096), scratch.take(4096)
    assert a != b and (scratch.slot_of(a), scratch.slot_of(b)) == (0, 1)
    scratch.give(a)
    bigger = scratch.take(1 << 20)  # slot 0 again, grown
    assert scratch.slot_of(bigger) == 0
    assert scratch.slots[1] >= (1 << 20)  # slot 0's capacity, header included
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


def test_release_frees_every_kept_block(scratch: Scratch) -> None:
    for p in [scratch.take(256) for _ in range(3)]:
        scratch.give(p)
    assert all(scratch.slots[8 * i + 2] for i in range(3))
    scratch.release()
    assert all(scratch.slots[8 * i + w] == 0 for i in range(SLOTS) for w in (1, 2))
    p = scratch.take(256)  # grows again from nothing
    assert scratch.slot_of(p) == 0
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
def test_padded_convolution_right_on_every_call_and_released(device: str,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    released: list[int] = []
    real = llvm_cpu._release_scratch
    monkeypatch.setattr(llvm_cpu, "_release_scratch",
                        lambda address, engine: (released.append(address), real(address, engine)))
    module = weir.compile_string(PADDED_CONV, "padded.mlir",
                                 weir.CompilerOptions(target_backends=("llvm-cpu",)))
    rng = np.random.default_rng(5)
    fn = weir.load([module], device=device).lookup_function("main")
    for _ in range(3):  # the first call grows the blocks, the others reuse them
        x = rng.standard_normal((1, 20, 20, 16), dtype=np.float32)
        w = rng.standard_normal((3, 3, 16, 32), dtype=np.float32)
        np.testing.assert_allclose(np.asarray(fn(x, w)), _expected(x, w), rtol=1e-4, atol=1e-4)
    assert not released
    del fn
    gc.collect()
    assert len(released) == 1
