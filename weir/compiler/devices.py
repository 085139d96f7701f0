"""The devices a program runs on, as every phase from `abi` on sees them: named in
`--iree-hal-target-device` order (the order `--device` binds them at run time), the first one the
default for anything the program does not place. Affinities in the IR name devices by symbol;
this table turns a name into its ordinal and says which devices share memory (all local devices
share the host's), which is what decides whether a transfer between them can be elided."""

from __future__ import annotations

from dataclasses import dataclass

from weir.compiler.options import CompilerOptions, TargetDevice
from weir.format.image import DEFAULT_DEVICE_NAME
from weir.ir.hal_attrs import DeviceAffinityAttr, DeviceOptimalAttr, DevicePromiseAttr
from weir.ir.upstream import Attribute

# Device kinds whose memory is the host's: any two devices of these kinds can use one buffer.
HOST_MEMORY_KINDS = frozenset({"local"})


@dataclass(frozen=True)
class DeviceTable:
    devices: tuple[TargetDevice, ...]

    @staticmethod
    def of(options: CompilerOptions) -> DeviceTable:
        return DeviceTable(options.target_devices or (TargetDevice(DEFAULT_DEVICE_NAME),))

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(d.name for d in self.devices)

    @property
    def default(self) -> DeviceAffinityAttr:
        return DeviceAffinityAttr(self.devices[0].name)

    def ordinal(self, name: str) -> int | None:
        return next((i for i, d in enumerate(self.devices) if d.name == name), None)

    def shares_memory(self, a: str, b: str) -> bool:
        kinds = {d.name: d.kind for d in self.devices}
        return a == b or (kinds.get(a) in HOST_MEMORY_KINDS and kinds.get(b) in HOST_MEMORY_KINDS)

    def affinity(self, names: set[str] | list[str]) -> Attribute:
        """One device's affinity, or an allocation usable by several (in binding order)."""
        ordered = sorted(set(names), key=lambda n: self.ordinal(n) or 0)
        if len(ordered) == 1:
            return DeviceAffinityAttr(ordered[0])
        return DeviceOptimalAttr([DeviceAffinityAttr(n) for n in ordered])


def device_names(affinity: Attribute | None) -> list[str]:
    """The devices an affinity attribute names (none for None)."""
    if isinstance(affinity, DevicePromiseAttr | DeviceAffinityAttr):
        return [affinity.device_name]
    if isinstance(affinity, DeviceOptimalAttr):
        return [n for a in affinity.devices.data for n in device_names(a)]
    return []


def execution_device(affinity: Attribute | None, table: DeviceTable) -> str:
    """The device work with this affinity runs on (the first listed for a shared allocation)."""
    names = device_names(affinity)
    return names[0] if names else table.devices[0].name
