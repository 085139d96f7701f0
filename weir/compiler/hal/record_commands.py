"""How an execute region's commands are recorded into a command buffer (convert-stream-to-hal):
once per call into a one-shot command buffer, or, when nothing in the recording changes from
call to call, once at initialisation into a reusable one (`hal.command_buffer.memoize`) that
each execution gives a table of buffers for its slots.

A slot is one buffer per execution: the function's arguments, its results and its slabs (IREE's
indirect bindings). Constants are the same buffers on every execution, so the recording binds
them itself (direct bindings), each set of constants that hold the same bytes (one buffer at
run time: the module stores those bytes once) through one import: an execution's table then
holds only what changes from call to call (a GPT-2 step's table had 74 slots, 55 of them
constants, 25 distinct; MobileNetV2's 109, 106 of them constants)."""

from __future__ import annotations

from collections.abc import Callable

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
    StringAttr,
    SymbolRefAttr,
)

Bind = Callable[[SSAValue, Builder], SSAValue]


class CommandRecorder:
    """Records one function's executes. `buffers` maps resources to their buffers, `subviews`
    packed transients to their place in a slab, and `constant_keys` constant resources to
    their bytes' rodata key and device ordinal (filled as the function is lowered)."""

    def __init__(self, entry_ordinals: dict[tuple[str, str], int],
                 grids: dict[tuple[str, str], WorkgroupGrid],
                 buffers: dict[SSAValue, SSAValue],
                 subviews: dict[SSAValue, stream.ResourceSubviewOp],
                 constant_keys: dict[SSAValue, tuple[str, int]]) -> None:
        self.entry_ordinals = entry_ordinals
        self.grids = grids
        self.buffers = buffers
        self.subviews = subviews
        self.constant_keys = constant_keys

    def _bound_directly(self, resource: SSAValue, ordinal: int) -> str | None:
        """The rodata key of a constant of the execute's own device, which its recording
        binds itself; None for what takes a slot."""
        key = self.constant_keys.get(resource)
        return key[0] if key is not None and key[1] == ordinal else None

    def memoizable_slots(self, op: stream.CmdExecuteOp, ordinal: int) -> list[SSAValue] | None:
        """The resources an execute on device `ordinal` binds through its table (a packed
        transient's slab in its place; not its constants), in first-use order, when its
        recording can be made once for every execution: dispatches and barriers only, with
        push constants known at compile time (a dynamic size or offset would change the
        recording from call to call)."""
        slots: dict[SSAValue, None] = {}
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
                if self._bound_directly(base, ordinal) is None:
                    slots[base] = None
        return list(slots)

    def memoized(self, op: stream.CmdExecuteOp, device: SSAValue,
                 slots: list[SSAValue]) -> hal.CommandBufferMemoizeOp:
        """The execute's recording as a memoize region: its own device handle and constants,
        the binding slots as block arguments."""
        block = Block(arg_types=[hal.CommandBufferType(), *[hal.BufferType() for _ in slots]])
        rb = Builder(InsertPoint.at_end(block))
        ordinal = device.owner.ordinal  # type: ignore[union-attr]
        own_device = rb.insert(hal.DeviceGetOp.build(
            result_types=[hal.DeviceType()], properties={"ordinal": ordinal})).result
        slot_of = dict(zip(slots, block.args[1:]))
        imports: dict[str, SSAValue] = {}  # rodata key -> its buffer, imported once here

        def bind_slot(r: SSAValue, at: Builder) -> SSAValue:
            key = self._bound_directly(r, ordinal.value.data)
            if key is not None:
                if key not in imports:
                    imports[key] = at.insert(hal.AllocatorImportRodataOp.build(
                        operands=[own_device], result_types=[hal.BufferType()],
                        properties={"rodata": StringAttr(key)})).result
                return imports[key]
            view = self.subviews.get(r)
            if view is None:
                return slot_of[r]
            return at.insert(hal.BufferSubspanOp.build(
                operands=[slot_of[view.source], _clone_constant(view.offset, at),
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
