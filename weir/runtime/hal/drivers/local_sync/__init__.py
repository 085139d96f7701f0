"""local-sync: queue operations run inline on the caller's thread."""

from weir.runtime.hal.drivers.local_sync.device import LocalSyncDevice
from weir.runtime.hal.drivers.local_sync.options import LocalSyncOptions

__all__ = ["LocalSyncDevice", "LocalSyncOptions"]
