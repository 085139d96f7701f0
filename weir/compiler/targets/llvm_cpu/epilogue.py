"""Epilogues on the llvm-cpu target: when an entry's one root is finished by elementwise code of
its shape that reads it only at the index being written (a bias add and activation after a
matmul, a division after a sum), the root keeps its own grid and each workgroup applies the
epilogue to the output tile it has just written, while the tile is in cache. The root's result
lives in the epilogue's result binding, and the epilogue overwrites each element with its final
value in place (so the epilogue must keep the root's element type, or the root be stored too)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import llvmlite.ir as ir

from weir.compiler.targets.llvm_cpu import scalars as s
from weir.compiler.targets.llvm_cpu.kernel_values import KernelValues, ValueRef
from weir.compiler.targets.llvm_cpu.loops import for_nest
from weir.format import reference_kernel as k

if TYPE_CHECKING:
    from weir.compiler.targets.llvm_cpu.lower_entry import EntryLowering


def plan_epilogue(low: EntryLowering, b: ir.IRBuilder, root: int, stores: list[k.Store]) -> bool:
    """Sets up `stores` as the epilogue of `root` (`low.epilogue`) when each reads the root only
    at the index it writes; the root then lands in a store's binding (when nothing else stores
    it) to be finished in place, which needs one store of the root's type."""
    kv = low.kv
    out = (root, 0)
    if not stores or isinstance(kv.ops[root], k.InsertSlice) or \
            len(low.outputs_of(root)) != 1:
        return False
    values = [kv.ref(st.value) for st in stores]
    if any(kv.shape[v] != kv.shape[out] for v in values) or \
            not read_at_own_index(kv, root).issuperset(values):
        return False
    if out not in low.memory and (len(stores) != 1 or kv.dtype[values[0]] != kv.dtype[out]):
        return False
    targets = [(v, low.binding_memory(b, st.binding, st.offset, kv.dtype[v], kv.shape[v], True))
               for st, v in zip(stores, values)]
    if out not in low.memory:
        low.memory[out] = targets[0][1]
    low.epilogue = (root, targets)
    return True


def read_at_own_index(kv: KernelValues, root: int) -> set[ValueRef]:
    """Values whose element at an index reads `root`'s result, if at all, only at that same
    index: chains of generics whose operands from the root share the result's map. One pass in
    op order (operands come first), so long chains cost no recursion."""
    depends: set[int] = {root}
    good: set[ValueRef] = {(root, 0)}
    for n, op in enumerate(kv.ops):
        if n == root or isinstance(op, (k.Result, k.Store)):
            continue
        view = kv.views.get(n)
        operands: tuple[ValueRef, ...] = ()
        if view is not None:
            operands = view.inputs + view.outputs
        elif isinstance(op, (k.Broadcast, k.Transpose, k.Slice, k.Reshape)):
            operands = (kv.ref(op.input),)
        reading = [j for j, u in enumerate(operands) if u[0] in depends]
        if not reading:
            good.update((n, i) for i in range(len(view.outputs) if view else 1))
            continue
        depends.add(n)
        if view is None or view.reduces:
            continue
        nin = len(view.inputs)
        for i in range(len(view.outputs)):
            if all(view.maps[j] == view.maps[nin + i] and operands[j] in good for j in reading):
                good.add((n, i))
    return good


def finish_block(low: EntryLowering, b: ir.IRBuilder, n: int,
                 box: list[tuple[ir.Value, ir.Value]]) -> None:
    """Called by a root's lowering once it has written the block `box` of its output: applies
    the epilogue there (nothing when the root has none)."""
    from weir.compiler.targets.llvm_cpu.lower_entry import Body
    if low.epilogue is None or low.epilogue[0] != n:
        return
    targets = low.epilogue[1]

    def body(bb: ir.IRBuilder, idx: list[ir.Value]) -> None:
        ctx = Body()
        for v, mem in targets:
            s.store_element(bb, low.element(bb, v, idx, ctx), mem.address(bb, idx), mem.dtype)
    for_nest(b, box, body, "epi")
