"""The runtime must load without the compiler or xDSL (DESIGN.md: they meet only in weir/format)."""

from __future__ import annotations

import subprocess
import sys

import pytest

FORBIDDEN = ("xdsl", "weir.compiler", "weir.ir", "weir.dialects")


def test_runtime_imports_neither_compiler_nor_xdsl() -> None:
    code = ("import sys, weir.runtime.api, weir.runtime.modules.hal, weir.format.module_file, "
            "weir.format.kernel_codec; "
            f"bad = [m for m in sys.modules if m.split('.')[0] == 'xdsl' or m.startswith({FORBIDDEN[1:]!r})]; "
            "print(bad); sys.exit(1 if bad else 0)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_python_api_imports_the_compiler_only_when_a_compiler_name_is_used() -> None:
    """Programs that only load compiled modules start without xDSL and the compiler; the first
    compiler name asked for imports them, and `from weir.api import ...` works as before."""
    code = ("import sys, weir.api as weir; "
            "before = [m for m in sys.modules if m.split('.')[0] == 'xdsl' or m.startswith('weir.compiler')]; "
            "options = weir.CompilerOptions(target_backends=('reference',)); "
            "from weir.api import compile_string; "
            "after = 'weir.compiler.api' in sys.modules and weir.compile_string is compile_string; "
            "print(before, after); sys.exit(0 if not before and after else 1)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_an_unknown_name_of_the_python_api_is_an_attribute_error() -> None:
    import weir.api
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        getattr(weir.api, "no_such_name")
