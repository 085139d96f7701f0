"""How an execute region's commands are recorded into a command buffer (convert-stream-to-hal):
once per call into a one-shot command buffer, or, when nothing in the recording changes from
call to call, once at initialisation into a reusable one (`hal.command_buffer.memoize`) that
each execution gives a table of buffers for its slots.

A slot is one buffer per execution: the function's arguments, its results and its slabs. Every
constant that holds the same bytes is the same read-only buffer at run time (the module stores
those bytes once), so such constants share one slot: a transformer's layer norms, whose weights
are ones and biases zeros in every layer, bind one slot each instead of one per use (a GPT-2
step's table: 74 slots, 24 of them the same two constants)."""

from __future__ import annotations

from collections.abc import Callable, Hashable

from weir.compiler.hal.workgroup_counts import index_constant, workgroup_count
from weir.dialects import hal, stream
from weir.format.workgroups import WorkgroupGrid
from weir.ir.diagnostics import error_at
from weir.ir.upstream import (
    arith,
    Block,
    Builder,
    IndexType,
    InsertPoint,
    IntegerAttr,
    Region,
    SSAValue,
    SymbolRefAttr,
)

Bind = Callable[[SSAValue, Builder], SSAValue]


class CommandRecorder:
    """Records one function's executes. `buffers` maps resources to their buffers, `subviews`
    packed transients to their place in a slab, and `constant_keys` constant resources to what
    tells their bytes apart (filled as the function is lowered)."""

    def __init__(self, entry_ordinals: dict[tuple[str, str], int],
                 grids: dict[tuple[str, str], WorkgroupGrid],
                 buffers: dict[SSAValue, SSAValue],
                 subviews: dict[SSAValue, stream.ResourceSubviewOp],
                 constant_keys: dict[SSAValue, Hashable]) -> None:
        self.entry_ordinals = entry_ordinals
        self.grids = grids
        self.buffers = buffers
        self.subviews = subviews
        self.constant_keys = constant_keys

    def _slot_key(self, resource: SSAValue) -> Hashable:
        """Resources with one key are one buffer at run time: one slot."""
        return self.constant_keys.get(resource, resource)

    def memoizable_slots(self, op: stream.CmdExecuteOp) -> list[SSAValue] | None:
        """The resources an execute binds (a packed transient's slab in its place, one of each
        set of constants with the same bytes), in first-use order, when its recording can be
        made once for every execution: dispatches and barriers only, with push constants known
        at compile time (a dynamic size or offset would change the recording from call to
        call)."""
        slots: dict[Hashable, SSAValue] = {}
        for cmd in op.body.block.ops:
            if isinstance(cmd, stream.CmdBarrierOp):
                continue
            if not isinstance(cmd, stream.CmdDispatchOp):
                return None
            if not all(isinstance(c.owner, arith.ConstantOp) for c in cmd.push_constants):
                return None
            for r in cmd.resources:
                view = self.subviews.get(r)
                base = r if view is None else view.source
                if view is not None and not all(isinstance(v.owner, arith.ConstantOp)
                                                for v in (view.offset, view.length)):
                    return None
                slots.setdefault(self._slot_key(base), base)
        return list(slots.values())

    def memoized(self, op: stream.CmdExecuteOp, device: SSAValue,
                 slots: list[SSAValue]) -> hal.CommandBufferMemoizeOp:
        """The execute's recording as a memoize region: its own device handle and constants,
        the binding slots as block arguments."""
        block = Block(arg_types=[hal.CommandBufferType(), *[hal.BufferType() for _ in slots]])
        rb = Builder(InsertPoint.at_end(block))
        ordinal = device.owner.ordinal  # type: ignore[union-attr]
        own_device = rb.insert(hal.DeviceGetOp.build(
            result_types=[hal.DeviceType()], properties={"ordinal": ordinal})).result
        slot_of = {self._slot_key(s): arg for s, arg in zip(slots, block.args[1:])}

        def bind_slot(r: SSAValue, at: Builder) -> SSAValue:
            view = self.subviews.get(r)
            if view is None:
                return slot_of[self._slot_key(r)]
            return at.insert(hal.BufferSubspanOp.build(
                operands=[slot_of[self._slot_key(view.source)], _clone_constant(view.offset, at),
                          _clone_constant(view.length, at)],
                result_types=[hal.BufferType()])).result

        self.record(op, own_device, block.args[0], bind_slot, rb, clone_constants=True)
        return hal.CommandBufferMemoizeOp.build(
            operands=[device], result_types=[hal.CommandBufferType()], regions=[Region(block)])

    def bind_buffer(self, r: SSAValue, b: Builder) -> SSAValue:
        """The buffer a one-shot recording binds for `r` (a packed transient's subspan of its
        slab, made where it is recorded)."""
        view = self.subviews.get(r)
        if view is None:
            return self.buffers[r]
        return b.insert(hal.BufferSubspanOp.build(
            operands=[self.buffers[view.source], view.offset, view.length],
            result_types=[hal.BufferType()])).result

    def record(self, op: stream.CmdExecuteOp, device: SSAValue, cb: SSAValue, bind: Bind,
               b: Builder, clone_constants: bool = False) -> None:
        for cmd in op.body.block.ops:
            if isinstance(cmd, stream.CmdDispatchOp):
                self._dispatch(cmd, device, cb, bind, b, clone_constants)
            elif isinstance(cmd, stream.CmdCopyOp):
                b.insert(hal.CommandBufferCopyOp.build(operands=[
                    cb, bind(cmd.source, b), bind(cmd.target, b), cmd.length]))
            elif isinstance(cmd, stream.CmdBarrierOp):
                b.insert(hal.CommandBufferBarrierOp.build(operands=[cb]))
            else:
                raise error_at(cmd, f"'{cmd.name}' has no lowering to the HAL")
        b.insert(hal.CommandBufferFinalizeOp.build(operands=[cb]))

    def _dispatch(self, cmd: stream.CmdDispatchOp, device: SSAValue, cb: SSAValue,
                  bind: Bind, b: Builder, clone_constants: bool) -> None:
        ref = cmd.entry_point
        executable = ref.root_reference.data
        entry = ref.nested_references.data[-1].data if ref.nested_references.data else executable
        exe = b.insert(hal.ExecutableLookupOp.build(
            operands=[device], result_types=[hal.ExecutableType()],
            properties={"executable": SymbolRefAttr(executable)})).result
        one = index_constant(b, 1)
        constants = list(cmd.push_constants)
        if clone_constants:
            constants = [_clone_constant(c, b) for c in constants]
        count = workgroup_count(self.grids.get((executable, entry)), constants, b)
        bindings = [bind(r, b) for r in cmd.resources]
        b.insert(hal.CommandBufferDispatchOp.build(
            operands=[cb, exe, [count, one, one], constants, bindings],
            properties={"entry_point": IntegerAttr(self.entry_ordinals[(executable, entry)],
                                                   IndexType())}))


def _clone_constant(value: SSAValue, b: Builder) -> SSAValue:
    """A constant of the function made again inside a memoized recording, which may use nothing
    from outside itself."""
    owner = value.owner
    assert isinstance(owner, arith.ConstantOp)
    return b.insert(owner.clone()).result
