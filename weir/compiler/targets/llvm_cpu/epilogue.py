"""Epilogues on the llvm-cpu target: when an entry's one root is finished by elementwise code of
its shape that reads it only at the index being written (a bias add and activation after a
matmul, a division after a sum), the root keeps its own grid and each workgroup applies the
epilogue to the output tile it has just written, while the tile is in cache. The root's result
lives in the epilogue's result binding, and the epilogue overwrites each element with its final
value in place (so the epilogue must keep the root's element type, or the root be stored too)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import llvmlite.ir as ir

from weir.compiler.targets.llvm_cpu import scalars as s
from weir.compiler.targets.llvm_cpu.epilogue_program import (
    apply_program,
    EpilogueProgram,
    Step,
    VECTOR_OPS,
)
from weir.compiler.targets.llvm_cpu.kernel_values import KernelValues, ValueRef
from weir.compiler.targets.llvm_cpu.loops import I64, for_nest
from weir.format import kernel_description as k

if TYPE_CHECKING:
    from weir.compiler.targets.llvm_cpu.element_eval import Memory
    from weir.compiler.targets.llvm_cpu.lower_entry import EntryLowering


def plan_epilogue(low: EntryLowering, b: ir.IRBuilder, root: int, stores: list[k.Store]) -> bool:
    """Sets up `stores` as the epilogue of `root` (`low.epilogue`) when each reads the root only
    at (a projection of) the index it writes. The root lands in a store's binding to be finished
    in place when the epilogue reads it at the very index it writes, in its type; otherwise in
    scratch of its shape (a reduction's result, read by a row-wise consumer, is small)."""
    kv = low.kv
    out = (root, 0)
    if not stores or isinstance(kv.ops[root], k.InsertSlice) or len(low.outputs_of(root)) != 1:
        return False
    values = [kv.ref(st.value) for st in stores]
    positions = root_positions(kv, root)
    identity = tuple(range(len(kv.shape[out])))
    placed: list[tuple[int, ...]] = []
    for v in values:
        at = positions.get(v)
        if at is None:
            return False
        placed.append(identity if at == () and kv.shape[v] == kv.shape[out] else at)
        if len(kv.shape[v]) < len(identity) or len(placed[-1]) != len(identity):
            return False
    targets = [(*low.store_memory(b, st), at) for st, at in zip(stores, placed)]
    if out not in low.memory:
        v = values[0]
        if len(stores) == 1 and placed[0] == identity and kv.shape[v] == kv.shape[out] and \
                kv.dtype[v] == kv.dtype[out]:
            low.memory[out] = targets[0][1]
            low.finished_in_place = out
        else:
            low.memory[out] = low.scratch_memory(b, kv.dtype[out], low.dims(out))
    low.epilogue = (root, targets)
    return True


def root_positions(kv: KernelValues, root: int,
                   stored: int | None = None) -> dict[ValueRef, tuple[int, ...]]:
    """For each value whose element at `idx` reads `root`'s result only at one index made of
    distinct entries of `idx`: which entries (one per root dimension, -1 where the root's index is
    the constant 0 of a size-1 dimension; () for a value that does not read the root at all). One pass in op order (operands come first), so long chains cost no
    recursion. Elementwise generics, broadcasts, transposes and slices of unread values qualify.
    Node `stored`, whose results are read from memory, does not count as reading the root."""
    depends: set[int] = {root}
    found: dict[ValueRef, tuple[int, ...]] = {(root, 0): tuple(range(len(kv.shape[(root, 0)])))}
    for n, op in enumerate(kv.ops):
        if n in (root, stored) or isinstance(op, (k.Result, k.Store)):
            continue
        view = kv.views.get(n)
        operands: tuple[ValueRef, ...] = ()
        if view is not None:
            operands = view.inputs + view.outputs
        elif isinstance(op, (k.Broadcast, k.Transpose, k.Slice, k.Reshape)):
            operands = (kv.ref(op.input),)
        reading = [j for j, u in enumerate(operands) if u[0] in depends]
        if not reading:
            found.update(((n, i), ()) for i in range(len(view.outputs) if view else 1))
            continue
        depends.add(n)
        if isinstance(op, (k.Broadcast, k.Transpose)) and operands[0] in found:
            rank = len(kv.shape[(n, 0)])
            inner = [d for d in range(rank) if d not in op.dimensions] \
                if isinstance(op, k.Broadcast) else [op.permutation.index(p) for p in range(rank)]
            found[(n, 0)] = tuple(inner[p] if p >= 0 else -1 for p in found[operands[0]])
            continue
        if view is None or view.reduces:
            continue
        nin = len(view.inputs)
        for i in range(len(view.outputs)):
            written = view.maps[nin + i]
            agreed: set[tuple[int, ...]] = set()
            for j in reading:
                at = found.get(operands[j])
                if at is None:
                    break
                loops = [view.maps[j][p] if p >= 0 else -1 for p in at]
                if any(d >= 0 and d not in written for d in loops):
                    break
                agreed.add(tuple(written.index(d) if d >= 0 else -1 for d in loops))
            else:
                if len(agreed) == 1:
                    found[(n, i)] = agreed.pop()
    return found


def finish_block(low: EntryLowering, b: ir.IRBuilder, n: int,
                 box: list[tuple[ir.Value, ir.Value]]) -> None:
    """Called by a root's lowering once it has written the block `box` of its output: applies
    the epilogue to every element that reads the root inside that block (nothing when the root
    has none)."""
    from weir.compiler.targets.llvm_cpu.element_eval import Body
    if low.epilogue is None or low.epilogue[0] != n:
        return
    by_place: dict[tuple[int, ...], list[tuple[ValueRef, Memory]]] = {}
    for v, mem, at in low.epilogue[1]:
        by_place.setdefault(at, []).append((v, mem))
    for at, targets in by_place.items():
        bounds = [(I64(0), d) for d in targets[0][1].dims]
        for k_dim, p in enumerate(at):
            if p >= 0:  # else the root's index there is 0: a dimension of size 1
                bounds[p] = box[k_dim]

        def body(bb: ir.IRBuilder, idx: list[ir.Value],
                 targets: list[tuple[ValueRef, Memory]] = targets) -> None:
            ctx = Body()
            for v, mem in targets:
                s.store_element(bb, low.element(bb, v, idx, ctx), mem.address(bb, idx), mem.dtype)
        for_nest(b, bounds, body, "epi")


@dataclass(frozen=True)
class VectorEpilogue:
    """An epilogue a kernel applies to its f32 accumulators as it stores them for the last
    time (`apply_epilogue`): `program` on the root's element and on the elements of `inputs`
    at the same index, tensors in memory of the root's shape (a residual), so that an input's
    element lies as many bytes from its base as the output's from the output's."""

    program: EpilogueProgram
    inputs: tuple[ValueRef, ...]
    output: ValueRef  # the root's result, which the kernel stores


def vector_epilogue(low: EntryLowering, root: int) -> VectorEpilogue | None:
    """The epilogue of `root` when it can be applied to the root's f32 element in registers,
    instead of a pass reading the output back (a 3 x 3 stem of 3 channels spent 10% of its
    time in its ReLU's pass): one value, written in place over the root's result, made by
    elementwise generics (identity maps, f32) from the root's element, f32 tensors in memory
    of the root's shape (a residual) and f32 constants (scalars of their bodies, or 0-d fills
    read as scalars: ReLU6 as torch-mlir exports it is two such generics), with the ops of
    VECTOR_OPS."""
    kv = low.kv
    out = (root, 0)
    if low.epilogue is None or low.epilogue[0] != root or low.finished_in_place != out:
        return None
    targets = low.epilogue[1]
    identity = tuple(range(len(kv.shape[out])))
    if len(targets) != 1 or targets[0][2] != identity or kv.dtype[out] != "f32":
        return None
    inputs: list[ValueRef] = []
    generics: list[ValueRef] = []  # operands before the values that read them

    def visit(v: ValueRef) -> bool:
        if v == out or v in inputs or v in generics:
            return True
        op = kv.ops[v[0]]
        if kv.dtype[v] != "f32":
            return False
        if isinstance(op, k.Generic) and v[1] == 0 and len(op.outputs) == 1 and \
                not op.captures and not op.checks and \
                all(i == "parallel" for i in op.iterators) and \
                op.maps[len(op.inputs)] == identity and _vector_body(op):
            for i, m in zip(op.inputs, op.maps):
                ref = kv.ref(i)
                if m == () and _scalar_fill(kv, ref) is not None:
                    continue
                if m != identity or not visit(ref):
                    return False
            generics.append(v)
            return True
        # Another tensor read at the element's index: memory of the root's shape, not the
        # output's own (which holds the root's partial sums until the last store).
        mem = low.memory.get(v)
        if mem is None or mem is low.memory.get(out) or kv.shape[v] != kv.shape[out]:
            return False
        inputs.append(v)
        return True
    if not visit(targets[0][0]):
        return None
    return VectorEpilogue(_program(kv, out, inputs, generics, targets[0][0]), tuple(inputs), out)


def _program(kv: KernelValues, out: ValueRef, inputs: list[ValueRef],
             generics: list[ValueRef], value: ValueRef) -> EpilogueProgram:
    """The generics' bodies, operands first, as one program computing `value` from the root's
    result `out` (value 0) and `inputs` (values 1, 2, ...)."""
    steps: list[Step] = []
    numbered: dict[ValueRef, int] = {out: 0}
    for j, v in enumerate(inputs):
        numbered[v] = 1 + j
    for v in generics:
        op = kv.ops[v[0]]
        assert isinstance(op, k.Generic)
        local: dict[int, int] = {}
        for j, i in enumerate(op.inputs):
            ref = kv.ref(i)
            fill = _scalar_fill(kv, ref) if op.maps[j] == () else None
            if fill is not None:
                steps.append(Step("constant", "f32", fill, (), ()))
                local[j] = len(inputs) + len(steps)
            else:
                local[j] = numbered[ref]
        dtypes = {j: "f32" for j in range(len(op.inputs))}
        for number, scalar in enumerate(op.body, start=len(op.inputs) + len(op.outputs)):
            dtypes[number] = scalar.dtype
            if scalar.op == "constant":
                constant = float(scalar.attr)  # type: ignore[arg-type]
                steps.append(Step("constant", "f32", constant, (), ()))
            else:
                steps.append(Step(scalar.op, scalar.dtype, scalar.attr,
                                  tuple(local[a] for a in scalar.args),
                                  tuple(dtypes[a] for a in scalar.args)))
            local[number] = len(inputs) + len(steps)
        numbered[v] = local[op.yields[0]]
    return EpilogueProgram(len(inputs), tuple(steps), numbered[value])


def _scalar_fill(kv: KernelValues, ref: ValueRef) -> float | None:
    """The value of a 0-d f32 fill with a constant (an exporter's scalar constant)."""
    op = kv.ops[ref[0]]
    if kv.shape[ref] != () or kv.dtype[ref] != "f32" or not isinstance(op, k.Fill) or \
            not isinstance(op.value, (int, float)):
        return None
    return float(op.value)


def _vector_body(op: k.Generic) -> bool:
    """Whether the body reads its inputs and f32 constants only (never its output), with the
    ops of VECTOR_OPS, and yields one of them."""
    known = set(range(len(op.inputs)))
    for number, scalar in enumerate(op.body, start=len(op.inputs) + len(op.outputs)):
        if scalar.op == "constant":
            if scalar.dtype != "f32" or not isinstance(scalar.attr, (int, float)):
                return False
        elif scalar.op not in VECTOR_OPS or not set(scalar.args) <= known or \
                scalar.dtype not in ("f32", "i1"):
            return False
        known.add(number)
    return op.yields[0] in known


def apply_epilogue(b: ir.IRBuilder, value: ir.Value, epilogue: VectorEpilogue,
                   inputs: Sequence[ir.Value] = ()) -> ir.Value:
    """The epilogue on the f32 lanes of `value` (the root's elements; or one, a scalar), with
    `inputs` the elements of `epilogue.inputs` at the same index, loaded as `value`."""
    return apply_program(b, value, epilogue.program, inputs)


def input_offsets(b: ir.IRBuilder, low: EntryLowering,
                  epilogue: VectorEpilogue | None) -> list[ir.Value]:
    """Where each input of `epilogue` (none without one) lies against its output: the input's
    base address less the output's, in bytes (the same for every element, the shapes being the
    same); a kernel reads them with `epilogue_program.at_offset`."""
    if epilogue is None:
        return []
    base = b.ptrtoint(low.memory[epilogue.output].ptr, I64)
    return [b.sub(b.ptrtoint(low.memory[v].ptr, I64), base) for v in epilogue.inputs]

