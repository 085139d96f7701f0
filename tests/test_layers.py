"""The rooms of the tree stay apart (DESIGN.md §2-3): xDSL is used only in weir/ir and
weir/dialects; the compiler never imports the runtime; the runtime never imports the compiler;
weir/format, which both share, imports neither."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "weir"
IMPORT = re.compile(r"^\s*(?:from|import)\s+([\w.]+)", re.M)


def _imports(folder: str) -> dict[Path, set[str]]:
    return {p: set(IMPORT.findall(p.read_text())) for p in (ROOT / folder).rglob("*.py")}


def _offenders(folder: str, forbidden: str) -> list[str]:
    return sorted(f"{p.relative_to(ROOT)} imports {m}" for p, mods in _imports(folder).items()
                  for m in mods if m == forbidden or m.startswith(forbidden + "."))


def test_xdsl_only_behind_weir_ir_and_dialects() -> None:
    for folder in ("compiler", "runtime", "format", "tools"):
        assert _offenders(folder, "xdsl") == []


def test_compiler_and_runtime_do_not_import_each_other() -> None:
    assert _offenders("compiler", "weir.runtime") == []
    assert _offenders("runtime", "weir.compiler") == []


def test_format_imports_neither_compiler_nor_runtime() -> None:
    """weir/format is what the two share, so it can depend on neither."""
    assert _offenders("format", "weir.compiler") == []
    assert _offenders("format", "weir.runtime") == []


def test_compiler_runtime_and_format_never_import_frontends_or_frameworks() -> None:
    """The frameworks are optional extras: only weir/frontends may import them."""
    for folder in ("compiler", "runtime", "format"):
        for forbidden in ("weir.frontends", "torch", "torch_mlir"):
            assert _offenders(folder, forbidden) == []
