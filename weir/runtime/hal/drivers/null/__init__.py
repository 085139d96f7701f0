"""null: a driver skeleton (not registered; copy it to start a new driver)."""

from weir.runtime.hal.drivers.null.device import NullDevice

__all__ = ["NullDevice"]
