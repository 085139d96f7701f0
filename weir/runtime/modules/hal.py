"""The built-in `hal` module: the ABI between compiled programs and the HAL (table in
docs/contracts.md). Every context links it first. Functions marked `arity_only` take str/tuple
operands, which have no calling-convention letter, so importers are checked by arity only.

Extras beyond the contract table, for programs that want them: `fence.query(fence) -> i`,
`device.queue.copy(device, wait, signal, src, src_offset, dst, dst_offset, length)` and
`device.queue.fill(device, wait, signal, dst, offset, length, pattern)`.
"""

from __future__ import annotations

from typing import Any

from weir.errors import InputError, LoadError, RuntimeFault
from weir.format.image import ModuleImage
from weir.runtime.hal.buffer import Buffer
from weir.runtime.hal.buffer_view import BufferView, format_type
from weir.runtime.hal.command_buffer import CommandBuffer
from weir.runtime.hal.device import Device
from weir.runtime.hal.element_types import numpy_dtype
from weir.runtime.hal.executable import Executable
from weir.runtime.hal.fence import Fence
from weir.runtime.vm.awaited_executes import AWAITED, NOW
from weir.runtime.vm.context import Context
from weir.runtime.vm.native_module import CallerInfo, NativeModule, export, variant_of


class HalState:
    def __init__(self, context: Context) -> None:
        self.context = context


# Every call of a compiled program passes through about ten of these functions, so operands are
# checked the cheap way first (`type(x) is K`, inline in the hottest functions) before `_expect`
# does the full check and says what is wrong. Devices are instances of subclasses of an ABC, for
# which `isinstance` runs Python code in `abc` (about 0.5 µs): the classes already accepted are
# remembered instead.
_DEVICE_CLASSES: set[type] = set()


def _expect(value: Any, kind: type, fn: str, what: str) -> Any:
    if not isinstance(value, kind):
        raise RuntimeFault(f"hal.{fn}: {what} must be a {kind.__name__}, got {type(value).__name__}")
    return value


def _device(value: Any, fn: str) -> Device:
    if type(value) not in _DEVICE_CLASSES:
        _expect(value, Device, fn, "device")
        _DEVICE_CLASSES.add(type(value))
    return value  # type: ignore[no-any-return]


def _reusable(cb: Any, f: str) -> None:
    """An indirect execute's command buffer: one recorded with binding slots."""
    if type(cb) is not CommandBuffer:
        _expect(cb, CommandBuffer, f, "command buffer")
    if cb.binding_count is None:
        raise RuntimeFault(f"hal.{f}: the command buffer is not reusable")


def _fence_or_none(value: Any, fn: str, what: str) -> Fence | None:
    if value is None or type(value) is Fence:
        return value  # type: ignore[no-any-return]
    return _expect(value, Fence, fn, what)  # type: ignore[no-any-return]


def _pattern(value: Any, fn: str) -> bytes:
    """Fill patterns: bytes-like (e.g. a rodata view), or an int 0..255 meaning one byte."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if type(value) is int and 0 <= value < 256:
        return bytes([value])
    raise RuntimeFault(f"hal.{fn}: unsupported pattern {value!r}")


def _argument_named(name: str) -> str:
    """The compiler names a function's tensor arguments `input<i>`: say which argument it is
    (`Function` adds the function), as the scalar argument checks do."""
    index = name.removeprefix("input")
    return f"argument {index} (%{name})" if index.isdigit() else f"input '{name}'"


class HalModule(NativeModule):
    module_name = "hal"
    # Its results are what its functions build (the module verifier knows each one's kind,
    # weir/format/hal_abi.py), and `buffer.load` returns a scalar through `r`: no result check
    # on the ten or so calls of every invocation.
    checks_results = False
    links_bare = True

    def create_state(self, context: Context) -> HalState:
        return HalState(context)

    # ------------------------------------------------------------------------------- devices

    @export("0i_r", name="device.get")
    def device_get(self, state: HalState, ordinal: int) -> Device:
        devices = state.context.devices
        if type(ordinal) is not int or not 0 <= ordinal < len(devices):
            raise LoadError(f"the program uses device #{ordinal} but {len(devices)} device(s) "
                            f"were given: pass one --device per device the module was compiled for")
        return devices[ordinal]

    # ------------------------------------------------------------------------------- buffer views

    @export("0rrrr_", name="buffer_view.assert", arity_only=True)
    def buffer_view_assert(self, state: HalState, view: Any, name: str, dtype: str,
                           shape: tuple[int, ...]) -> None:
        if isinstance(view, BufferView) and view.dtype == dtype and (
                view.shape == shape or len(view.shape) == len(shape)
                and all(e == -1 or e == a for e, a in zip(shape, view.shape))):
            return
        expected = format_type(dtype, tuple("?" if d == -1 else d for d in shape))  # type: ignore[misc]
        actual = format_type(view.dtype, view.shape) if isinstance(view, BufferView) else \
            "null" if view is None else f"a {type(view).__name__}"
        raise InputError(f"{_argument_named(name)} expects {expected}, got {actual}")

    @export("0r_r", name="buffer_view.buffer")
    def buffer_view_buffer(self, state: HalState, view: Any) -> Buffer:
        if type(view) is not BufferView:
            _expect(view, BufferView, "buffer_view.buffer", "view")
        return view.buffer  # type: ignore[no-any-return]

    @export("0ri_I", name="buffer_view.dim")
    def buffer_view_dim(self, state: HalState, view: Any, index: int) -> int:
        v = _expect(view, BufferView, "buffer_view.dim", "view")
        if not 0 <= index < len(v.shape):
            raise RuntimeFault(f"hal.buffer_view.dim: dimension {index} of a rank-{len(v.shape)} view")
        return v.shape[index]  # type: ignore[no-any-return]

    @export("0rIrr_r", name="buffer_view.create", arity_only=True)
    def buffer_view_create(self, state: HalState, buffer: Any, offset: int, dtype: str,
                           shape: tuple[int, ...]) -> BufferView:
        if type(buffer) is not Buffer:
            _expect(buffer, Buffer, "buffer_view.create", "buffer")
        return BufferView(buffer, offset, dtype, shape)

    # ------------------------------------------------------------------------------- memory

    @export("0rIr_r", name="buffer.load", arity_only=True)
    def buffer_load(self, state: HalState, buffer: Any, offset: int, dtype: str) -> Any:
        """One element at a byte offset, as the VM register of its type (`tensor.extract` on
        the host, once the buffer's contents are ready)."""
        buf = _expect(buffer, Buffer, "buffer.load", "buffer")
        dt = numpy_dtype(dtype)
        if type(offset) is not int:
            raise RuntimeFault(f"hal.buffer.load: offset must be an int, got {offset!r}")
        buf.check_range(offset, dt.itemsize, "hal.buffer.load")
        return buf.data[offset:offset + dt.itemsize].view(dt)[0].item()

    @export("0rII_r", name="buffer.subspan")
    def buffer_subspan(self, state: HalState, buffer: Any, offset: int, length: int) -> Buffer:
        """Part of a buffer as a buffer of its own, no copy (a packed transient in its slab)."""
        buf = buffer if type(buffer) is Buffer else _expect(buffer, Buffer, "buffer.subspan",
                                                              "buffer")
        return buf.subspan(offset, length)

    @export("0rI_r", name="allocator.allocate")
    def allocator_allocate(self, state: HalState, device: Any, size: int) -> Buffer:
        if type(device) not in _DEVICE_CLASSES:
            _device(device, "allocator.allocate")
        return device.allocator.allocate(size)  # type: ignore[no-any-return]

    @export("0rr_r", name="allocator.import_rodata")
    def allocator_import_rodata(self, state: HalState, device: Any, data: Any) -> Buffer:
        dev = _device(device, "allocator.import_rodata")
        return dev.allocator.import_readonly(_expect(data, memoryview, "allocator.import_rodata", "data"))  # type: ignore[no-any-return]

    # ------------------------------------------------------------------------------- executables

    @export("0rr_r", name="executable.create", arity_only=True, pass_caller=True)
    def executable_create(self, state: HalState, caller: CallerInfo, device: Any,
                          name: str) -> Executable:
        dev = _device(device, "executable.create")
        image: ModuleImage | None = getattr(caller.module, "image", None)
        if image is None:
            raise LoadError(f"hal.executable.create: module '{caller.module.name}' has no executables")
        exe = next((x for x in image.executables if x.name == name), None)
        if exe is None:
            raise LoadError(f"module '{image.name}' has no executable '{name}'")
        loaders = state.context.instance.executable_loaders
        for variant in exe.variants:
            if loaders.has(variant.format) and dev.can_execute(variant.format):
                return loaders.load(variant.format, image.segments[variant.segment], name=name)
        formats = ", ".join(f"{v.target} ({v.format})" for v in exe.variants)
        raise LoadError(f"executable '{name}' of module '{image.name}' has no variant device "
                        f"'{dev.driver_name}' can run (variants: {formats}; loaders: "
                        f"{', '.join(loaders.formats())})")

    # ------------------------------------------------------------------------------- command buffers

    @export("0r_r", name="command_buffer.create")
    def command_buffer_create(self, state: HalState, device: Any) -> CommandBuffer:
        if type(device) not in _DEVICE_CLASSES:
            _device(device, "command_buffer.create")
        return device.create_command_buffer()  # type: ignore[no-any-return]

    @export("0rI_r", name="command_buffer.create.reusable")
    def command_buffer_create_reusable(self, state: HalState, device: Any,
                                       binding_count: int) -> CommandBuffer:
        """A command buffer recorded once (by a module's initializer) with `binding_count` slots,
        submitted by `device.queue.execute.indirect` with a buffer for each slot."""
        if type(binding_count) is not int or binding_count < 0:
            raise RuntimeFault(f"hal.command_buffer.create.reusable: binding count must be a "
                               f"non-negative int, got {binding_count!r}")
        return _device(device, "command_buffer.create.reusable").create_command_buffer(
            binding_count)

    @export("0rrirrr_", name="command_buffer.dispatch", arity_only=True)
    def command_buffer_dispatch(self, state: HalState, cb: Any, executable: Any, entry: int,
                                workgroups: tuple[int, ...], constants: tuple[int, ...],
                                bindings: tuple[Buffer, ...]) -> None:
        if type(cb) is not CommandBuffer:
            _expect(cb, CommandBuffer, "command_buffer.dispatch", "command buffer")
        cb.dispatch(executable, entry, tuple(workgroups), tuple(constants), tuple(bindings))

    @export("0rrIrII_", name="command_buffer.copy_buffer", arity_only=True)
    def command_buffer_copy_buffer(self, state: HalState, cb: Any, src: Any, src_offset: int,
                                   dst: Any, dst_offset: int, length: int) -> None:
        _expect(cb, CommandBuffer, "command_buffer.copy_buffer", "command buffer").copy_buffer(
            _expect(src, Buffer, "command_buffer.copy_buffer", "source"), src_offset,
            _expect(dst, Buffer, "command_buffer.copy_buffer", "target"), dst_offset, length)

    @export("0rrIIr_", name="command_buffer.fill_buffer", arity_only=True)
    def command_buffer_fill_buffer(self, state: HalState, cb: Any, dst: Any, offset: int,
                                   length: int, pattern: Any) -> None:
        _expect(cb, CommandBuffer, "command_buffer.fill_buffer", "command buffer").fill_buffer(
            _expect(dst, Buffer, "command_buffer.fill_buffer", "target"), offset, length,
            _pattern(pattern, "command_buffer.fill_buffer"))

    @export("0r_", name="command_buffer.execution_barrier", arity_only=True)
    def command_buffer_execution_barrier(self, state: HalState, cb: Any) -> None:
        _expect(cb, CommandBuffer, "command_buffer.execution_barrier", "command buffer").execution_barrier()

    @export("0r_", name="command_buffer.finalize", arity_only=True)
    def command_buffer_finalize(self, state: HalState, cb: Any) -> None:
        if type(cb) is not CommandBuffer:
            _expect(cb, CommandBuffer, "command_buffer.finalize", "command buffer")
        cb.finalize()

    # ------------------------------------------------------------------------------- fences

    @export("0r_r", name="fence.create")
    def fence_create(self, state: HalState, device: Any) -> Fence:
        if type(device) not in _DEVICE_CLASSES:
            _device(device, "fence.create")
        return Fence.create()  # a fresh semaphore at 0 (no device makes its own kind)

    @export("0r_r", name="fence.join", arity_only=True)
    def fence_join(self, state: HalState, fences: tuple[Fence | None, ...]) -> Fence:
        return Fence.join(fences)

    @export("0r_", name="fence.signal", arity_only=True)
    def fence_signal(self, state: HalState, fence: Any) -> None:
        _expect(fence, Fence, "fence.signal", "fence").signal()

    @export("0rr_", name="fence.fail", arity_only=True)
    def fence_fail(self, state: HalState, fence: Any, message: str) -> None:
        _expect(fence, Fence, "fence.fail", "fence").fail(str(message))

    @export("0r_i", name="fence.query")
    def fence_query(self, state: HalState, fence: Any) -> int:
        return 1 if _expect(fence, Fence, "fence.query", "fence").query() else 0

    @export("0Ir_", name="fence.await", arity_only=True)
    def fence_await(self, state: HalState, timeout_ms: int, fences: tuple[Fence | None, ...]) -> None:
        """A negative timeout waits without limit (interruptibly), up to the calling thread's
        deadline (`DeadlineExceeded`)."""
        timeout = None if timeout_ms < 0 else timeout_ms / 1000.0
        # One fence (the usual case) is waited on as it is; only several need joining.
        fence = fences[0] if type(fences) is tuple and len(fences) == 1 \
            and type(fences[0]) is Fence else Fence.join(fences)
        if fence._all_reached():  # raises, as `wait` would, for a failed point
            return  # the usual case on local-sync: the work ran inline and signalled already
        # Rather than sleep while a worker wakes up, runs the work, and wakes this thread again,
        # this thread runs the ready work itself (a synchronous call's usual case).
        for device in state.context.devices:
            device.help_until(fence.reached)
        if not fence.wait(timeout, "waiting in hal.fence.await"):
            raise RuntimeFault(f"hal.fence.await: timed out after {timeout_ms} ms")

    # ------------------------------------------------------------------------------- queues

    @export("0rrrI_r", name="device.queue.alloca", arity_only=True)
    def queue_alloca(self, state: HalState, device: Any, wait: Any, signal: Any, size: int) -> Buffer:
        f = "device.queue.alloca"
        return _device(device, f).queue_alloca(
            _fence_or_none(wait, f, "wait"), _expect(signal, Fence, f, "signal"), size)

    @export("0rrrr_", name="device.queue.dealloca", arity_only=True)
    def queue_dealloca(self, state: HalState, device: Any, wait: Any, signal: Any, buffer: Any) -> None:
        f = "device.queue.dealloca"
        _device(device, f).queue_dealloca(
            _fence_or_none(wait, f, "wait"), _expect(signal, Fence, f, "signal"),
            _expect(buffer, Buffer, f, "buffer"))

    # `awaited` (the variants below): the caller awaits `signal` right after
    # (vm/awaited_executes.py), so the device may run work that is ready now on this thread.
    @export("0rrrr_", name="device.queue.execute", arity_only=True)
    def queue_execute(self, state: HalState, device: Any, wait: Any, signal: Any,
                      cbs: tuple[CommandBuffer, ...], awaited: bool = False) -> None:
        f = "device.queue.execute"
        if type(device) not in _DEVICE_CLASSES:
            _device(device, f)
        (device.queue_execute_awaited if awaited else device.queue_execute)(
            _fence_or_none(wait, f, "wait"),
            signal if type(signal) is Fence else _expect(signal, Fence, f, "signal"), tuple(cbs))

    @export("0rrrrr_", name="device.queue.execute.indirect", arity_only=True)
    def queue_execute_indirect(self, state: HalState, device: Any, wait: Any, signal: Any,
                               cb: Any, bindings: tuple[Buffer, ...],
                               awaited: bool = False) -> None:
        f = "device.queue.execute.indirect"
        if type(device) not in _DEVICE_CLASSES:
            _device(device, f)
        _reusable(cb, f)
        (device.queue_execute_awaited if awaited else device.queue_execute)(
            _fence_or_none(wait, f, "wait"),
            signal if type(signal) is Fence else _expect(signal, Fence, f, "signal"), (cb,),
            tuple(bindings))

    @variant_of("device.queue.execute", AWAITED)
    def queue_execute_awaited(self, state: HalState, device: Any, wait: Any, signal: Any,
                              cbs: tuple[CommandBuffer, ...]) -> None:
        self.queue_execute(state, device, wait, signal, cbs, True)

    @variant_of("device.queue.execute.indirect", AWAITED)
    def queue_execute_indirect_awaited(self, state: HalState, device: Any, wait: Any,
                                       signal: Any, cb: Any,
                                       bindings: tuple[Buffer, ...]) -> None:
        self.queue_execute_indirect(state, device, wait, signal, cb, bindings, True)

    @variant_of("device.queue.execute", NOW)
    def queue_execute_now(self, state: HalState, fence_device: Any, device: Any, wait: Any,
                          cbs: tuple[CommandBuffer, ...], timeout_ms: int) -> None:
        """`fence.create(fence_device)`, `device.queue.execute` signalling that fence, and
        `fence.await(timeout_ms)` of it, in one (vm/awaited_executes.py)."""
        if type(fence_device) not in _DEVICE_CLASSES:
            _device(fence_device, "fence.create")
        f = "device.queue.execute"
        if type(device) not in _DEVICE_CLASSES:
            _device(device, f)
        wait = _fence_or_none(wait, f, "wait")
        cbs = tuple(cbs)
        if not device.execute_now(wait, cbs):
            signal = Fence.create()
            device.queue_execute_awaited(wait, signal, cbs)
            self.fence_await(state, timeout_ms, (signal,))

    @variant_of("device.queue.execute.indirect", NOW)
    def queue_execute_indirect_now(self, state: HalState, fence_device: Any, device: Any,
                                   wait: Any, cb: Any, bindings: tuple[Buffer, ...],
                                   timeout_ms: int) -> None:
        """`fence.create(fence_device)`, `device.queue.execute.indirect` signalling that fence,
        and `fence.await(timeout_ms)` of it, in one (vm/awaited_executes.py)."""
        if type(fence_device) not in _DEVICE_CLASSES:
            _device(fence_device, "fence.create")
        f = "device.queue.execute.indirect"
        if type(device) not in _DEVICE_CLASSES:
            _device(device, f)
        if type(cb) is not CommandBuffer or cb.binding_count is None:
            _reusable(cb, f)
        if wait is not None and type(wait) is not Fence:
            wait = _fence_or_none(wait, f, "wait")
        if type(bindings) is not tuple:
            bindings = tuple(bindings)
        if not device.execute_indirect_now(wait, cb, bindings):
            signal = Fence.create()
            device.queue_execute_awaited(wait, signal, (cb,), bindings)
            self.fence_await(state, timeout_ms, (signal,))

    @export("0rrr_", name="device.queue.barrier", arity_only=True)
    def queue_barrier(self, state: HalState, device: Any, wait: Any, signal: Any) -> None:
        f = "device.queue.barrier"
        _device(device, f).queue_barrier(
            _fence_or_none(wait, f, "wait"), _expect(signal, Fence, f, "signal"))

    @export("0rrrrIrII_", name="device.queue.copy", arity_only=True)
    def queue_copy(self, state: HalState, device: Any, wait: Any, signal: Any, src: Any,
                   src_offset: int, dst: Any, dst_offset: int, length: int) -> None:
        f = "device.queue.copy"
        _device(device, f).queue_copy(
            _fence_or_none(wait, f, "wait"), _expect(signal, Fence, f, "signal"),
            _expect(src, Buffer, f, "source"), src_offset, _expect(dst, Buffer, f, "target"),
            dst_offset, length)

    @export("0rrrrIIr_", name="device.queue.fill", arity_only=True)
    def queue_fill(self, state: HalState, device: Any, wait: Any, signal: Any, dst: Any,
                   offset: int, length: int, pattern: Any) -> None:
        f = "device.queue.fill"
        _device(device, f).queue_fill(
            _fence_or_none(wait, f, "wait"), _expect(signal, Fence, f, "signal"),
            _expect(dst, Buffer, f, "target"), offset, length, _pattern(pattern, f))
