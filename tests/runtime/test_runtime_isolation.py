"""The runtime must load without the compiler or xDSL (DESIGN.md: they meet only in weir/format)."""

from __future__ import annotations

import subprocess
import sys

FORBIDDEN = ("xdsl", "weir.compiler", "weir.ir", "weir.dialects")


def test_runtime_imports_neither_compiler_nor_xdsl() -> None:
    code = ("import sys, weir.runtime.api, weir.runtime.modules.hal, weir.format.module_file, "
            "weir.format.kernel_codec; "
            f"bad = [m for m in sys.modules if m.split('.')[0] == 'xdsl' or m.startswith({FORBIDDEN[1:]!r})]; "
            "print(bad); sys.exit(1 if bad else 0)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
