"""How deeply a program's regions may nest, and the Python stack that nesting needs.

xDSL's parser, printer, verifier and walkers recurse about a dozen Python frames per level of
nested regions (an `scf.if` inside an `scf.if` ...), so Python's default limit of 1,000 frames
stopped programs at about 80 levels. Inside `deep_nesting()` the limit grows with the deepest
region the parser has entered (`enter_region`), and the passes that follow run under it; it
falls back when the last such scope ends. Regions may nest MAX_REGION_DEPTH levels: deeper
input is refused at the region that crosses it, because the C stack runs out before the frames
do (CPython 3.11 overflowed a main thread's 8 MiB at about 6,000 levels). Other nesting
(attributes, types, literals) keeps the default headroom above what the regions need, and stops
at the default depth with a located "input is nested too deeply" as before.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

MAX_REGION_DEPTH = 2_000
# Frames per level of regions: parsing takes about 12.5, more than any later step; doubled.
_FRAMES_PER_REGION = 25


class _RecursionBudget:
    """The one recursion limit of the interpreter, shared by every thread that compiles: raised
    while any scope needs it, restored when the last scope ends."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._scopes = 0
        self._base = 0

    def open(self) -> None:
        with self._lock:
            if self._scopes == 0:
                self._base = sys.getrecursionlimit()
            self._scopes += 1

    def close(self) -> None:
        with self._lock:
            self._scopes -= 1
            if self._scopes == 0:
                sys.setrecursionlimit(self._base)

    def reserve(self, depth: int) -> None:
        with self._lock:
            needed = self._base + depth * _FRAMES_PER_REGION
            if self._scopes and sys.getrecursionlimit() < needed:
                sys.setrecursionlimit(needed)


_BUDGET = _RecursionBudget()


@contextmanager
def deep_nesting() -> Iterator[None]:
    """Parse and process IR inside this: the recursion limit then follows the nesting of the
    regions parsed so far (scopes nest, and may be open in several threads at once)."""
    _BUDGET.open()
    try:
        yield
    finally:
        _BUDGET.close()


def enter_region(depth: int) -> str | None:
    """Called by the parser as it enters a region `depth` levels deep: why that is too deep, or
    None once the stack for it is reserved."""
    if depth > MAX_REGION_DEPTH:
        return (f"input is nested too deeply: regions nest more than {MAX_REGION_DEPTH} levels "
                f"here")
    _BUDGET.reserve(depth)
    return None
