"""Every pass by its flag, for `weir-opt`. Built from the phase pipelines, so a pass listed in a
pipeline is automatically runnable on its own."""

from __future__ import annotations

from weir.compiler.pass_base import Pass
from weir.compiler.pipeline import PHASE_PIPELINE

PASSES: dict[str, Pass] = {p.flag: p for phase in PHASE_PIPELINE for p in phase.passes}
