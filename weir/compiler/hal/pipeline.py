"""Phase `hal`: executables translated per target; command buffers, fences, queue operations."""

from __future__ import annotations

from weir.compiler.hal.convert_stream_to_hal import ConvertStreamToHal
from weir.compiler.hal.translate_executables import TranslateExecutables
from weir.compiler.hal.verify import verify_hal
from weir.compiler.pass_base import Pass

PASSES: tuple[Pass, ...] = (
    # Serialise each executable per target; the host lowering then names binaries by ordinal.
    TranslateExecutables(),
    # Resources -> buffers, execute regions -> command buffers + queue submissions + fences.
    ConvertStreamToHal(),
)
VERIFY = verify_hal
