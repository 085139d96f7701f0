"""The driver registry: driver name -> factory. `Instance` owns one, built by
`default_driver_registry()`, so tests and embedders can register drivers without globals.

Registered by default: `local-sync` (inline on the caller's thread) and `local-task` (worker
threads, returns at once). An unknown name fails listing the available drivers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from weir.errors import LoadError
from weir.runtime.hal.device import Device
from weir.runtime.hal.drivers.local_sync import LocalSyncDevice, LocalSyncOptions
from weir.runtime.hal.drivers.local_task import LocalTaskDevice, LocalTaskOptions

# A factory receives the driver's options object (or None for defaults).
DeviceFactory = Callable[[Any], Device]


@dataclass(frozen=True)
class DriverInfo:
    name: str
    factory: DeviceFactory
    description: str = ""


class DriverRegistry:
    def __init__(self) -> None:
        self._drivers: dict[str, DriverInfo] = {}

    def register(self, info: DriverInfo) -> None:
        if info.name in self._drivers:
            raise ValueError(f"driver '{info.name}' is already registered")
        self._drivers[info.name] = info

    def names(self) -> tuple[str, ...]:
        return tuple(self._drivers)

    def create_device(self, name: str, options: Any = None) -> Device:
        # IREE spells devices `driver` or `driver://ordinal`; the ordinal is meaningless for local
        # drivers (every local device is the host).
        driver = name.split("://", 1)[0]
        info = self._drivers.get(driver)
        if info is None:
            raise LoadError(f"unknown device driver '{name}' (available: {', '.join(self._drivers)})")
        return info.factory(options)


def _local_sync(options: Any) -> Device:
    if options is not None and not isinstance(options, LocalSyncOptions):
        raise LoadError(f"local-sync takes LocalSyncOptions, got {type(options).__name__}")
    return LocalSyncDevice(options)


def _local_task(options: Any) -> Device:
    if options is not None and not isinstance(options, LocalTaskOptions):
        raise LoadError(f"local-task takes LocalTaskOptions, got {type(options).__name__}")
    return LocalTaskDevice(options)


def default_driver_registry() -> DriverRegistry:
    registry = DriverRegistry()
    registry.register(DriverInfo("local-sync", _local_sync,
                                 "runs queue operations inline on the caller's thread"))
    registry.register(DriverInfo("local-task", _local_task,
                                 "runs queue operations on worker threads as soon as their waits "
                                 "are met"))
    return registry
