"""local-task: queue operations run on worker threads as soon as their waits are met."""

from weir.runtime.hal.drivers.local_task.device import LocalTaskDevice
from weir.runtime.hal.drivers.local_task.options import LocalTaskOptions

__all__ = ["LocalTaskDevice", "LocalTaskOptions"]
