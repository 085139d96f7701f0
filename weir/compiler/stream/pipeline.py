"""Phase `stream`: resources, allocation, and execution ordered by timepoints."""

from __future__ import annotations

from weir.compiler.pass_base import Pass
from weir.compiler.stream.convert_executables import ConvertExecutables
from weir.compiler.stream.convert_to_stream import ConvertToStream
from weir.compiler.stream.elide_transfers import ElideTransfers
from weir.compiler.stream.pack_transients import PackTransients
from weir.compiler.stream.schedule_execution import ScheduleExecution
from weir.compiler.stream.verify import verify_stream

PASSES: tuple[Pass, ...] = (
    # Executables first, so dispatches can name them.
    ConvertExecutables(),
    # Tensors become sized resources; dispatches become command sequences on timepoints, and
    # async.execute regions the timepoints their dependencies and their work give them.
    ConvertToStream(),
    # Devices that share memory use one allocation instead of copying between them.
    ElideTransfers(),
    # Dependent executes between two host synchronisation points become one command buffer,
    # once transfers are gone (an elided transfer no longer separates its two sides).
    ScheduleExecution(),
    # Each execute's transients then share one allocation, placed by their live ranges.
    PackTransients(),
)
VERIFY = verify_stream
