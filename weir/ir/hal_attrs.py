"""Typed HAL device attributes that weir's IR mentions before the HAL dialect lowers anything.

Why here and not in `weir/dialects/hal.py`: xDSL 0.74 keeps any attribute it does not know as
opaque text (DESIGN.md §3, "unregistered attributes are opaque text"), and the input programs
use `#hal.device.promise<@dev>` / `#hal.device.optimal<[...]>` / `#hal.device.affinity<@dev>`
long before the HAL dialect proper is involved. The HAL dialect module is expected to list
`HAL_ATTRIBUTES` in its `DIALECT`; `weir.ir.context.make_context` also loads them on their own
when no dialect provides them, so these attributes always parse as real types.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import ArrayAttr, IntAttr, StringAttr
from xdsl.ir import Attribute, ParametrizedAttribute
from xdsl.irdl import irdl_attr_definition, param_def
from xdsl.parser import AttrParser
from xdsl.printer import Printer


def _parse_device_and_queues(parser: AttrParser) -> tuple[StringAttr, ArrayAttr[IntAttr]]:
    """Parse `<@device>` or `<@device, [q0, q1, ...]>`, the shape IREE gives device refs."""
    parser.parse_punctuation("<")
    device = parser.parse_symbol_name()
    queues: list[int] = []
    if parser.parse_optional_punctuation(",") is not None:
        queues = parser.parse_comma_separated_list(
            parser.Delimiter.SQUARE, lambda: parser.parse_integer(allow_boolean=False)
        )
    parser.parse_punctuation(">")
    return device, ArrayAttr(IntAttr(q) for q in queues)


def _print_device_and_queues(printer: Printer, device: StringAttr, queues: ArrayAttr[IntAttr]) -> None:
    printer.print_string("<")
    printer.print_symbol_name(device.data)
    if queues.data:
        printer.print_string(", [")
        printer.print_list(queues.data, lambda q: printer.print_string(str(q.data)))
        printer.print_string("]")
    printer.print_string(">")


class _DeviceRefAttr(ParametrizedAttribute):
    """Shared shape of attributes that name a `util.global` device and optional queues."""

    device: StringAttr = param_def()
    queues: ArrayAttr[IntAttr] = param_def()

    def __init__(self, device: str | StringAttr, queues: Sequence[int] = ()):
        if isinstance(device, str):
            device = StringAttr(device)
        super().__init__(device, ArrayAttr(IntAttr(q) for q in queues))

    @property
    def device_name(self) -> str:
        return self.device.data

    @property
    def queue_list(self) -> tuple[int, ...]:
        return tuple(q.data for q in self.queues.data)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        return _parse_device_and_queues(parser)

    def print_parameters(self, printer: Printer) -> None:
        _print_device_and_queues(printer, self.device, self.queues)


@irdl_attr_definition
class DevicePromiseAttr(_DeviceRefAttr):
    """`#hal.device.promise<@device>`: the value will live on `@device` once it exists."""

    name = "hal.device.promise"


@irdl_attr_definition
class DeviceAffinityAttr(_DeviceRefAttr):
    """`#hal.device.affinity<@device[, [queues]]>`: run/allocate on `@device`."""

    name = "hal.device.affinity"


@irdl_attr_definition
class DeviceOptimalAttr(ParametrizedAttribute):
    """`#hal.device.optimal<[#a, #b, ...]>`: pick whichever listed device suits the use."""

    name = "hal.device.optimal"

    devices: ArrayAttr[Attribute] = param_def()

    def __init__(self, devices: Sequence[Attribute]):
        super().__init__(ArrayAttr(devices))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        parser.parse_punctuation("<")
        devices = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_attribute)
        parser.parse_punctuation(">")
        return (ArrayAttr(devices),)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<[")
        printer.print_list(self.devices.data, printer.print_attribute)
        printer.print_string("]>")


HAL_ATTRIBUTES: tuple[type[Attribute], ...] = (
    DevicePromiseAttr,
    DeviceAffinityAttr,
    DeviceOptimalAttr,
)
"""Attributes the `hal` dialect's `DIALECT` should include (see module docstring)."""
