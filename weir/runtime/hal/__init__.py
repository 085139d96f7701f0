"""The HAL: buffers, views, semaphores, fences, command buffers, devices and drivers."""

from weir.runtime.hal.buffer import Allocator, Buffer
from weir.runtime.hal.buffer_view import BufferView
from weir.runtime.hal.command_buffer import CommandBuffer
from weir.runtime.hal.device import Device
from weir.runtime.hal.executable import Executable, ExecutableLoaderRegistry, LoaderInfo
from weir.runtime.hal.fence import Fence
from weir.runtime.hal.semaphore import Semaphore
from weir.runtime.hal.statistics import DeviceStatistics

__all__ = ["Allocator", "Buffer", "BufferView", "CommandBuffer", "Device", "DeviceStatistics",
           "Executable", "ExecutableLoaderRegistry", "Fence", "LoaderInfo", "Semaphore"]
