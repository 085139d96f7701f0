"""Runs one reference kernel entry point on numpy inputs through the HAL loader path."""

from __future__ import annotations

import numpy as np

from weir.format.kernel_codec import encode_reference_executable
from weir.format.kernel_description import EntryPoint, KernelOp, ReferenceExecutable
from weir.runtime.executables.reference import load_reference_executable
from weir.runtime.hal.buffer import Allocator, Buffer
from weir.runtime.hal.workgroups import InlineWorkgroups


def run_kernel(ops: list[KernelOp], inputs: list[np.ndarray], outputs: list[tuple[tuple[int, ...], str]],
               constants: tuple[int, ...] = ()) -> list[np.ndarray]:
    """Bindings: the inputs, then one zeroed buffer per output (shape, numpy dtype)."""
    nb = len(inputs) + len(outputs)
    exe = load_reference_executable(memoryview(encode_reference_executable(
        ReferenceExecutable((EntryPoint("k", nb, len(constants), tuple(ops)),)))))
    alloc = Allocator()
    bindings: list[Buffer] = []
    for arr in inputs:
        b = alloc.allocate(arr.nbytes)
        b.data.view(arr.dtype)[...] = arr.ravel()
        bindings.append(b)
    outs = []
    for shape, dtype in outputs:
        dt = np.dtype(dtype)
        b = alloc.allocate(int(np.prod(shape)) * dt.itemsize)
        bindings.append(b)
        outs.append(b.data.view(dt).reshape(shape))
    exe.dispatch(0, (1, 1, 1), constants, bindings, InlineWorkgroups())
    return outs
