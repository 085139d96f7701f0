"""Exit contract of `global-optimization`: what the abi phase promised still holds (its passes
only rewrite values inside private bodies)."""

from __future__ import annotations

from weir.compiler.abi.verify import verify_abi as verify_global_optimization

__all__ = ["verify_global_optimization"]
