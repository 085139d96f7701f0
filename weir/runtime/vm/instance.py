"""The VM instance: what every context of a process shares (driver and executable-loader
registries). It holds no per-context state, so one instance serves many threads."""

from __future__ import annotations

from typing import Any

from weir.runtime.executables import default_loader_registry
from weir.runtime.hal.device import Device
from weir.runtime.hal.drivers import DriverRegistry, default_driver_registry
from weir.runtime.hal.executable import ExecutableLoaderRegistry


class Instance:
    def __init__(self, drivers: DriverRegistry | None = None,
                 executable_loaders: ExecutableLoaderRegistry | None = None) -> None:
        self.drivers = drivers or default_driver_registry()
        self.executable_loaders = executable_loaders or default_loader_registry()

    def create_device(self, driver: str = "local-sync", options: Any = None) -> Device:
        """`driver` is a registered driver name (`local-sync`), optionally `name://ordinal`."""
        return self.drivers.create_device(driver, options)
