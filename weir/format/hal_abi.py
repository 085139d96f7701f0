"""The `hal` module's functions as the module verifier sees them: the calling convention each is
linked with, and the kind of value each operand and result is (weir/format/value_kinds.py).

The calling convention says `r` for a device, a string, a tuple of shape dimensions and a
buffer view alike; this table says which, so a module that passes a string where a device goes,
or returns what `hal.command_buffer.create` made, is refused when it is loaded. The runtime's
`hal` module (weir/runtime/modules/hal.py) implements exactly these functions; a test keeps
the two in step."""

from __future__ import annotations

from dataclasses import dataclass

from weir.format.value_kinds import (
    ANY,
    BUFFER,
    BUFFER_VIEW,
    COMMAND_BUFFER,
    DEVICE,
    EXECUTABLE,
    FENCE,
    INT,
    Kind,
    NUMBER,
    RODATA,
    STRING,
)


@dataclass(frozen=True)
class TupleOf:
    """An operand passed as a tuple of registers, each of `kind` (shapes, bindings, fences)."""

    kind: Kind


Operand = Kind | TupleOf


@dataclass(frozen=True)
class HalFunction:
    cconv: str
    args: tuple[Operand, ...]
    results: tuple[Kind, ...] = ()


_I, _DEV, _FENCE = INT, DEVICE, FENCE
_PATTERN = RODATA | INT  # a fill pattern: bytes, or one byte as an integer

HAL_FUNCTIONS: dict[str, HalFunction] = {
    "device.get": HalFunction("0i_r", (_I,), (DEVICE,)),
    "buffer_view.assert": HalFunction("0rrrr_", (BUFFER_VIEW, STRING, STRING, TupleOf(_I))),
    "buffer_view.buffer": HalFunction("0r_r", (BUFFER_VIEW,), (BUFFER,)),
    "buffer_view.dim": HalFunction("0ri_I", (BUFFER_VIEW, _I), (INT,)),
    "buffer_view.create": HalFunction("0rIrr_r", (BUFFER, _I, STRING, TupleOf(_I)),
                                      (BUFFER_VIEW,)),
    # The element comes back in the register of its type, which the dtype string names.
    "buffer.load": HalFunction("0rIr_r", (BUFFER, _I, STRING), (ANY,)),
    "allocator.allocate": HalFunction("0rI_r", (_DEV, _I), (BUFFER,)),
    "allocator.import_rodata": HalFunction("0rr_r", (_DEV, RODATA), (BUFFER,)),
    "executable.create": HalFunction("0rr_r", (_DEV, STRING), (EXECUTABLE,)),
    "command_buffer.create": HalFunction("0r_r", (_DEV,), (COMMAND_BUFFER,)),
    # Bindings: buffers, or in a reusable command buffer (slot, offset, length) triples whose
    # slot is a binding table index or a buffer the command buffer binds itself.
    "command_buffer.dispatch": HalFunction(
        "0rrirrr_", (COMMAND_BUFFER, EXECUTABLE, _I, TupleOf(_I), TupleOf(NUMBER),
                     TupleOf(BUFFER | INT))),
    "command_buffer.create.reusable": HalFunction("0rI_r", (_DEV, _I), (COMMAND_BUFFER,)),
    "buffer.subspan": HalFunction("0rII_r", (BUFFER, _I, _I), (BUFFER,)),
    "command_buffer.copy_buffer": HalFunction(
        "0rrIrII_", (COMMAND_BUFFER, BUFFER, _I, BUFFER, _I, _I)),
    "command_buffer.fill_buffer": HalFunction(
        "0rrIIr_", (COMMAND_BUFFER, BUFFER, _I, _I, _PATTERN)),
    "command_buffer.execution_barrier": HalFunction("0r_", (COMMAND_BUFFER,)),
    "command_buffer.finalize": HalFunction("0r_", (COMMAND_BUFFER,)),
    "fence.create": HalFunction("0r_r", (_DEV,), (FENCE,)),
    "fence.join": HalFunction("0r_r", (TupleOf(_FENCE),), (FENCE,)),
    "fence.signal": HalFunction("0r_", (_FENCE,)),
    "fence.fail": HalFunction("0rr_", (_FENCE, STRING)),
    "fence.query": HalFunction("0r_i", (_FENCE,), (INT,)),
    "fence.await": HalFunction("0Ir_", (_I, TupleOf(_FENCE))),
    "device.queue.alloca": HalFunction("0rrrI_r", (_DEV, _FENCE, _FENCE, _I), (BUFFER,)),
    "device.queue.dealloca": HalFunction("0rrrr_", (_DEV, _FENCE, _FENCE, BUFFER)),
    "device.queue.execute": HalFunction("0rrrr_", (_DEV, _FENCE, _FENCE,
                                                   TupleOf(COMMAND_BUFFER))),
    "device.queue.execute.indirect": HalFunction(
        "0rrrrr_", (_DEV, _FENCE, _FENCE, COMMAND_BUFFER, TupleOf(BUFFER))),
    "device.queue.barrier": HalFunction("0rrr_", (_DEV, _FENCE, _FENCE)),
    "device.queue.copy": HalFunction("0rrrrIrII_", (_DEV, _FENCE, _FENCE, BUFFER, _I, BUFFER,
                                                    _I, _I)),
    "device.queue.fill": HalFunction("0rrrrIIr_", (_DEV, _FENCE, _FENCE, BUFFER, _I, _I,
                                                   _PATTERN)),
}


def hal_function(import_name: str, nargs: int, nresults: int) -> HalFunction | None:
    """The entry for an import `hal.<function>` declared with this many operands and results;
    None for anything else (an import the `hal` module does not have, or declared with another
    arity, is refused when the context links it)."""
    module, _, name = import_name.partition(".")
    entry = HAL_FUNCTIONS.get(name) if module == "hal" else None
    if entry is None or len(entry.args) != nargs or len(entry.results) != nresults:
        return None
    return entry
