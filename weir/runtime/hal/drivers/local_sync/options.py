"""Options of the local-sync driver (an options object, never environment variables)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LocalSyncOptions:
    # local-sync runs queue operations on the caller's thread, so a wait fence nobody signals
    # would block forever; after this many seconds the operation fails with a clear error instead.
    wait_timeout_s: float = 600.0
