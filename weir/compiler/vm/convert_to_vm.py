"""Rewrites the host program into a `vm.module`: every hal op becomes a call into the runtime's
`hal` module, scalar math becomes typed VM arithmetic (host_scalars.py), executables are created
once per context (and per device that dispatches them) by the module initializer and kept in
globals, constants become rodata."""

from __future__ import annotations

from weir.compiler.pass_base import Pass
from weir.compiler.state import CompilationState
from weir.compiler.targets.element_types import dtype_name
from weir.compiler.vm.host_scalars import canonical_constant, is_host_scalar_op, lower_scalar_op
from weir.dialects import hal, vm
from weir.ir.diagnostics import error_at
from weir.ir.upstream import (
    AnyFloat,
    arith,
    ArrayAttr,
    Attribute,
    cf,
    Block,
    Builder,
    DictionaryAttr,
    Float64Type,
    FloatAttr,
    func,
    FunctionType,
    IndexType,
    InsertPoint,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    Operation,
    Region,
    SSAValue,
    StringAttr,
    SymbolRefAttr,
)

INITIALIZER = "__init"


def cconv_letter(t: Attribute) -> str:
    if isinstance(t, IndexType):
        return "I"
    if isinstance(t, IntegerType):
        return "I" if t.width.data == 64 else "i"
    if isinstance(t, Float64Type):
        return "F"
    if isinstance(t, AnyFloat):  # f32, and the narrower floats held in an f32 register
        return "f"
    return "r"


def cconv(inputs: list[Attribute], outputs: list[Attribute]) -> str:
    return "0" + "".join(map(cconv_letter, inputs)) + "_" + "".join(map(cconv_letter, outputs))


class ConvertToVM(Pass):
    flag = "convert-to-vm"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        _ModuleLowering().run(module, state)


class _ModuleLowering:
    """One lowering's state (the vm.module body being built, its imports and rodata), kept off
    the pass object, which the pipeline shares between compilations."""

    def __init__(self) -> None:
        self.body = Block()
        self.imports: dict[str, vm.ImportOp] = {}
        self.rodata: set[str] = set()
        # (executable, device ordinal) -> the global holding it, for each device dispatching it.
        self.executable_globals: dict[tuple[str, int], str] = {}
        self.lookups: dict[Operation, str] = {}
        # Memoized command buffers: (global, device ordinal, recording region), recorded by the
        # initializer once the executables exist.
        self.memoized: list[tuple[str, int, Region]] = []
        self.memo_ordinals: dict[Operation, int] = {}
        # (rodata key, device ordinal) -> the global holding its buffer, made by the initializer:
        # constants are wrapped once per module, not on every call.
        self.constant_globals: dict[tuple[str, int], str] = {}

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        body = self.body
        executables: list[hal.ExecutableOp] = []
        dependencies: list[str] = []
        for op in list(module.body.block.ops):
            if isinstance(op, hal.ExecutableOp):
                executables.append(op)
            elif isinstance(op, func.FuncOp) and not op.body.blocks:
                name = op.sym_name.data
                model = op.attributes.get("iree.abi.model")
                self._import(name, cconv(list(op.function_type.inputs.data),
                                         list(op.function_type.outputs.data)),
                             model.data if isinstance(model, StringAttr) else "sync")
                dep = name.split(".", 1)[0]
                if dep not in dependencies:
                    dependencies.append(dep)
        for exe in executables:
            exe.detach()
        self._plan_executable_globals(module)
        for global_name in self.executable_globals.values():
            body.add_op(vm.GlobalOp.build(properties={
                "sym_name": StringAttr(global_name), "type": hal.ExecutableType()}))
        for global_name in self.constant_globals.values():
            body.add_op(vm.GlobalOp.build(properties={
                "sym_name": StringAttr(global_name), "type": hal.BufferType()}))
        for op in list(module.body.block.ops):
            if isinstance(op, func.FuncOp) and op.body.blocks:
                body.add_op(self._function(op))
                body.add_op(self._export(op))
        if self.executable_globals or self.memoized or self.constant_globals:
            body.add_op(self._initializer())
        for exe in executables:
            body.add_op(exe)
        vm_module = vm.ModuleOp.build(properties={
            "sym_name": StringAttr(state.module_name),
            "dependencies": ArrayAttr([StringAttr(d) for d in dependencies]),
            "devices": ArrayAttr([StringAttr(name) for name in state.devices.names]),
        }, regions=[Region(body)])
        for op in list(module.body.block.ops):
            op.detach()
            op.erase()
        module.body.block.add_op(vm_module)

    # --- module-level pieces -----------------------------------------------------------------

    def _import(self, name: str, signature: str, model: str = "sync") -> None:
        if name not in self.imports:
            op = vm.ImportOp.build(properties={
                "sym_name": StringAttr(name), "cconv": StringAttr(signature),
                "model": StringAttr(model)})
            self.imports[name] = op
            Builder(InsertPoint.at_start(self.body)).insert(op)

    def _export(self, fn: func.FuncOp) -> vm.ExportOp:
        reflection: dict[str, Attribute] = {}
        for key in ("iree.abi.declaration", "weir.abi.scalar_types"):
            value = fn.attributes.get(key)
            if isinstance(value, StringAttr):
                reflection[key] = value
        model = fn.attributes.get("iree.abi.model")
        return vm.ExportOp.build(properties={
            "function_ref": SymbolRefAttr(fn.sym_name.data),
            "export_name": fn.sym_name,
            "model": model if isinstance(model, StringAttr) else StringAttr("sync"),
            "reflection": DictionaryAttr(reflection),
        })

    def _plan_executable_globals(self, module: ModuleOp) -> None:
        """One global per executable and device that dispatches it, and the global each lookup
        loads (the device of a lookup is still a `hal.device.get` here, before any function is
        lowered); the device ordinal of each memoized command buffer, for the same reason."""
        for op in module.walk():
            if isinstance(op, hal.AllocatorImportRodataOp):
                device = op.device.owner
                if isinstance(device, hal.DeviceGetOp):
                    key = (op.rodata.data, device.ordinal.value.data)
                    suffix = "" if key[1] == 0 else f"__device{key[1]}"
                    self.lookups[op] = self.constant_globals.setdefault(
                        key, f"_constant_{len(self.constant_globals)}{suffix}")
            if isinstance(op, hal.CommandBufferMemoizeOp):
                device = op.device.owner
                if not isinstance(device, hal.DeviceGetOp):
                    raise error_at(op, "hal.command_buffer.memoize needs a device from "
                                       "hal.device.get")
                self.memo_ordinals[op] = device.ordinal.value.data
            if isinstance(op, hal.ExecutableLookupOp):
                device = op.device.owner
                if not isinstance(device, hal.DeviceGetOp):
                    raise error_at(op, "hal.executable.lookup needs a device from hal.device.get")
                key = (op.executable.root_reference.data, device.ordinal.value.data)
                suffix = "" if key[1] == 0 else f"__device{key[1]}"
                self.lookups[op] = self.executable_globals.setdefault(
                    key, f"_executable_{key[0]}{suffix}")

    def _initializer(self) -> vm.FuncOp:
        block = Block()
        b = Builder(InsertPoint.at_end(block))
        devices: dict[int, SSAValue] = {}
        for (exe, ordinal), global_name in self.executable_globals.items():
            if ordinal not in devices:
                devices[ordinal] = self._call(
                    b, "hal.device.get", "0i_r", [self._const(b, ordinal, IndexType())],
                    [hal.DeviceType()])[0]
            name = self._const(b, exe, vm.StrType())
            created = self._call(b, "hal.executable.create", "0rr_r", [devices[ordinal], name],
                                 [hal.ExecutableType()])[0]
            b.insert(vm.GlobalStoreOp.build(operands=[created], properties={
                "global": SymbolRefAttr(global_name)}))
        for (key, ordinal), global_name in self.constant_globals.items():
            if ordinal not in devices:
                devices[ordinal] = self._call(
                    b, "hal.device.get", "0i_r", [self._const(b, ordinal, IndexType())],
                    [hal.DeviceType()])[0]
            created = self._import_rodata(b, key, devices[ordinal])
            b.insert(vm.GlobalStoreOp.build(operands=[created], properties={
                "global": SymbolRefAttr(global_name)}))
        for global_name, ordinal, region in self.memoized:
            self._record_memoized(b, global_name, ordinal, region)
        b.insert(vm.ReturnOp.build(operands=[[]]))
        return vm.FuncOp.build(properties={
            "sym_name": StringAttr(INITIALIZER),
            "function_type": FunctionType.from_lists([], [])}, regions=[Region(block)])

    def _import_rodata(self, b: Builder, key: str, device: SSAValue) -> SSAValue:
        if key not in self.rodata:
            self.rodata.add(key)
            self.body.add_op(vm.RodataOp.build(properties={
                "sym_name": StringAttr(key), "data": StringAttr(key)}))
        data = b.insert(vm.RodataLoadOp.build(
            result_types=[vm.TupleType()], properties={"rodata": SymbolRefAttr(key)}))
        return self._call(b, "hal.allocator.import_rodata", "0rr_r", [device, data.result],
                          [hal.BufferType()])[0]

    def _record_memoized(self, b: Builder, global_name: str, ordinal: int,
                         region: Region) -> None:
        """The recording of a memoized command buffer, run once by the initializer: the region's
        ops moved into it and lowered there, its slot arguments the slot numbers."""
        block = region.block
        device = self._call(b, "hal.device.get", "0i_r", [self._const(b, ordinal, IndexType())],
                            [hal.DeviceType()])[0]
        cb = self._call(b, "hal.command_buffer.create.reusable", "0rI_r",
                        [device, self._const(b, len(block.args) - 1, IndexType())],
                        [hal.CommandBufferType()])[0]
        block.args[0].replace_all_uses_with(cb)
        for slot, arg in enumerate(block.args[1:]):
            arg.replace_all_uses_with(self._const(b, slot, IndexType()))
        for op in list(block.ops):
            op.detach()
            b.insert(op)
            self._lower(op)
        b.insert(vm.GlobalStoreOp.build(operands=[cb], properties={
            "global": SymbolRefAttr(global_name)}))

    def _bindings(self, b: Builder, bindings: list[SSAValue]) -> SSAValue:
        """A dispatch's bindings: buffers, or in a memoized recording (slot, offset, length)
        triples flattened into one tuple (a call operand is one level of registers); a whole
        slot is (slot, 0, -1)."""
        if not any(isinstance(v.type, IndexType) or isinstance(v.owner, vm.TupleOp)
                   for v in bindings):
            return self._tuple(b, bindings)
        flat: list[SSAValue] = []
        for v in bindings:
            if isinstance(v.owner, vm.TupleOp):
                flat.extend(v.owner.elements)
            else:
                flat.extend([v, self._const(b, 0, IndexType()), self._const(b, -1, IndexType())])
        return self._tuple(b, flat)

    # --- helpers ------------------------------------------------------------------------------

    def _const(self, b: Builder, value: int | float | str | None, t: Attribute) -> SSAValue:
        if value is None:
            attr = None
        elif isinstance(value, str):
            attr = StringAttr(value)
        elif isinstance(value, float):
            attr = FloatAttr(value, Float64Type())
        else:
            attr = IntegerAttr(value, IntegerType(64))
        props = {"value": attr} if attr is not None else {}
        return b.insert(vm.ConstOp.build(properties=props, result_types=[t])).result

    def _tuple(self, b: Builder, values: list[SSAValue]) -> SSAValue:
        return b.insert(vm.TupleOp.build(operands=[values],
                                          result_types=[vm.TupleType()])).result

    def _call(self, b: Builder, callee: str, signature: str, args: list[SSAValue],
              results: list[Attribute]) -> list[SSAValue]:
        self._import(callee, signature)
        call = b.insert(vm.CallOp.build(operands=[args], result_types=[results],
                                         properties={"callee": SymbolRefAttr(callee)}))
        return list(call.results)

    # --- functions ----------------------------------------------------------------------------

    def _function(self, fn: func.FuncOp) -> vm.FuncOp:
        region = fn.detach_region(fn.body)
        for block in region.blocks:
            for op in list(block.ops):
                self._lower(op)
        return vm.FuncOp.build(properties={
            "sym_name": fn.sym_name, "function_type": fn.function_type}, regions=[region])

    def _lower(self, op: Operation) -> None:
        if isinstance(op, vm.FailOp | vm.ConstOp):  # already VM: a failed host check (cf.assert)
            return
        b = Builder(InsertPoint.before(op))
        results: list[SSAValue] | None
        if isinstance(op, arith.ConstantOp):
            results = [b.insert(vm.ConstOp.build(
                properties={"value": canonical_constant(op.value, op.result.type, op)},
                result_types=[op.result.type])).result]
        elif is_host_scalar_op(op):
            results = [lower_scalar_op(op, b)]
        elif isinstance(op, func.CallOp):
            call = b.insert(vm.CallOp.build(
                operands=[list(op.arguments)], result_types=[[r.type for r in op.results]],
                properties={"callee": op.callee}))
            results = list(call.results)
        elif isinstance(op, func.ReturnOp):
            b.insert(vm.ReturnOp.build(operands=[list(op.arguments)]))
            results = []
        elif isinstance(op, cf.BranchOp | cf.ConditionalBranchOp):
            results = self._lower_branch(op, b)
        elif op.name.startswith("hal."):
            results = self._lower_hal(op, b)
        else:
            raise error_at(op, f"'{op.name}' cannot be lowered to the VM")
        for old, new in zip(op.results, results, strict=True):
            old.replace_all_uses_with(new)
        op.detach()
        op.erase()

    def _lower_branch(self, op: cf.BranchOp | cf.ConditionalBranchOp, b: Builder) -> list[SSAValue]:
        """Branches between the blocks that lower-host-control-flow made: same blocks, same
        block arguments, VM spelling."""
        if isinstance(op, cf.BranchOp):
            b.insert(vm.BranchOp.build(operands=[list(op.arguments)], successors=[op.successor]))
        else:
            b.insert(vm.CondBranchOp.build(
                operands=[op.cond, list(op.then_arguments), list(op.else_arguments)],
                successors=[op.then_block, op.else_block]))
        return []

    def _buffer_load(self, op: hal.BufferLoadOp, b: Builder) -> list[SSAValue]:
        """The element comes back as a scalar register of the type the dtype names; like every
        hal function taking a str operand, the import is matched by arity (its `r` result)."""
        dtype = self._const(b, dtype_name(op.result.type, op), vm.StrType())
        return self._call(b, "hal.buffer.load", "0rIr_r", [op.source, op.offset, dtype],
                          [op.result.type])

    def _lower_hal(self, op: Operation, b: Builder) -> list[SSAValue]:
        c = self._call
        if isinstance(op, hal.DeviceGetOp):
            return c(b, "hal.device.get", "0i_r",
                     [self._const(b, op.ordinal.value.data, IndexType())], [hal.DeviceType()])
        if isinstance(op, hal.ExecutableLookupOp):
            load = b.insert(vm.GlobalLoadOp.build(
                result_types=[hal.ExecutableType()],
                properties={"global": SymbolRefAttr(self.lookups[op])}))
            return [load.result]
        if isinstance(op, hal.BufferViewAssertOp):
            shape = [self._const(b, d.value.data, IndexType()) for d in op.shape.data]
            c(b, "hal.buffer_view.assert", "0rrrr_", [
                op.view, self._const(b, op.message.data, vm.StrType()),
                self._const(b, dtype_name(op.element_type, op), vm.StrType()),
                self._tuple(b, shape)], [])
            return []
        if isinstance(op, hal.BufferLoadOp):
            return self._buffer_load(op, b)
        if isinstance(op, hal.BufferViewBufferOp):
            return c(b, "hal.buffer_view.buffer", "0r_r", [op.view], [hal.BufferType()])
        if isinstance(op, hal.BufferViewDimOp):
            return c(b, "hal.buffer_view.dim", "0ri_I",
                     [op.view, self._const(b, op.index.value.data, IntegerType(32))],
                     [IndexType()])
        if isinstance(op, hal.BufferViewCreateOp):
            return c(b, "hal.buffer_view.create", "0rIrr_r", [
                op.buffer, self._const(b, 0, IndexType()),
                self._const(b, dtype_name(op.element_type, op), vm.StrType()),
                self._tuple(b, list(op.dims))], [hal.BufferViewType()])
        if isinstance(op, hal.BufferSubspanOp):
            if isinstance(op.source.type, IndexType):
                # A binding slot of a memoized recording (its number, see _record_memoized): the
                # binding is the slot at an offset, resolved against each execution's table.
                return [self._tuple(b, [op.source, op.offset, op.length])]
            return c(b, "hal.buffer.subspan", "0rII_r", [op.source, op.offset, op.length],
                     [hal.BufferType()])
        if isinstance(op, hal.AllocatorAllocateOp):
            return c(b, "hal.allocator.allocate", "0rI_r", [op.device, op.size],
                     [hal.BufferType()])
        if isinstance(op, hal.AllocatorImportRodataOp):
            if op in self.lookups:  # wrapped once by the initializer
                return [b.insert(vm.GlobalLoadOp.build(
                    result_types=[hal.BufferType()],
                    properties={"global": SymbolRefAttr(self.lookups[op])})).result]
            return [self._import_rodata(b, op.rodata.data, op.device)]
        if isinstance(op, hal.CommandBufferMemoizeOp):
            name = f"_command_buffer_{len(self.memoized)}"
            self.body.add_op(vm.GlobalOp.build(properties={
                "sym_name": StringAttr(name), "type": hal.CommandBufferType()}))
            self.memoized.append((name, self.memo_ordinals[op], op.detach_region(op.body)))
            load = b.insert(vm.GlobalLoadOp.build(
                result_types=[hal.CommandBufferType()],
                properties={"global": SymbolRefAttr(name)}))
            return [load.result]
        if isinstance(op, hal.QueueExecuteIndirectOp):
            wait = op.wait if op.wait is not None else self._const(b, None, hal.FenceType())
            c(b, "hal.device.queue.execute.indirect", "0rrrrr_", [
                op.device, wait, op.signal, op.command_buffer, self._tuple(b, list(op.bindings))],
              [])
            return []
        if isinstance(op, hal.CommandBufferCreateOp):
            return c(b, "hal.command_buffer.create", "0r_r", [op.device],
                     [hal.CommandBufferType()])
        if isinstance(op, hal.CommandBufferDispatchOp):
            c(b, "hal.command_buffer.dispatch", "0rrirrr_", [
                op.command_buffer, op.executable,
                self._const(b, op.entry_point.value.data, IntegerType(32)),
                self._tuple(b, list(op.workgroups)), self._tuple(b, list(op.constants)),
                self._bindings(b, list(op.bindings))], [])
            return []
        if isinstance(op, hal.CommandBufferCopyOp):
            zero = self._const(b, 0, IndexType())
            c(b, "hal.command_buffer.copy_buffer", "0rrIrII_",
              [op.command_buffer, op.source, zero, op.target, zero, op.length], [])
            return []
        if isinstance(op, hal.CommandBufferBarrierOp):
            c(b, "hal.command_buffer.execution_barrier", "0r_", [op.command_buffer], [])
            return []
        if isinstance(op, hal.CommandBufferFinalizeOp):
            c(b, "hal.command_buffer.finalize", "0r_", [op.command_buffer], [])
            return []
        if isinstance(op, hal.FenceCreateOp):
            return c(b, "hal.fence.create", "0r_r", [op.device], [hal.FenceType()])
        if isinstance(op, hal.FenceJoinOp):
            return c(b, "hal.fence.join", "0r_r", [self._tuple(b, list(op.fences))],
                     [hal.FenceType()])
        if isinstance(op, hal.FenceAwaitOp):
            c(b, "hal.fence.await", "0Ir_", [
                self._const(b, op.timeout_ms.value.data, IndexType()),
                self._tuple(b, list(op.fences))], [])
            return []
        if isinstance(op, hal.QueueExecuteOp):
            wait = op.wait if op.wait is not None else self._const(b, None, hal.FenceType())
            c(b, "hal.device.queue.execute", "0rrrr_", [
                op.device, wait, op.signal, self._tuple(b, list(op.command_buffers))], [])
            return []
        if isinstance(op, hal.QueueCopyOp):
            wait = op.wait if op.wait is not None else self._const(b, None, hal.FenceType())
            zero = self._const(b, 0, IndexType())
            c(b, "hal.device.queue.copy", "0rrrrIrII_", [
                op.device, wait, op.signal, op.source, zero, op.target, zero, op.length], [])
            return []
        if isinstance(op, hal.QueueBarrierOp):
            wait = op.wait if op.wait is not None else self._const(b, None, hal.FenceType())
            c(b, "hal.device.queue.barrier", "0rrr_", [op.device, wait, op.signal], [])
            return []
        raise error_at(op, f"'{op.name}' cannot be lowered to the VM")
